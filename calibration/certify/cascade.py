"""A cascade of judges, cheapest first: each rung's certified threshold on the labelled
cases that reach it, the cases below it passed on, the rest left to people.

The guarantee, and why the error budget is split. Rung ``j`` is tested at
``delta_j = delta / J`` (Bonferroni over the ``J`` rungs). Its fixed-sequence test makes
``P(R_j > 1 - A) <= delta_j``, ``R_j`` the true disagreement on the cases rung ``j``
decides, given the cases that reach it. The cases the cascade decides are the union of
the rungs' decided sets, so their disagreement is the mix ``sum_j w_j R_j`` (``w_j`` the
share of decided cases rung ``j`` decides), at most ``1 - A`` whenever every ``R_j`` is. By
the union bound the cascade's decided cases agree with people at least ``A`` with
probability at least ``1 - sum_j delta_j = 1 - delta``. Testing every rung at the full
``delta``, as the published code does, bounds each rung alone but the cascade only at
``J * delta``; ``benchmarks/certify.py`` measures what each costs and keeps.

The default (``split="either"``, two rungs or more): the better of two tests: one pooled
test of the whole cascade at ``POOLED_SHARE * delta`` (0.7; :mod:`calibration.certify.pooled`:
every rung's threshold moves along one path fixed before labels are read, and the bound
is on all the cases the cascade decides), and the per-rung tests above sharing the rest,
``(1 - POOLED_SHARE) * delta / J`` each. The two levels sum to ``delta``, so the one kept
(the one deciding more labelled cases) is wrong with chance at most ``delta`` (union
bound). The pooled test gets the larger share: it is the one statement the certificate
makes; the per-rung tests are there for rungs unlike each other, where the pooled path
makes a weak rung decide as many of its cases as a strong one.
``"pooled"`` alone (at ``delta``) and ``"bonferroni"`` alone are options; ``"none"``
(each rung at ``delta``, as the published code) does not bound the cascade at ``delta``.

What it assumes: the labelled cases are a random sample of the stream the certificate is
used on (exchangeable with it), and each rung's judge, rubric and prompt are the ones the
certificate will run. Cases a rung cannot grade (a parse or API error) have no
confidence there and go on to the next rung.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from calibration.certify.pooled import pooled_thresholds
from calibration.certify.threshold import SPLIT_CHAINS, Grid, RungThreshold, rung_threshold
from calibration.inference.intervals import clopper_pearson_interval

__all__ = [
    "CascadeResult", "Split", "cascade_deltas", "certify_cascade", "decide", "exact_interval"
]  # fmt: skip

Split = Literal["bonferroni", "none", "pooled", "either"]
POOLED_SHARE = 0.7  # under "either": the pooled test's share of delta (per-rung: the rest)


@dataclass(frozen=True)
class CascadeResult:
    """Each rung's test, the level it was tested at, and the cascade's coverage."""

    rungs: tuple[RungThreshold, ...]
    deltas: tuple[float, ...]
    n: int
    decided: int
    disagreements: int
    coverage_ci95: tuple[float, float]
    decided_by: np.ndarray  # per labelled case: the deciding rung's index, -1 if escalated
    kept: str | None = None  # under "either": "pooled" or "per-rung", the test kept

    @property
    def coverage(self) -> float:
        return self.decided / self.n if self.n else 0.0

    @property
    def certified(self) -> bool:
        return self.decided > 0


def cascade_deltas(delta: float, rungs: int, split: Split = "bonferroni") -> tuple[float, ...]:
    """Each rung's level in a per-rung test: ``delta / J`` (Bonferroni), or ``delta`` each."""
    each = delta / rungs if split == "bonferroni" else delta
    return (each,) * rungs


def decide(confidences: Sequence[ArrayLike], thresholds: Sequence[float | None]) -> np.ndarray:
    """Which rung decides each case (its index), ``-1`` for a case left to people: the
    first rung whose confidence is at or above its threshold. ``nan`` (no verdict) never
    decides."""
    conf = [np.asarray(c, dtype=float) for c in confidences]
    out = np.full(len(conf[0]) if conf else 0, -1)
    for j, (c, t) in enumerate(zip(conf, thresholds, strict=True)):
        if t is None:
            continue
        with np.errstate(invalid="ignore"):
            out[(out < 0) & (c >= t)] = j
    return out


