"""Label budget: how many human-labelled cases give a kappa interval this narrow?

Formula, not simulation: the large-sample variance of Cohen's kappa (Fleiss, Cohen and
Everitt 1969) evaluated at the 2x2 table that a kappa and the two raters' pass rates imply.
With people passing a share ``H`` of cases and the judge a share ``J``, chance agreement is
``p_e = HJ + (1-H)(1-J)`` and the observed agreement ``p_o = p_e + κ(1 - p_e)``; with the
margins fixed every cell moves by the same ``d = κ(1 - p_e)/2`` from independence:
``p_pass,pass = HJ + d``, ``p_fail,fail = (1-H)(1-J) + d``, ``p_pass,fail = H(1-J) - d``,
``p_fail,pass = (1-H)J - d`` (rows human, columns judge). Then ``n = (2 z σ₁ / W)²`` where
``σ₁² = n·Var(κ̂)`` and ``W`` is the full width of the interval.

The two rates matter: a judge that passes 88% of cases while people pass 33% (FaithBench)
has an interval about 0.06 wide at n = 750, where assuming both pass at one shared rate
predicts 0.145 and so asks for several times the labels. Plan from the rates you observe
(``judge calibrate --plan JUDGE HUMAN``) or expect (``--judge-rate``, ``--human-rate``).
:func:`simulate_interval_width` and the tests' bootstrap check the formula.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from calibration.agreement.kappa_variance import cell_probabilities, kappa_variance_per_case
from calibration.agreement.metrics import kappa_from_confusion
from calibration.inference.intervals import normal_quantile

__all__ = [
    "LabelPlan",
    "cell_probabilities",
    "exact_floor",
    "kappa_variance_per_case",
    "plan_sample_size",
    "predicted_width",
    "simulate_interval_width",
]

METHOD = "Fleiss-Cohen-Everitt (1969) large-sample variance of kappa, binary labels"


@dataclass(frozen=True)
class LabelPlan:
    """The answer to "how many labels do I need?" and what it assumed."""

    n: int
    kappa: float
    width: float
    human_rate: float
    judge_rate: float
    confidence: float
    method: str = METHOD
    floor: int | None = None  # set when the exact floor, not the formula, decided n

    @property
    def prevalence(self) -> float:
        """The human pass rate (the name the single-rate plan used)."""
        return self.human_rate

    def describe(self) -> str:
        rates = (
            f"a pass rate of {self.human_rate:g} for both raters"
            if self.human_rate == self.judge_rate
            else f"people passing {self.human_rate:.3g} and the judge {self.judge_rate:.3g} "
            "of cases"
        )
        text = (
            f"{self.n} labelled cases give a {self.confidence:.0%} interval about "
            f"{self.width:g} wide (±{self.width / 2:g}) around kappa {self.kappa:.3g} at "
            f"{rates} ({self.method})."
        )
        if self.floor is not None:
            text += (
                f" The formula alone asks for fewer; {self.floor} is the fewest whose "
                "exact interval can be that narrow even at perfect agreement."
            )
        return text


def predicted_width(
    n: int, kappa: float, *, human_rate: float, judge_rate: float, confidence: float = 0.95
) -> float:
    """Full width of the ``confidence`` interval of kappa that ``n`` labelled cases give:
    the large-sample width, and never less than the exact interval's at perfect
    agreement (``(1 - ((1 - confidence)/2)^(1/n)) / (1 - p_e)``, see :func:`exact_floor`),
    so that a kappa near 1 is not promised an interval of width 0."""
    variance = kappa_variance_per_case(kappa, human_rate, judge_rate)
    large_sample = 2 * normal_quantile(confidence) * math.sqrt(variance / n)
    chance = human_rate * judge_rate + (1 - human_rate) * (1 - judge_rate)
    exact = (1 - ((1 - confidence) / 2) ** (1 / n)) / (1 - chance)
    return max(large_sample, min(2.0, exact))


def plan_sample_size(
    kappa: float,
    width: float,
    *,
    prevalence: float = 0.5,
    human_rate: float | None = None,
    judge_rate: float | None = None,
    confidence: float = 0.95,
) -> LabelPlan:
    """Labelled cases needed for a ``confidence`` interval of total ``width`` around
    ``kappa`` when people pass a share ``human_rate`` of cases and the judge ``judge_rate``
    (each defaults to ``prevalence``; see the module docstring).

    Read: at kappa 0.6, width 0.2 and both rates 0.5 about 250 cases. Skewed rates that the
    two raters share need more (chance agreement is high, kappa less sure); a judge whose
    rate is far from the people's needs fewer than a shared-rate plan says.
    """
    if not 0 < width < 2:
        raise ValueError(f"width must be between 0 and 2, got {width}")
    h = prevalence if human_rate is None else human_rate
    j = prevalence if judge_rate is None else judge_rate
    variance = kappa_variance_per_case(kappa, h, j)
    formula = math.ceil((2 * normal_quantile(confidence)) ** 2 * variance / width**2)
    chance = h * j + (1 - h) * (1 - j)
    floor = exact_floor(width, chance, confidence=confidence)
    n = max(2, formula, floor)
    return LabelPlan(n, kappa, width, h, j, confidence, floor=floor if floor >= formula else None)


def exact_floor(width: float, chance: float, *, confidence: float = 0.95) -> int:
    """The fewest labels whose kappa interval can be ``width`` wide at all: the smallest
    ``n`` for which even perfect agreement (``n`` of ``n``) has an exact interval no wider.

    The interval reported where the bootstrap collapses
    (:func:`calibration.agreement.small_sample.agreement_coefficient_interval`) runs from
    ``(L - p_e)/(1 - p_e)`` to 1, with ``L = ((1 - confidence)/2)^(1/n)`` the
    Clopper-Pearson lower bound of ``n`` of ``n``; it is at most ``width`` wide when
    ``n >= ln((1 - confidence)/2) / ln(1 - width·(1 - p_e))``. Near kappa 1 the
    large-sample variance goes to 0 and the formula alone would plan 2 labels; no plan
    goes below this floor (at ``p_e = 0.5`` and width 0.2: 35 labels).

    Reference: Clopper and Pearson (1934), Biometrika 26(4).
    """
    reach = width * (1 - chance)
    if reach >= 1:
        return 2
    return max(2, math.ceil(math.log((1 - confidence) / 2) / math.log(1 - reach)))


def simulate_interval_width(
    n: int,
    kappa: float,
    *,
    prevalence: float = 0.5,
    judge_rate: float | None = None,
    confidence: float = 0.95,
    n_simulations: int = 2000,
    seed: int = 0,
) -> float:
    """Width of the central ``confidence`` range of kappa over simulated label sets of n
    cases drawn from the table :func:`plan_sample_size` assumes (``prevalence`` is the
    human rate; the judge's defaults to it)."""
    rng = np.random.default_rng(seed)
    j = prevalence if judge_rate is None else judge_rate
    cells = cell_probabilities(kappa, prevalence, j).ravel()
    draws = rng.multinomial(n, cells, size=n_simulations)
    values = np.array([kappa_from_confusion(d.reshape(2, 2)) for d in draws])
    values = values[np.isfinite(values)]
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(values, [alpha, 1 - alpha])
    return float(hi - lo)
