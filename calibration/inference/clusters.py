"""Intervals that know their cases come in clusters: a rate over the turns of
conversations, and a cluster bootstrap over groups.

**A rate over clustered units** (:func:`clustered_rate_interval`): ``R = Σ y_g / Σ m_g``,
``y_g`` the units that pass in cluster ``g`` of ``m_g`` units, ``G`` clusters. Its
linearised (ratio-estimator) variance, which resamples clusters, not units, is
``V = G/(G-1) · Σ (y_g - R m_g)² / (Σ m_g)²``; the design effect makes an effective
number of units ``n* = R(1-R)/V`` (at most ``Σ m_g``), and ``n*`` is shrunk by
``(z / t(G-1))²`` for the few clusters the variance is estimated from. The interval is
Clopper and Pearson's at ``n*`` with ``x* = R n*`` successes (beta quantiles, which take
a size that is not whole): Korn and Graubard's (1998) interval for a proportion from a
clustered sample. It stays within [0, 1] and does not collapse when every unit passes.
The turns of one conversation pass or fail together more often than independent turns
do; pooled as independent, Wilson's interval covered 0.72-0.87 of true rates at 10-30
conversations, Wilson's at ``n*`` 0.91 in one setting, this one 0.96-0.98
(``benchmarks/cluster_intervals.md``).

**A cluster bootstrap** (:func:`cluster_bootstrap_indices`): resamples of whole groups
with replacement, the units of each drawn group kept together (Davison and Hinkley (1997),
sec. 3.8; Field and Welsh (2007)).

References: Korn and Graubard (1998), Survey Methodology 24(2); Clopper and Pearson
(1934), Biometrika 26(4); Dean and Pagano (2015),
Stat. Med. 34(5) (Wilson's and Clopper-Pearson's at the effective size); Kish (1965), Survey Sampling (the design effect); Davison and Hinkley
(1997), Bootstrap Methods and their Application; Field and Welsh (2007), J. R. Stat. Soc.
B 69(3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from calibration.inference.intervals import (
    clopper_pearson_interval,
    normal_quantile,
    t_quantile,
)

__all__ = [
    "ClusterMoments",
    "cluster_bootstrap_indices",
    "cluster_table_ci",
    "clustered_rate_interval",
]


class ClusterMoments:
    """Running sums of a clustered rate, one cluster at a time: ``G``, ``Σ y``, ``Σ m``,
    ``Σ y²``, ``Σ m²``, ``Σ y m`` (enough for :func:`clustered_rate_interval`)."""

    __slots__ = ("clusters", "m", "mm", "y", "ym", "yy")

    def __init__(self) -> None:
        self.clusters = 0
        self.y = self.m = self.yy = self.mm = self.ym = 0.0

    def add(self, passed: float, units: float) -> None:
        """One cluster of ``units`` units, ``passed`` of which pass."""
        self.clusters += 1
        self.y += passed
        self.m += units
        self.yy += passed * passed
        self.mm += units * units
        self.ym += passed * units

    def interval(self, confidence: float = 0.95) -> tuple[float, float] | None:
        return clustered_rate_interval(self, confidence=confidence)


def clustered_rate_interval(
    moments: ClusterMoments, *, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Korn and Graubard's interval of ``Σ y / Σ m`` at the effective size of the clusters (module
    docstring); ``None`` with fewer than two clusters or no unit."""
    g, m = moments.clusters, moments.m
    if g < 2 or m <= 0:
        return None
    rate = moments.y / m
    residual = moments.yy - 2 * rate * moments.ym + rate * rate * moments.mm
    variance = g / (g - 1) * max(residual, 0.0) / (m * m)
    spread = rate * (1 - rate)
    n_eff = m if variance <= 0 or spread <= 0 else min(m, spread / variance)
    z = normal_quantile(confidence)
    t = t_quantile(confidence, g - 1)
    n_eff *= (z / t) ** 2
    # Clopper and Pearson's interval at the effective size (neither count need be whole)
    return clopper_pearson_interval(min(rate * n_eff, n_eff), n_eff, confidence=confidence)


def cluster_bootstrap_indices(
    groups: Sequence[str] | ArrayLike, n_resamples: int, *, seed: int = 0
) -> list[np.ndarray]:
    """``n_resamples`` resamples of the units' positions: each draws ``G`` groups with
    replacement (``G`` the number of groups) and takes every unit of each, so a resample
    holds as many groups as the data, and about as many units."""
    labels = np.asarray(groups)
    _, group_of = np.unique(labels, return_inverse=True)
    order = np.argsort(group_of, kind="stable")
    counts = np.bincount(group_of)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_resamples):
        picked = rng.integers(0, len(counts), len(counts))
        lengths = counts[picked]
        offsets = np.repeat(starts[picked] - np.concatenate([[0], np.cumsum(lengths)[:-1]]),
                            lengths)  # fmt: skip
        out.append(order[np.arange(lengths.sum()) + offsets])
    return out


def cluster_table_ci(
    human: ArrayLike,
    judge: ArrayLike,
    k: int,
    groups: Sequence[str] | ArrayLike,
    statistics: dict[str, Callable[[np.ndarray], float]],
    *,
    n_resamples: int,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of statistics of the ``k x k`` confusion table of the pairs
    (``human``, ``judge``: class indices) under the cluster bootstrap
    (:func:`cluster_bootstrap_indices`): each resample draws whole groups, its table is
    built from their pairs, and each statistic is taken of it. A statistic undefined
    (``nan``) in more than half of the resamples gets ``None``; the others' undefined
    resamples are left out."""
    h = np.asarray(human, dtype=np.int64)
    j = np.asarray(judge, dtype=np.int64)
    cells = h * k + j
    values = {name: np.empty(n_resamples) for name in statistics}
    for b, take in enumerate(cluster_bootstrap_indices(groups, n_resamples, seed=seed)):
        table = np.bincount(cells[take], minlength=k * k).reshape(k, k)
        for name, of_table in statistics.items():
            values[name][b] = of_table(table)
    tail = (1 - confidence) / 2
    out: dict[str, tuple[float, float] | None] = {}
    for name, drawn in values.items():
        finite = drawn[np.isfinite(drawn)]
        if len(finite) * 2 < n_resamples:
            out[name] = None
            continue
        low, high = np.quantile(finite, [tail, 1 - tail])
        out[name] = (float(low), float(high))
    return out
