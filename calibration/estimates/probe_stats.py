"""The figures of a bias probe's report: rates, paired changes and gaps with their intervals.

Pure functions returning JSON-ready fields, shared by the probes in ``judge.probes``. The
rule throughout: a figure computed from nothing is ``None`` (null in the report), never 0;
every rate ``x`` comes with ``x_ci95`` (Wilson 95% interval, :func:`wilson_interval`) and
every mean or gap with its t interval (:mod:`calibration.inference.means`).

A probe that judges one pair twice (the position probe: both orders) gets figures over
pairs, never over verdicts as if the two were independent: a sign test over the pairs
that lean one way (:func:`sign_test_fields`) and a pair (cluster) bootstrap for a rate
of verdicts (:func:`pair_rate_fields`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from calibration.inference.intervals import (
    DEFAULT_RESAMPLES,
    binomial_test_p,
    bootstrap_indices_ci,
    normal_quantile,
    sign_test_p,
    t_quantile,
    wilson_interval,
)
from calibration.inference.means import (
    ZERO_CHANGE,
    mean_interval,
    welch_interval,
    welch_p_value,
    wilcoxon_p_value,
)

__all__ = [
    "binomial_p",
    "difference_fields",
    "effective_wilson_interval",
    "pair_rate_fields",
    "pair_rate_interval",
    "paired_change",
    "rate_fields",
    "sign_test_fields",
    "wilcoxon_p",
]


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


def sign_test_fields(name: str, leaning: Sequence[int] | np.ndarray) -> dict[str, Any]:
    """``{name_pairs_up, name_pairs_down, name_p_value}``: a sign test over pairs.

    ``leaning[i]`` says which way pair i leans (any number: its sign counts; 0 = neither).
    Under "no preference" each pair that leans is a fair coin between up and down, so the
    p-value is the exact two-sided sign test of the ups among the pairs that lean
    (:func:`calibration.compare.runs.sign_test_p`); 1.0 when none leans, ``None`` with no
    pairs. A pair's two verdicts are one observation, never two.

    Reference: Dixon and Mood (1946), JASA 41(236).
    """
    signs = np.sign(np.asarray(leaning, dtype=float))
    up, down = int((signs > 0).sum()), int((signs < 0).sum())
    p = sign_test_p(up, down) if len(signs) else None
    return {f"{name}_pairs_up": up, f"{name}_pairs_down": down, f"{name}_p_value": p}


def pair_rate_interval(
    hits: Sequence[int] | np.ndarray,
    trials: Sequence[int] | np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Interval of ``Σ hits / Σ trials`` when pair i contributes ``hits[i]`` of its
    ``trials[i]`` verdicts: the hull of a seeded percentile bootstrap over pairs (each
    resample draws whole pairs, so the verdicts of one pair stay together) and the Wilson
    interval at the verdicts' effective number (:func:`effective_wilson_interval`).

    The bootstrap alone covered 0.67-0.93 at 5-20 pairs: a resample of 5 pairs holds 3
    or 4 distinct ones. Where every resample gives the same rate (every pair contributes
    alike, e.g. one win of two verdicts in each of a consistent judge's pairs) it has
    nothing to say about pairs not seen, and the Wilson interval stands alone.
    ``(nan, nan)`` with no trials.

    Reference: Davison and Hinkley (1997), Bootstrap Methods and their Application,
    sec. 3.8 (resampling clusters); Field and Welsh (2007), JRSS B 69(3).
    """
    k = np.asarray(hits, dtype=float)
    t = np.asarray(trials, dtype=float)
    total = float(t.sum())
    if total == 0:
        return (float("nan"), float("nan"))

    def rate(idx: np.ndarray) -> float:
        down = float(t[idx].sum())
        return float(k[idx].sum()) / down if down else float("nan")

    lo, hi = bootstrap_indices_ci(
        len(k), rate, n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    score = effective_wilson_interval(k, t, confidence=confidence)
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo < 1e-12:
        return score
    return (min(lo, score[0]), max(hi, score[1]))


def effective_wilson_interval(
    hits: Sequence[int] | np.ndarray,
    trials: Sequence[int] | np.ndarray,
    *,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Wilson interval of ``p = Σ hits / Σ trials`` at the effective number of verdicts
    when they come in clusters (pairs): ``n_eff = p(1 - p) / V``, with ``V`` the
    cluster-robust (linearised ratio) variance over the ``m`` clusters with a trial,

    ``V = m/(m - 1) · Σ (hitsᵢ - p·trialsᵢ)² / (Σ trials)²``,

    at least ``m`` (each cluster one verdict's worth; more where a pair's two verdicts
    pull apart, as a consistent judge's one win in two does); ``n_eff = m`` when ``p`` is
    0 or 1 or ``m < 2``, ``Σ trials`` when every cluster sits at the rate. Then Wilson's
    ``(p + q²/2n ± q·sqrt(p(1-p)/n + q²/4n²)) / (1 + q²/n)`` at ``n = n_eff`` (it need
    not be whole) with Student's quantile ``q = t(1-α/2; m-1)`` (the normal one below 2
    clusters): the variance rests on ``m`` clusters, as Korn and Graubard's degrees of
    freedom say. Read it as Wilson's interval with the verdicts discounted by the design
    effect of their pairs. ``(nan, nan)`` with no trials.

    Reference: Korn and Graubard (1998), Survey Methodology 24(2) (an interval of a
    proportion at an effective sample size); Kish (1965), Survey Sampling (the design
    effect); Wilson (1927).
    """
    k = np.asarray(hits, dtype=float)
    t = np.asarray(trials, dtype=float)
    total = float(t.sum())
    if total == 0:
        return (float("nan"), float("nan"))
    p = float(k.sum()) / total
    m = int((t > 0).sum())
    spread = float(((k - p * t) ** 2).sum())
    n_eff = float(m)
    if 0 < p < 1 and m >= 2 and spread > 0:
        variance = m / (m - 1) * spread / total**2
        n_eff = max(float(m), p * (1 - p) / variance)
    elif 0 < p < 1 and m >= 2:  # every cluster at the rate: no spread, the verdicts' n
        n_eff = total
    z = t_quantile(confidence, m - 1) if m >= 2 else normal_quantile(confidence)
    centre = (p + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff**2)) / (1 + z * z / n_eff)
    low = 0.0 if p == 0 else max(0.0, centre - half)
    high = 1.0 if p == 1 else min(1.0, centre + half)
    return (low, high)


def pair_rate_fields(
    name: str, hits: Sequence[int] | np.ndarray, trials: Sequence[int] | np.ndarray
) -> dict[str, Any]:
    """``{name: Σ hits / Σ trials, name_ci95: pair bootstrap}`` (:func:`pair_rate_interval`);
    both ``None`` when there are no trials."""
    total = int(np.sum(trials))
    if total == 0:
        return {name: None, f"{name}_ci95": None}
    return {name: int(np.sum(hits)) / total, f"{name}_ci95": list(pair_rate_interval(hits, trials))}


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
