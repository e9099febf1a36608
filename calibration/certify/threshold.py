"""One rung's certified confidence threshold: the exact binomial bound and the
fixed-sequence test (Trust or Escalate; Bates et al. 2021; Angelopoulos et al., Learn then
Test).

A case is *decided* at threshold ``t`` when its confidence is at least ``t``. For each
candidate ``t`` the null hypothesis is ``H_t: R(t) > 1 - A``, ``R(t)`` the true share of
decided cases on which the judge disagrees with people. With ``k`` disagreements among the
``n`` labelled cases decided at ``t``, ``p_t = P(Binomial(n, 1 - A) <= k)`` is a valid
p-value, and ``p_t <= delta`` exactly when the one-sided Clopper-Pearson upper bound
``u(k, n) = Beta.ppf(1 - delta, k + 1, n - k)`` is at most ``1 - A``.

Fixed-sequence test: the candidates are tested in an order fixed before the labels are
read, most confident first, each at the full ``delta``, and testing stops at the first one
not rejected. The threshold is the last rejected candidate (none when the first is not).
Because a false certificate needs the first true null in the order to be rejected, the
chance that the chosen threshold's true disagreement exceeds ``1 - A`` is at most
``delta`` (Bates et al. 2021, Theorem A.1; Angelopoulos et al. 2021, Proposition 3).

Candidates (``grid``):

- ``"every"``: every distinct confidence with at least ``min_decided`` (``N``) cases at
  or above it (the published method's grid of 5,000 points, in the limit: between two
  confidences the decided set does not change).
- ``"relay"`` (the default): several fixed sequences over the same candidates joined
  into one graphical test (Bretz, Maurer, Brannath and Posch 2009, Statistics in
  Medicine 28(4)). Each chain of :data:`CHAINS` puts its share of ``delta`` on the first
  point at or past its start: the late start below (its ``c`` at the chain's level) or
  its share of the cases reaching the rung, whichever is later. A point holds the level
  of every chain that reached it; a rejected point hands its level to the next one down,
  a point not rejected keeps it. The lowest rejected point is the threshold. A graphical
  test bounds the chance of rejecting any true null by ``delta`` (the sum of the initial
  levels) whatever the dependence between the tests, so the guarantee is the fixed
  sequence's. A rung tested at the whole ``delta`` runs three chains (the late start, a
  quarter and a half of the cases); each test of a longer cascade, at a share of
  ``delta``, runs two (:data:`SPLIT_CHAINS`: the late start and half the cases). The
  later chains get past a judge whose most confident cases hold several disagreements
  (real judges' logprob confidences, ``benchmarks/certify_real.py``); the split costs
  some coverage with few labels (``benchmarks/certify.md``).
- ``"late"`` (the default before h50cov): the same candidates, but testing starts where the decided
  count first reaches ``m_0 = max(N, c, min(2c, reached // 3))``, ``c`` the fewest cases
  on which even no disagreement can certify ``A`` (:func:`fewest_decided`) and ``reached``
  the cases reaching the rung. A first test on barely more than ``c`` cases fails on one
  unlucky disagreement and stops everything, which is where the published start (30
  cases) loses most of its coverage; starting at ``2c`` rides over it, and the cap at a
  third of the cases keeps room to test when there are few. ``m_0`` depends on counts
  only, never on labels, so the order is fixed before the labels are read and the
  guarantee is the same; ``benchmarks/certify.py`` measures both grids on the same draws.
- ``"two"`` (an option; ``"relay"`` does better on the same idea): two fixed sequences over the same candidates,
  each at ``delta / 2`` (valid together by the union bound), one from the late start and
  one from a third of the cases reaching the rung; the one deciding more wins. It gets
  past a judge whose most confident cases hold several disagreements (real judges'
  logprob confidences, ``benchmarks/certify_real.py``) at the price of coverage with few
  labels (``benchmarks/certify.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from calibration.inference.intervals import binomial_lower_tail, clopper_pearson_upper

__all__ = [
    "GRIDS",
    "Curve",
    "RungThreshold",
    "clopper_pearson_upper",
    "fewest_decided",
    "rung_threshold",
]

Grid = Literal["late", "every", "two", "relay"]
GRIDS: tuple[str, ...] = ("late", "every", "two", "relay")
START_FACTOR = 2
Chains = tuple[tuple[float, float], ...]
# the relay's chains, each (where it starts: a share of the cases reaching the rung, 0 = the
# late start; its share of delta). A rung tested at the whole delta (a cascade of one) runs
# three; a test at a share of delta (each test of a longer cascade) runs two, as a third of
# a share is too little to pass the top cases.
CHAINS: Chains = ((0.0, 1 / 3), (0.25, 1 / 3), (0.5, 1 / 3))
SPLIT_CHAINS: Chains = ((0.0, 0.5), (0.5, 0.5))
STEP: float | None = None  # an experiment, off: candidates at decided counts start * STEP^k


def fewest_decided(agreement: float, delta: float) -> int:
    """The fewest decided cases that can certify ``agreement`` at all: with none of them
    in disagreement, the bound ``1 - delta^(1/n)`` must be at most ``1 - agreement``."""
    if agreement >= 1:
        return 10**12  # never: an exact upper bound is never 0
    return max(1, math.ceil(math.log(delta) / math.log(agreement)))


@dataclass(frozen=True, eq=False)
class Curve:
    """The coverage-risk curve of one rung: at each distinct confidence (descending), the
    cases decided at or above it and their disagreements with people."""

    thresholds: np.ndarray
    decided: np.ndarray
    disagreements: np.ndarray

    def upper(self, delta: float) -> np.ndarray:
        """The Clopper-Pearson upper bound on disagreement at each point."""
        return clopper_pearson_upper(self.disagreements, self.decided, delta=delta)


EMPTY_CURVE = Curve(np.zeros(0), np.zeros(0, dtype=int), np.zeros(0, dtype=int))


@dataclass(frozen=True)
class RungThreshold:
    """The result of one rung's test on the labelled cases that reach it."""

    threshold: float | None
    reached: int
    decided: int
    disagreements: int
    upper: float | None
    tested: int  # candidates tested before the test stopped
    curve: Curve  # every distinct confidence (for the coverage-risk plot)

    @property
    def agreement(self) -> float | None:
        return None if self.decided == 0 else 1 - self.disagreements / self.decided


