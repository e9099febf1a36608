"""Label budget: how many human-labelled cases give a kappa interval this narrow?

Formula, not simulation: the large-sample variance of Cohen's kappa (Fleiss, Cohen and
Everitt 1969) evaluated at the 2x2 table that a given kappa and prevalence imply, with both
labellers passing the same share ``P`` of cases:
``p_pass,pass = P² + κP(1-P)``, ``p_fail,fail = (1-P)² + κP(1-P)``, off-diagonals
``(1-κ)P(1-P)``. Then ``n = (2 z σ₁ / W)²`` where ``σ₁`` is the per-case standard error and
``W`` the full width of the interval. :func:`simulate_interval_width` checks it by
simulation (the tests do).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from calibration.metrics import kappa_from_confusion

__all__ = ["LabelPlan", "plan_sample_size", "simulate_interval_width"]


@dataclass(frozen=True)
class LabelPlan:
    """The answer to "how many labels do I need?" and what it assumed."""

    n: int
    kappa: float
    width: float
    prevalence: float
    confidence: float
    method: str = "Fleiss-Cohen-Everitt (1969) large-sample variance of kappa, binary labels"

    def describe(self) -> str:
        return (
            f"{self.n} labelled cases give a {self.confidence:.0%} interval about "
            f"{self.width:g} wide (±{self.width / 2:g}) around kappa {self.kappa:g} at a pass "
            f"rate of {self.prevalence:g} ({self.method})."
        )


def _cell_probabilities(kappa: float, prevalence: float) -> np.ndarray:
    p, q = prevalence, 1 - prevalence
    shared = p * q
    table = np.array(
        [
            [q * q + kappa * shared, (1 - kappa) * shared],
            [(1 - kappa) * shared, p * p + kappa * shared],
        ]
    )
    if np.any(table < 0):
        raise ValueError(f"kappa {kappa} is impossible at prevalence {prevalence}")
    return table


def kappa_variance_per_case(kappa: float, prevalence: float) -> float:
    """``n · Var(κ̂)`` from Fleiss, Cohen and Everitt (1969), Psychol. Bull. 72(5), eq. 13."""
    table = _cell_probabilities(kappa, prevalence)
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    p_e = float(rows @ cols)
    diagonal = sum(table[i, i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(2))
    off = sum(table[i, j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j)
    numerator = diagonal + (1 - kappa) ** 2 * off - (kappa - p_e * (1 - kappa)) ** 2
    return float(numerator / (1 - p_e) ** 2)


def plan_sample_size(
    kappa: float, width: float, *, prevalence: float = 0.5, confidence: float = 0.95
) -> LabelPlan:
    """Labelled cases needed for a ``confidence`` interval of total ``width`` around
    ``kappa`` when a share ``prevalence`` of cases pass (see the module docstring).

    Read: at kappa 0.6, width 0.2 and prevalence 0.5 about 250 cases; a skewed prevalence
    needs more, because chance agreement is then high and kappa is estimated less surely.
    """
    if not 0 < prevalence < 1:
        raise ValueError(f"prevalence must be strictly between 0 and 1, got {prevalence}")
    if not 0 < width < 2:
        raise ValueError(f"width must be between 0 and 2, got {width}")
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    variance = kappa_variance_per_case(kappa, prevalence)
    n = max(2, math.ceil((2 * z) ** 2 * variance / width**2))
    return LabelPlan(n, kappa, width, prevalence, confidence)


def simulate_interval_width(
    n: int,
    kappa: float,
    *,
    prevalence: float = 0.5,
    confidence: float = 0.95,
    n_simulations: int = 2000,
    seed: int = 0,
) -> float:
    """Width of the central ``confidence`` range of kappa over simulated label sets of n
    cases drawn from the table :func:`plan_sample_size` assumes."""
    rng = np.random.default_rng(seed)
    cells = _cell_probabilities(kappa, prevalence).ravel()
    draws = rng.multinomial(n, cells, size=n_simulations)
    values = np.array([kappa_from_confusion(d.reshape(2, 2)) for d in draws])
    values = values[np.isfinite(values)]
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(values, [alpha, 1 - alpha])
    return float(hi - lo)
