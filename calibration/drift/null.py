"""The drift alarm's null: the largest scan of streams simulated with no drift, whose
``1 - alpha`` quantile is the threshold.

**Independent pairs** (the default): each simulated stream's table is first drawn from
the pooled table's Dirichlet posterior (prior weight 1/4 spread over the cells, as the
project's posterior intervals), then its reference and every window from it (multinomial)
with their own sizes: a parametric bootstrap of the null that carries the uncertainty of
its estimate (Davison and Hinkley (1997), sec. 4.2). It assumes that the pairs are
independent given the table: a case labelled twice in a row, or a conversation's turns
labelled one after the other, are not, and their windows vary more than independent
pairs' do (each case twice in a row: false alarms in 0.14 of streams at alpha = 0.05).

**Pairs in groups** (``clusters``, ``judge drift --group-field F``): the stream is rebuilt
from whole groups drawn with replacement from its own groups, in a random order, and cut
at its window sizes (the cluster bootstrap of Davison and Hinkley (1997), sec. 3.8): the
pairs of a group stay together, so a window's variance carries their correlation. Groups
are assumed independent of each other and alike over the stream (no drift). A reference
read from a file is drawn from the simulated stream's pooled table (multinomial), its
pairs taken as independent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from calibration.inference.intervals import POSTERIOR_PRIOR_WEIGHT, dirichlet_tables

if TYPE_CHECKING:
    from calibration.drift.alarm import ScanChoice

__all__ = ["Clusters", "null_maxima"]

BLOCK_CELLS = 1 << 22  # simulated table cells held at once (32 MiB of int64)


@dataclass(frozen=True)
class Clusters:
    """A stream's pairs in stream order, as cells of the ``k x k`` table
    (``human * k + judge``), and each pair's group. ``in_stream``: the reference is the
    stream's first window (``first``, ``past``), so the pairs begin with it."""

    cells: np.ndarray
    groups: np.ndarray
    in_stream: bool


def null_maxima(ref, tables, sizes, d, choice: ScanChoice, clusters, *, simulations, seed):
    """The largest scan of ``simulations`` streams with no drift (module docstring)."""
    if clusters is None:
        pooled = ref + tables.sum(axis=0)
        return _independent(pooled, float(ref.sum()), sizes, d, choice, simulations, seed)
    return _grouped(ref, sizes, d, choice, clusters, simulations, seed)


def _independent(pooled, n_ref, sizes, d, choice, simulations, seed) -> np.ndarray:
    shape = pooled.shape
    first = int(np.random.SeedSequence(_seed(seed, 0)).generate_state(1)[0])
    tables = dirichlet_tables(pooled, n_draws=simulations, seed=first)
    tables = tables.reshape(simulations, -1)
    rng = np.random.default_rng(_seed(seed, 1))
    # Streams in blocks, so memory stays near BLOCK_CELLS numbers however many windows.
    block = max(1, BLOCK_CELLS // (pooled.size * (len(sizes) + 1)))
    out = []
    for start in range(0, simulations, block):
        p = tables[start : start + block]
        ref = rng.multinomial(int(n_ref), p).reshape(len(p), *shape)
        wins = np.stack([rng.multinomial(int(n), p) for n in sizes], axis=1)
        wins = wins.reshape(len(p), len(sizes), *shape)
        out.append(choice.scan(ref, wins, d).max(axis=-1))
    return np.concatenate(out)


def _seed(seed, part: int) -> list[int]:
    return [*np.atleast_1d(seed).tolist(), part]


def _grouped(ref, sizes, d, choice, clusters: Clusters, simulations, seed) -> np.ndarray:
    """Streams rebuilt from the stream's groups drawn with replacement (module docstring),
    in blocks of streams at once."""
    k = ref.shape[-1]
    cells = np.asarray(clusters.cells, dtype=np.int64)
    _, group_of = np.unique(np.asarray(clusters.groups), return_inverse=True)
    members = cells[np.argsort(group_of, kind="stable")]  # each group's cells together
    counts = np.bincount(group_of)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    window_sizes = np.asarray(sizes, dtype=np.int64)
    if clusters.in_stream:
        window_sizes = np.concatenate([[int(ref.sum())], window_sizes])
    total = int(window_sizes.sum())
    where = np.repeat(np.arange(len(window_sizes)), window_sizes) * k * k  # each position
    rng = np.random.default_rng(_seed(seed, 2))
    draws = int(1.5 * total / counts.mean()) + 8  # groups a stream needs, with room to spare
    block = max(1, BLOCK_CELLS // max(total, len(window_sizes) * k * k))
    out = []
    for begin in range(0, simulations, block):
        streams = _streams(rng, members, starts, counts, min(block, simulations - begin),
                           draws, total)  # fmt: skip
        cells_of = np.arange(len(streams))[:, None] * (len(window_sizes) * k * k)
        flat = np.bincount((cells_of + where + streams).ravel(),
                           minlength=len(streams) * len(window_sizes) * k * k)  # fmt: skip
        wins = flat.reshape(len(streams), len(window_sizes), k, k).astype(float)
        if clusters.in_stream:
            sim_ref, wins = wins[:, 0], wins[:, 1:]
        else:
            sim_ref = _file_reference(rng, wins.sum(axis=1), int(ref.sum()))
        out.append(choice.scan(sim_ref, wins, d).max(axis=-1))
    return np.concatenate(out)


def _streams(rng, members, starts, counts, count: int, draws: int, total: int) -> np.ndarray:
    """``count`` streams of ``total`` cells, each whole groups drawn with replacement one
    after the other, cut at ``total``. Shape ``(count, total)``."""
    picked = rng.integers(0, len(counts), (count, draws))
    short = counts[picked].sum(axis=1) < total
    while short.any():  # rare: a row of small groups; draw it again, longer
        picked = np.concatenate([picked, rng.integers(0, len(counts), (count, draws))], axis=1)
        short = counts[picked].sum(axis=1) < total
    lengths = counts[picked]
    flat = _concatenate(members, starts[picked].ravel(), lengths.ravel())
    row_start = np.concatenate([[0], np.cumsum(lengths.sum(axis=1))[:-1]])
    return flat[row_start[:, None] + np.arange(total)]


def _concatenate(members: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The cells of the picked groups one after the other, without a Python loop."""
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return members[np.arange(lengths.sum()) + offsets]


def _file_reference(rng, pooled: np.ndarray, n_ref: int) -> np.ndarray:
    """References of ``n_ref`` independent pairs, one from each simulated stream's pooled
    table (``pooled``: ``(B, k, k)``)."""
    p = pooled + POSTERIOR_PRIOR_WEIGHT / pooled[0].size
    p = (p / p.sum(axis=(-1, -2), keepdims=True)).reshape(len(p), -1)
    return rng.multinomial(n_ref, p).reshape(pooled.shape).astype(float)
