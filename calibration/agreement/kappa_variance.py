"""The large-sample variance of Cohen's kappa on two classes (Fleiss, Cohen and Everitt
1969) at the 2x2 table a kappa and the two raters' pass rates imply.

It sits with the agreement coefficients because the label plan
(:mod:`calibration.decisions.plan`, re-exported there) uses it; the interval of an
observed table (:func:`calibration.agreement.small_sample.fce_kappa_interval`) takes the
same variance from statsmodels, for any number of classes and weights.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["cell_probabilities", "kappa_variance_per_case", "weighted_kappa_variance"]


def cell_probabilities(kappa: float, human_rate: float, judge_rate: float) -> np.ndarray:
    """The 2x2 table (rows human fail/pass, columns judge fail/pass) with these margins and
    this kappa (see :mod:`calibration.decisions.plan`'s docstring); ``ValueError`` when no such table exists."""
    for name, rate in (("human rate", human_rate), ("judge rate", judge_rate)):
        if not 0 < rate < 1:
            raise ValueError(f"{name} must be strictly between 0 and 1, got {rate}")
    h, j = human_rate, judge_rate
    chance = h * j + (1 - h) * (1 - j)
    d = kappa * (1 - chance) / 2
    table = np.array([[(1 - h) * (1 - j) + d, (1 - h) * j - d], [h * (1 - j) - d, h * j + d]])
    if np.any(table < -1e-12):
        highest = 2 * min(h * (1 - j), (1 - h) * j) / (1 - chance)
        lowest = -2 * min(h * j, (1 - h) * (1 - j)) / (1 - chance)
        raise ValueError(
            f"kappa {kappa:g} is impossible when people pass {h:g} and the judge {j:g} of "
            f"cases: it lies between {lowest:.3f} and {highest:.3f}"
        )
    return np.clip(table, 0.0, None)


def kappa_variance_per_case(kappa: float, human_rate: float, judge_rate: float) -> float:
    """``n · Var(κ̂)`` from Fleiss, Cohen and Everitt (1969), Psychol. Bull. 72(5), eq. 13."""
    table = cell_probabilities(kappa, human_rate, judge_rate)
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    p_e = float(rows @ cols)
    diagonal = sum(table[i, i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(2))
    off = sum(table[i, j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j)
    numerator = diagonal + (1 - kappa) ** 2 * off - (kappa - p_e * (1 - kappa)) ** 2
    return float(numerator / (1 - p_e) ** 2)


def weighted_kappa_variance(matrix: np.ndarray, disagreement: np.ndarray) -> tuple[float, float]:
    """``(κ̂_w, Var(κ̂_w))``: weighted kappa of a confusion table and its Fleiss, Cohen and
    Everitt (1969) large-sample variance, for disagreement weights ``d`` on [0, 1]
    (``1 - I``: unweighted). With ``p`` the cell shares, ``a = 1 - d`` the agreement
    weights, ``r``/``c`` the row/column shares, ``ā_i· = Σ_j c_j a_ij``,
    ``ā_·j = Σ_i r_i a_ij`` and ``P_e = Σ a r c``:

    ``Var = (Σ p_ij (a_ij - (ā_i· + ā_·j)(1 - κ))² - (κ - P_e (1 - κ))²) / (n (1 - P_e)²)``.

    ``statsmodels.stats.inter_rater.cohens_kappa(table, weights=d).var_kappa`` computes
    the same (the tests check it to 1e-12); here without the tests it also runs, which
    cost 20 times the variance at every bootstrapped interval. ``(nan, nan)`` when kappa
    is undefined."""
    n = float(matrix.sum())
    p, a = matrix / n, 1.0 - disagreement
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    chance = float((a * np.outer(rows, cols)).sum())
    expected = float((disagreement * np.outer(rows, cols)).sum())
    if n == 0 or expected <= 0:  # one class each side: kappa undefined
        return (math.nan, math.nan)
    kappa = 1 - float((disagreement * p).sum()) / expected
    a_row, a_col = a @ cols, rows @ a
    spread = (p * (a - (a_row[:, None] + a_col[None, :]) * (1 - kappa)) ** 2).sum()
    variance = (spread - (kappa - chance * (1 - kappa)) ** 2) / (n * (1 - chance) ** 2)
    return kappa, float(variance)
