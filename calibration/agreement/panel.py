"""How much a panel of judges agrees, and how many independent votes it is worth.

Inputs are tables with one row per case and one column per juror; ``None`` marks a juror
that gave no vote on that case (a failure). Pure functions: no I/O, no printing.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.metrics import cohen_kappa_score

from calibration.agreement.multirater import category_counts, krippendorff_alpha
from calibration.agreement.small_sample import Interval, alpha_interval

__all__ = ["kish_n_eff", "mean_pairwise_correlation", "pairwise_kappa", "panel_agreement"]


def kish_n_eff(k: int, rho_bar: float) -> float:
    """Kish's effective number of independent votes among ``k`` equally correlated ones.

    Formula: ``n_eff = k / (1 + (k - 1) * rho_bar)``, the design effect of a cluster of
    ``k`` observations with intra-cluster correlation ``rho_bar`` (here the jurors' mean
    pairwise correlation). Read: ``k`` when the jurors are uncorrelated, 1 when they are
    perfectly correlated (one vote, asked ``k`` times); above ``k`` for negative ``rho_bar``.
    Undefined (``nan``) when ``rho_bar`` is.

    Reference: Kish (1965), *Survey Sampling*, Wiley, ch. 5 (the design effect
    ``1 + (m - 1) rho``); applied to LLM juries in arXiv 2605.29800.
    """
    if k < 1:
        raise ValueError(f"a panel needs at least one juror, got k={k}")
    if math.isnan(rho_bar):
        return float("nan")
    return k / (1 + (k - 1) * rho_bar)


def mean_pairwise_correlation(scores: Sequence[Sequence[float | None]]) -> float:
    """The mean over juror pairs of the Pearson correlation of their scores, each pair on
    the cases both scored; a pair where either side is constant is left out. ``nan`` when
    no pair has a correlation."""
    table = _numeric(scores)
    values = []
    for a, b in itertools.combinations(range(table.shape[1]), 2):
        both = ~np.isnan(table[:, a]) & ~np.isnan(table[:, b])
        x, y = table[both, a], table[both, b]
        if len(x) >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
            values.append(float(np.corrcoef(x, y)[0, 1]))
    return float(np.mean(values)) if values else float("nan")


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
    votes from the mean pairwise correlation of the jurors' scores (:func:`kish_n_eff`).
    Undefined figures are ``None`` (all of them for no case: a cyclic panel without an
    overlap, an escalating one that escalated nothing)."""
    if len(labels) == 0:
        return _no_cases(names)
    table = np.asarray(labels, dtype=object)
    k = len(names)
    complete = [row for row in table if all(v is not None for v in row)]
    rho = mean_pairwise_correlation(scores)
    n_eff = kish_n_eff(k, rho)
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
        "mean_pairwise_correlation": _finite(rho),
        "n_eff": _finite(n_eff),
        "n_eff_formula": "k / (1 + (k - 1) * rho_bar)  (Kish 1965)",
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
        "n_eff": None,
        "n_eff_formula": "k / (1 + (k - 1) * rho_bar)  (Kish 1965)",
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


def _numeric(scores: Sequence[Sequence[float | None]]) -> np.ndarray:
    return np.asarray(
        [[np.nan if v is None else float(v) for v in row] for row in scores], dtype=float
    ).reshape(len(scores), -1)


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else round(float(value), 6)
