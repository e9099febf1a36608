"""One number for a release after a cascade: the pass rate over every case, the decided
cases counted by their verdicts and the escalated ones by people's labels.

``θ = w_D · θ_D + w_E · θ_E`` with ``w_D``, ``w_E`` the shares of cases decided and
escalated (known exactly: every case went through the cascade), ``θ_D`` the people's pass
rate on the decided cases and ``θ_E`` on the escalated ones.

- ``θ_D``: the verdicts of the decided cases, corrected by PPI++
  (:func:`calibration.estimates.ppi.ppi_mean`) from the decided cases people labelled, a
  random sample of them: ``mean_unlabelled(λ f) + mean_labelled(y - λ f)`` with its CLT
  standard error. A certificate bounds how often the decided verdicts disagree with
  people; the correction also removes the direction of that disagreement from the rate.
- ``θ_E``: exact (standard error 0) when people labelled every escalated case, as the
  cascade intends; otherwise the mean of those labelled, as a random sample of them, with
  its standard error (and the result says it is sampled).

Interval: ``θ ± 1.96 sqrt(w_D² se_D² + w_E² se_E²)``, clipped to [0, 1]. Assumes the
labelled cases are a random sample of each share. Reference: Angelopoulos, Duchi and Zrnic
(2023), "PPI++: Efficient Prediction-Powered Inference", arXiv:2311.01453.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from calibration.estimates.ppi import classical_mean, ppi_mean
from calibration.inference.intervals import normal_interval

__all__ = ["release_pass_rate"]

METHOD = (
    "decided cases: their verdicts corrected by PPI++ from the labelled ones; escalated "
    "cases: people's labels"
)


def release_pass_rate(
    decided_judge: ArrayLike,
    decided_human: ArrayLike,
    decided_unlabelled: ArrayLike,
    escalated_human: ArrayLike,
    *,
    escalated_total: int,
) -> dict[str, Any]:
    """The release pass rate after a cascade, with its 95% interval (module docstring).

    ``decided_judge``, ``decided_human``: 0/1 pass of the judge's verdict and of the
    people's label on the decided cases people labelled; ``decided_unlabelled``: the
    verdicts' 0/1 pass on the decided cases nobody labelled; ``escalated_human``: the
    people's 0/1 pass on the escalated cases they labelled, of ``escalated_total``.
    ``estimate`` is ``None``, with a ``reason``, when the labels do not allow it.
    """
    f, y, fu = (
        np.asarray(a, dtype=float) for a in (decided_judge, decided_human, decided_unlabelled)
    )
    e = np.asarray(escalated_human, dtype=float)
    n_decided = len(y) + len(fu)
    total = n_decided + escalated_total
    if total == 0:
        return _none("no cases")
    if n_decided and len(y) < 2:
        return _none(f"{len(y)} labelled decided case(s): PPI++ needs at least 2")
    if escalated_total and len(e) == 0:
        return _none(f"none of the {escalated_total} escalated cases is labelled")
    w_d, w_e = n_decided / total, escalated_total / total
    decided = ppi_mean(y, f, fu) if n_decided else None
    escalated, exact = _escalated(e, escalated_total)
    theta = w_d * (decided.estimate if decided else 0.0) + w_e * escalated[0]
    se = math.sqrt((w_d * (decided.std_error if decided else 0.0)) ** 2 + (w_e * escalated[1]) ** 2)
    lo, hi = normal_interval(theta, se) if se > 0 else (theta, theta)
    return {
        "estimate": theta,
        "ci95": [max(0.0, lo), min(1.0, hi)],
        "decided_share": w_d,
        "decided": None if decided is None else _decided(decided, f),
        "escalated": {
            "estimate": escalated[0] if escalated_total else None,
            "labelled": len(e),
            "total": escalated_total,
            "exact": exact,
        },
        "method": METHOD,
    }


def _escalated(e: np.ndarray, total: int) -> tuple[tuple[float, float], bool]:
    """(mean, standard error) of the escalated share, and whether it is exact."""
    if total == 0:
        return (0.0, 0.0), True
    if len(e) >= total:
        return (float(e.mean()), 0.0), True
    sampled = classical_mean(e)
    se = sampled.std_error if math.isfinite(sampled.std_error) else 0.5
    # finite-population correction: the labelled ones are part of the escalated share
    return (sampled.estimate, se * math.sqrt(max(0.0, 1 - len(e) / total))), False


def _decided(est: Any, f: np.ndarray) -> dict[str, Any]:
    return {
        "estimate": est.estimate,
        "ci95": list(est.ci) if est.ci is not None else None,
        "verdicts_labelled": float(f.mean()) if len(f) else None,
        "labelled": est.n_labelled,
        "unlabelled": est.n_unlabelled,
        "lambda": est.lam,
    }


def _none(reason: str) -> dict[str, Any]:
    return {"estimate": None, "ci95": None, "reason": reason, "method": METHOD}
