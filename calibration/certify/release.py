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

Interval: each share's own 95% interval, never narrower than its labels allow, then the
two joined as independent halves: ``θ - sqrt((w_D l_D)² + (w_E l_E)²)`` to
``θ + sqrt((w_D u_D)² + (w_E u_E)²)``, ``l`` and ``u`` each share's distance from its
estimate to its interval's ends, clipped to [0, 1]. With symmetric normal intervals that is
``θ ± 1.96 sqrt(w_D² se_D² + w_E² se_E²)``; with one share it is that share's interval.

- The decided share's interval is PPI++'s with the judge's errors read from a Dirichlet
  posterior of the labelled pairs (:func:`calibration.estimates.ppi_intervals.posterior_ppi_interval`),
  widened to Wilson's interval of the people's labels alone under 30 labelled decided
  cases (:func:`calibration.estimates.ppi_intervals.guarded`): two labelled cases that
  agree say little, and a normal interval of width 0 would claim they say everything.
- The escalated share's, when sampled: the normal interval with the finite-population
  correction, widened the same way to Wilson's under 30 labels or when they do not vary.
  ``ci95_note`` says when either was widened.

Assumes the labelled cases are a random sample of each share. Reference: Angelopoulos,
Duchi and Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference", arXiv:2311.01453;
Wilson (1927).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from calibration.estimates.ppi import classical_mean, ppi_mean
from calibration.estimates.ppi_intervals import UNIT, guarded, posterior_ppi_interval
from calibration.inference.intervals import normal_interval, wilson_interval

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
    parts, notes, decided_ci = [], [], None
    if decided is not None:
        decided_ci, note = _decided_interval(y, f, fu, decided)
        parts.append((w_d, decided.estimate, decided_ci))
        notes += [f"decided share {note}"] if note else []
    if escalated_total and not exact:
        ci, note = _escalated_interval(e, escalated)
        parts.append((w_e, escalated[0], ci))
        notes += [f"escalated share {note}"] if note else []
    lower = math.sqrt(sum((w * max(0.0, est - ci[0])) ** 2 for w, est, ci in parts))
    upper = math.sqrt(sum((w * max(0.0, ci[1] - est)) ** 2 for w, est, ci in parts))
    out = {
        "estimate": theta,
        "ci95": [max(0.0, theta - lower), min(1.0, theta + upper)],
        "decided_share": w_d,
        "decided": None if decided is None else _decided(decided, f, decided_ci),
        "escalated": {
            "estimate": escalated[0] if escalated_total else None,
            "labelled": len(e),
            "total": escalated_total,
            "exact": exact,
        },
        "method": METHOD,
    }
    if notes:
        out["ci95_note"] = "; ".join(notes)
    return out


def _decided_interval(y, f, fu, est: Any) -> tuple[tuple[float, float], str | None]:
    """The decided share's 95% interval (module docstring) and why it was widened."""
    ci = posterior_ppi_interval(y, f, fu, est.lam, [0.0, 1.0]) or est.ci
    labelled = wilson_interval(int(y.sum()), len(y))
    widened, note = guarded(ci, labelled, len(y), UNIT)
    return widened or labelled, note


def _escalated_interval(e: np.ndarray, escalated: tuple[float, float]):
    """The sampled escalated share's 95% interval and why it was widened."""
    mean, se = escalated
    normal = normal_interval(mean, se) if se > 0 else (mean, mean)
    labelled = wilson_interval(int(e.sum()), len(e))
    widened, note = guarded(normal, labelled, len(e), UNIT)
    return widened or labelled, note


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


def _decided(est: Any, f: np.ndarray, ci: tuple[float, float] | None) -> dict[str, Any]:
    return {
        "estimate": est.estimate,
        "ci95": list(ci) if ci is not None else None,
        "verdicts_labelled": float(f.mean()) if len(f) else None,
        "labelled": est.n_labelled,
        "unlabelled": est.n_unlabelled,
        "lambda": est.lam,
    }


def _none(reason: str) -> dict[str, Any]:
    return {"estimate": None, "ci95": None, "reason": reason, "method": METHOD}
