"""How much a panel of judges agrees, and how many independent votes it is worth.

Inputs are tables with one row per case and one column per juror; ``None`` marks a juror
that gave no vote on that case (a failure). Pure functions: no I/O, no printing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.metrics import cohen_kappa_score

from calibration.agreement.effective_votes import (
    N_EFF_METHOD,
    effective_votes,
    kish_n_eff,
    mean_pairwise_correlation,
)
from calibration.agreement.multirater import category_counts, krippendorff_alpha
from calibration.agreement.small_sample import Interval, alpha_interval

__all__ = ["kish_n_eff", "mean_pairwise_correlation", "pairwise_kappa", "panel_agreement"]


def pairwise_kappa(
    labels: Sequence[Sequence[Any]] | np.ndarray, names: Sequence[str]
) -> dict[str, dict[str, float | None]]:
    """Cohen's kappa (scikit-learn's) of every pair of jurors on the cases both labelled:
    a symmetric matrix, 1 on the diagonal, ``None`` where undefined (a pair with no
    common case, or with one label only)."""
    table = np.asarray(labels, dtype=object)
    out: dict[str, dict[str, float | None]] = {n: {} for n in names}
    for a, name_a in enumerate(names):
        for b, name_b in enumerate(names):
            out[name_a][name_b] = 1.0 if a == b else _kappa(table[:, a], table[:, b])
    return out


def _kappa(x: np.ndarray, y: np.ndarray) -> float | None:
    both = [(p, q) for p, q in zip(x, y, strict=True) if p is not None and q is not None]
    if not both or len({v for pair in both for v in pair}) < 2:
        return None
    value = cohen_kappa_score([str(p) for p, _ in both], [str(q) for _, q in both])
    return None if math.isnan(value) else round(float(value), 6)


def panel_agreement(
    labels: Sequence[Sequence[Any]],
    scores: Sequence[Sequence[float | None]],
    names: Sequence[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Agreement among a panel's jurors: Krippendorff's alpha (nominal, on labels) with a
    95% percentile bootstrap interval over cases, the pairwise Cohen's kappa matrix, the
    share of cases every juror voted on with one label, and Kish's effective number of
    votes from the mean pairwise correlation of the jurors' scores (``n_eff_verdicts``,
    with a bootstrap interval: :mod:`calibration.agreement.effective_votes`; ``n_eff`` is
    the same figure under its old name).
    Undefined figures are ``None`` (all of them for no case: a cyclic panel without an
    overlap, an escalating one that escalated nothing)."""
    if len(labels) == 0:
        return _no_cases(names)
    table = np.asarray(labels, dtype=object)
    complete = [row for row in table if all(v is not None for v in row)]
    votes = effective_votes(scores, n_boot=n_boot, seed=seed)
    interval = (
        alpha_interval(
            _alpha_bootstrap(table, n_boot=n_boot, seed=seed), category_counts(table, None)
        )
        if n_boot >= 1
        else Interval(None, "not asked (n_boot 0)")
    )
    return {
        "jurors": list(names),
        "cases": len(table),
        "krippendorff_alpha": _finite(krippendorff_alpha(table, level="nominal")),
        "krippendorff_alpha_ci95": (
            None if interval.ci is None else [round(b, 6) for b in interval.ci]
        ),
        "krippendorff_alpha_ci95_method": interval.method,
        "krippendorff_alpha_ci95_reason": interval.reason,
        "pairwise_kappa": pairwise_kappa(table, names),
        "unanimous_share": (
            round(sum(len(set(r)) == 1 for r in complete) / len(complete), 6) if complete else None
        ),
        "unanimous_of": len(complete),
        "mean_pairwise_correlation": votes["mean_correlation"],
        **_verdict_n_eff(votes),
    }


def _verdict_n_eff(votes: dict[str, Any]) -> dict[str, Any]:
    """The verdicts' n_eff under its own name, and ``n_eff``, the same figure under the
    name it had (kept readable; with human labels gates read the errors' figure)."""
    return {
        "n_eff": votes["n_eff"],
        "n_eff_verdicts": votes["n_eff"],
        "n_eff_verdicts_ci95": votes["n_eff_ci95"],
        "n_eff_verdicts_bias": votes["n_eff_bias"],
        "n_eff_verdicts_note": votes["n_eff_note"],
        "n_eff_verdicts_ci95_reason": votes.get("n_eff_ci95_reason"),
        "n_eff_formula": N_EFF_METHOD,
        "n_eff_of": "the correlation of the jurors' verdicts (scores), not of their errors",
    }


def _no_cases(names: Sequence[str]) -> dict[str, Any]:
    none: dict[str, float | None] = {n: None for n in names}
    return {
        "jurors": list(names),
        "cases": 0,
        "krippendorff_alpha": None,
        "krippendorff_alpha_ci95": None,
        "krippendorff_alpha_ci95_method": None,
        "krippendorff_alpha_ci95_reason": "no case",
        "pairwise_kappa": {n: {**none, n: 1.0} for n in names},
        "unanimous_share": None,
        "unanimous_of": 0,
        "mean_pairwise_correlation": None,
        **_verdict_n_eff(
            {"n_eff": None, "n_eff_ci95": None, "n_eff_bias": None, "n_eff_note": None}
        ),
    }


def _alpha_bootstrap(table: np.ndarray, *, n_boot: int, seed: int) -> list[float] | None:
    """95% percentile bootstrap of alpha, resampling cases (Hayes and Krippendorff 2007
    resample pairable values; cases are the unit here, as for the other intervals); None
    where it is undefined (then :func:`alpha_interval` gives the exact interval)."""
    if len(table) < 2 or n_boot < 1:
        return None
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        value = krippendorff_alpha(table[rng.integers(0, len(table), len(table))])
        if not math.isnan(value):
            draws.append(value)
    if len(draws) < n_boot / 2:
        return None
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return [round(float(lo), 6), round(float(hi), 6)]


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else round(float(value), 6)
