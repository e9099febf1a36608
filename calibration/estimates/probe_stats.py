"""The figures of a bias probe's report: rates, paired changes and gaps with their intervals.

Pure functions returning JSON-ready fields, shared by the probes in ``judge.probes``. The
rule throughout: a figure computed from nothing is ``None`` (null in the report), never 0;
every rate ``x`` comes with ``x_ci95`` (Wilson 95% interval, :func:`wilson_interval`) and
every mean or gap with its t interval (:mod:`calibration.inference.means`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from calibration.inference.intervals import binomial_test_p, wilson_interval
from calibration.inference.means import (
    ZERO_CHANGE,
    mean_interval,
    welch_interval,
    welch_p_value,
    wilcoxon_p_value,
)

__all__ = ["binomial_p", "difference_fields", "paired_change", "rate_fields", "wilcoxon_p"]


def _or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def rate_fields(name: str, k: int, n: int) -> dict[str, Any]:
    """``{name: k/n, name_ci95: [lo, hi]}`` with the Wilson interval; both ``None`` when
    ``n`` is 0 (nothing observed)."""
    if n == 0:
        return {name: None, f"{name}_ci95": None}
    return {name: k / n, f"{name}_ci95": list(wilson_interval(k, n))}


def binomial_p(k: int, n: int, p: float = 0.5) -> float | None:
    """Exact two-sided binomial test p-value of ``k`` in ``n`` against rate ``p``
    (:func:`binomial_test_p`); ``None`` when ``n`` is 0."""
    return None if n == 0 else binomial_test_p(k, n, p)


def wilcoxon_p(diffs: Sequence[float] | np.ndarray) -> float | None:
    """Wilcoxon signed-rank p-value of paired changes (:func:`wilcoxon_p_value`); ``None``
    when every change is 0."""
    return _or_none(wilcoxon_p_value(diffs))


def paired_change(before: Sequence[float], after: Sequence[float]) -> dict[str, Any]:
    """How ``after`` moved from ``before``, case by case.

    ``mean_score_change`` = mean of ``after - before`` with its t interval (``None`` below
    two cases); ``raised``/``lowered``/``unchanged`` counts (a change within 1e-12 is
    none) and the shares raised and lowered with Wilson intervals; the Wilcoxon
    signed-rank p-value (``None`` when nothing changed). A mean change near 0 with large
    shares both ways says the judge is noisy rather than biased one way.
    """
    diffs = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    n = len(diffs)
    raised = int((diffs > ZERO_CHANGE).sum())
    lowered = int((diffs < -ZERO_CHANGE).sum())
    out: dict[str, Any] = {"n": n, "mean_score_change": float(diffs.mean()) if n else None}
    out["mean_score_change_ci95"] = list(mean_interval(diffs)) if n >= 2 else None
    out["raised"], out["lowered"], out["unchanged"] = raised, lowered, n - raised - lowered
    out.update(rate_fields("share_raised", raised, n))
    out.update(rate_fields("share_lowered", lowered, n))
    out["wilcoxon_p_value"] = wilcoxon_p(diffs)
    return out


def difference_fields(name: str, a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """``{name: mean(a) - mean(b), name_ci95: Welch interval, name_p_value: Welch test}``.

    The difference is ``None`` when either side is empty; the interval below two values a
    side, and the p-value also when no value varies.
    """
    defined = len(a) > 0 and len(b) > 0
    lo, hi = welch_interval(a, b)
    return {
        name: float(np.mean(a) - np.mean(b)) if defined else None,
        f"{name}_ci95": [lo, hi] if math.isfinite(lo) else None,
        f"{name}_p_value": _or_none(welch_p_value(a, b)),
    }