def certify_cascade(
    confidences: Sequence[ArrayLike],
    agrees: Sequence[ArrayLike],
    *,
    agreement: float,
    delta: float,
    min_decided: int = 30,
    grid: Grid = "relay",
    split: Split = "either",
) -> CascadeResult:
    """Certify each rung in order on the labelled cases that reach it (module docstring).

    ``confidences[j][i]``, ``agrees[j][i]``: rung ``j``'s confidence on labelled case ``i``
    (``nan`` where it gave no verdict) and whether its label is the people's.
    """
    conf = [np.asarray(c, dtype=float) for c in confidences]
    agree = [np.asarray(a, dtype=bool) for a in agrees]
    if split == "pooled":
        return _pooled(conf, agree, agreement, delta, min_decided)
    if split == "either" and len(conf) > 1:  # the two levels sum to delta: union bound
        both = [
            _pooled(conf, agree, agreement, POOLED_SHARE * delta, min_decided),
            certify_cascade(
                conf, agree, agreement=agreement, delta=(1 - POOLED_SHARE) * delta,
                min_decided=min_decided, grid=grid, split="bonferroni",
            ),
        ]  # fmt: skip
        best = max(both, key=lambda r: r.decided)
        return replace(best, kept="pooled" if best is both[0] else "per-rung")
    n = len(conf[0]) if conf else 0
    deltas = cascade_deltas(delta, len(conf), "none" if split == "either" else split)
    decided_by = np.full(n, -1)
    rungs = []
    for j, (c, a, d) in enumerate(zip(conf, agree, deltas, strict=True)):
        reach = decided_by < 0
        usable = reach & ~np.isnan(c)
        result = rung_threshold(
            c[usable], a[usable], agreement=agreement, delta=d, min_decided=min_decided,
            grid=grid, chains=None if len(conf) == 1 else SPLIT_CHAINS,
        )  # fmt: skip
        rungs.append(_with_reached(result, int(reach.sum())))
        if result.threshold is not None:
            with np.errstate(invalid="ignore"):
                decided_by[reach & (c >= result.threshold)] = j
    return _result(tuple(rungs), deltas, decided_by, agree)


def _pooled(conf, agree, agreement: float, delta: float, min_decided: int) -> CascadeResult:
    """The one pooled test of :mod:`calibration.certify.pooled`; each rung's entry shows
    its own threshold and the cases it decides, its ``upper`` the pooled bound."""
    thresholds, test = pooled_thresholds(
        conf, agree, agreement=agreement, delta=delta, min_decided=min_decided
    )
    decided_by = decide(conf, thresholds)
    rungs = []
    for j, (c, a, t) in enumerate(zip(conf, agree, thresholds, strict=True)):
        reach = np.ones(len(c), dtype=bool) if j == 0 else ~np.isin(decided_by, range(j))
        mine = decided_by == j
        usable = reach & ~np.isnan(c)
        curve = rung_threshold(c[usable], a[usable], agreement=agreement, delta=delta).curve
        rungs.append(
            RungThreshold(
                t, int(reach.sum()), int(mine.sum()), int((~a[mine]).sum()),
                test.upper, test.tested, curve,
            )
        )  # fmt: skip
    return _result(tuple(rungs), (delta,) * len(conf), decided_by, agree)


def _with_reached(result: RungThreshold, reached: int) -> RungThreshold:
    """Reached counts every case that came to the rung, those it could not grade too."""
    return replace(result, reached=reached)


def _result(
    rungs: tuple[RungThreshold, ...],
    deltas: tuple[float, ...],
    decided_by: np.ndarray,
    agree: list[np.ndarray],
) -> CascadeResult:
    n = len(decided_by)
    decided = int((decided_by >= 0).sum())
    wrong = sum(int((~agree[j][decided_by == j]).sum()) for j in range(len(rungs)))
    return CascadeResult(rungs, deltas, n, decided, wrong, exact_interval(decided, n), decided_by)


def exact_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The two-sided Clopper-Pearson interval of ``k`` in ``n``
    (:func:`calibration.inference.intervals.clopper_pearson_interval`); ``(0, 1)`` when
    ``n`` is 0."""
    if n == 0:
        return (0.0, 1.0)
    return clopper_pearson_interval(k, n, confidence=confidence)