def _steps(confidence: np.ndarray, disagree: np.ndarray):
    """Distinct confidences descending, with decided counts and disagreements at each."""
    order = np.argsort(-confidence, kind="stable")
    c, d = confidence[order], disagree[order].astype(int)
    cum = np.cumsum(d)
    last = np.r_[np.nonzero(np.diff(c))[0], len(c) - 1]  # last index of each distinct value
    return c[last], last + 1, cum[last]


def first_count(
    agreement: float, delta: float, min_decided: int, grid: Grid, reached: int | None = None
) -> int:
    """The decided count the test starts at (module docstring): ``"every"``: ``N``;
    ``"late"``: ``max(N, c, min(2c, reached // 3))`` with ``c`` the fewest cases that can
    certify ``agreement`` (a start below ``c`` would fail at once). ``reached``, the cases
    reaching the rung, is known before any label is read; ``None``: as many as needed."""
    if grid == "every":
        return min_decided
    fewest = fewest_decided(agreement, delta)
    late = START_FACTOR * fewest if reached is None else min(START_FACTOR * fewest, reached // 3)
    return max(min_decided, fewest, late)


def rung_threshold(
    confidence: ArrayLike,
    agrees: ArrayLike,
    *,
    agreement: float,
    delta: float,
    min_decided: int = 30,
    grid: Grid = "relay",
    chains: Chains | None = None,
) -> RungThreshold:
    """The lowest confidence threshold the fixed-sequence test certifies (module docstring).

    ``confidence``: the judge's confidence (0..1) on each labelled case reaching this rung;
    ``agrees``: whether its label equals the people's. ``threshold`` is ``None`` when no
    threshold can be certified at ``agreement`` (then nothing is decided).
    """
    conf = np.asarray(confidence, dtype=float)
    disagree = ~np.asarray(agrees, dtype=bool)
    if len(conf) == 0:
        return RungThreshold(None, 0, 0, 0, None, 0, EMPTY_CURVE)
    values, counts, errors = _steps(conf, disagree)
    curve = Curve(values, counts, errors)
    if grid == "relay":
        return _relay(curve, agreement, delta, min_decided, len(conf), chains)
    if grid != "two":
        start = first_count(agreement, delta, min_decided, grid, reached=len(conf))
        return _sequence(curve, start, agreement, delta, len(conf))
    # two fixed sequences, each at delta / 2 (union bound): from the late start, and from a
    # third of the cases (past a judge's unlucky most-confident cases); the lower wins
    early = first_count(agreement, delta / 2, min_decided, "late", reached=len(conf))
    found = [
        _sequence(curve, start, agreement, delta / 2, len(conf))
        for start in (early, max(early, len(conf) // 3))
    ]
    return max(found, key=lambda r: r.decided)


def _relay(
    curve: Curve,
    agreement: float,
    delta: float,
    min_decided: int,
    reached: int,
    chains: Chains | None = None,
):
    """The chains of :data:`CHAINS` joined into one graph (Bretz et al. 2009): the curve's
    points from the top chain's start down, most confident first, each point holding the
    level of every chain that reached it; a rejected point hands its level to the next one
    down, a point not rejected keeps it. The lowest rejected point is the threshold. Weight
    only flows down, so one pass from the top gives the graph's final rejections."""
    counts, errors, values = curve.decided, curve.disagreements, curve.thresholds
    starts = chain_starts(agreement, delta, min_decided, reached, chains)
    nodes = np.nonzero(counts >= min(s for s, _ in starts))[0]
    if len(nodes) == 0:
        return RungThreshold(None, reached, 0, 0, None, 0, curve)
    weight = np.zeros(len(nodes))
    for start, share in starts:
        at = int(np.searchsorted(counts[nodes], start, side="left"))
        if at < len(nodes):
            weight[at] += share * delta
    p = binomial_lower_tail(errors[nodes], counts[nodes], 1 - agreement)
    carry, best, tested = 0.0, -1, 0
    held = 0.0
    for i in range(len(nodes)):
        level = carry + weight[i]
        tested += level > 0
        carry = level if level > 0 and p[i] <= level else 0.0
        if carry:
            best, held = i, level
    if best < 0:
        return RungThreshold(None, reached, 0, 0, None, tested, curve)
    at = nodes[best]
    upper = float(clopper_pearson_upper(errors[at], counts[at], delta=held))
    return RungThreshold(
        float(values[at]), reached, int(counts[at]), int(errors[at]), upper, tested, curve
    )


def chain_starts(
    agreement: float,
    delta: float,
    min_decided: int,
    reached: int,
    chains: Chains | None = None,
) -> list[tuple[int, float]]:
    """The chains of :data:`CHAINS` as (the decided count each starts at, its share of
    ``delta``): the late start for its level (:func:`first_count`), or its share of the
    cases reaching the rung when that is later. A chain whose share of the cases is not
    past the late start of the chains above it with its level added joins them (one chain
    at their summed level: with few cases, three chains at a third each would all start
    late and weak). Counts only, never labels."""
    groups: list[list[float]] = []
    for share, weight in sorted(CHAINS if chains is None else chains):
        if groups:
            joined = groups[-1][1] + weight
            late = first_count(agreement, joined * delta, min_decided, "late", reached)
            if int(share * reached) <= late:
                groups[-1][1] = joined
                continue
        groups.append([share, weight])
    return [
        (max(first_count(agreement, w * delta, min_decided, "late", reached), int(q * reached)), w)
        for q, w in groups
    ]


def _candidates(counts: np.ndarray, start: int) -> np.ndarray:
    """The curve's points tested, most confident first: every point from ``start``
    decided on, or (``STEP``) the first point at or past each count ``start * STEP^k``."""
    every = np.nonzero(counts >= start)[0]
    if STEP is None or len(every) == 0:
        return every
    k = np.arange(int(np.ceil(np.log(max(counts[-1], start) / start) / np.log(STEP))) + 2)
    at = np.searchsorted(counts, start * STEP**k, side="left")
    return np.unique(np.r_[at[at < len(counts)], len(counts) - 1])


def _sequence(curve: Curve, start: int, agreement: float, delta: float, reached: int):
    """One fixed-sequence test over the curve's points with at least ``start`` decided."""
    values, counts, errors = curve.thresholds, curve.decided, curve.disagreements
    order = _candidates(counts, start)
    upper = clopper_pearson_upper(errors[order], counts[order], delta=delta)
    failed = np.nonzero(upper > 1 - agreement)[0]
    stop = int(failed[0]) if len(failed) else len(order)
    tested = min(stop + 1, len(order))
    if stop == 0:
        return RungThreshold(None, reached, 0, 0, None, tested, curve)
    at = order[stop - 1]
    return RungThreshold(
        float(values[at]), reached, int(counts[at]), int(errors[at]), float(upper[stop - 1]),
        tested, curve,
    )  # fmt: skip
