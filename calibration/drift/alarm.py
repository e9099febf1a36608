"""The drift alarm: a window-limited scan of the change in agreement against the
reference, over the last one or two windows pooled, with a threshold simulated so that a
stream with no drift alarms with probability ``alpha`` over all of its windows.

For a span of tested windows, its tables added up, the statistic ``x`` is the studentised
rise in the judge's disagreement with people over the reference's (the default), or the
studentised drop in kappa below it (``statistic="kappa"``, the earlier alarm):
:mod:`calibration.drift.statistic` gives both and why the default changed (near a pass
rate of 0.97 the kappa drop divides by a window's variance that is often near 0, and the
alarm went blind).

Window ``w``'s scan is the largest ``x`` over the spans that end at it and hold at most
``SPAN`` tested windows: ``max(x(w), x(w-1..w))`` for ``SPAN = 2``. It is the one-sided
generalised likelihood ratio for a change that began within the span (the window-limited
GLR of Willsky and Jones (1976) and Lai (1995)): a sharp change shows in the last window
alone; a smaller one, in the two pooled, twice as precise. Pooling the tables, not adding
the windows' ``x``, counts the reference's error once. ``SPAN = 2`` because the alarm is
meant to fire within two windows of a lasting drop; a drop lasting longer keeps
alarming, each window with its own span. A window alarms when its scan passes ``h``.

Against its past (``past``, ``--reference past``), a span is compared with all the windows
before it, pooled, in place of one reference: the first window is the start, and the
reference grows as the stream does (:func:`past_scan`). It tests for a change, not for a
level: a slow slide shows less against a past that slides with it.

The threshold ``h`` is the ``1 - alpha`` quantile of the largest scan over the windows of
``B`` simulated streams with no drift (:mod:`calibration.drift.null`: a parametric
bootstrap from the pooled table's posterior for independent pairs, or a cluster bootstrap
of the stream's groups), through the same statistic (Westfall and Young's single-step
max-T). So the false-alarm rate over all windows of a stream is held at ``alpha``,
whatever the number of windows, their sizes and the correlation that their shared
reference and overlapping spans give them, as long as the null's assumption on the pairs
holds (independent, or independent groups). Several streams (slices, ``--slice-field``)
share one threshold, the quantile of the largest scan over all of them
(:func:`family_alarm`). ``benchmarks/drift.md`` measures the rates.

References: Willsky and Jones (1976), IEEE Trans. Automat. Control 21(1), and Lai (1995),
J. R. Stat. Soc. B 57(4) (the window-limited GLR); Westfall and Young (1993),
Resampling-Based Multiple Testing, ch. 2 (max-T with a simulated null); Hall (1992), The
Bootstrap and Edgeworth Expansion, ch. 3 (studentised statistics); Davison and Hinkley
(1997), secs. 3.8 and 4.2 (cluster and parametric bootstrap tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from calibration.drift.null import Clusters, null_maxima
from calibration.drift.statistic import (
    DROPS,
    Statistic,
    kappa_of_tables,
    kappa_variance_of_tables,
)

__all__ = [
    "SIMULATIONS",
    "SPAN",
    "Alarm",
    "Clusters",
    "ScanChoice",
    "Watched",
    "drift_alarm",
    "family_alarm",
    "kappa_of_tables",
    "kappa_variance_of_tables",
    "past_scan",
    "span_scan",
]

SPAN = 2  # the most tested windows a span pools: the delay within which a drop is to be seen
SIMULATIONS = 4000  # null streams behind the threshold; its quantile's Monte-Carlo error ~0.005


@dataclass(frozen=True)
class Alarm:
    """Each tested window's studentised drop alone and its scan, the threshold, what fired."""

    drops: list[float]
    scan: list[float]
    threshold: float
    alarms: list[bool]
    p_value: float  # share of null streams whose largest scan reached this stream's


def span_scan(
    reference: ArrayLike,
    windows: ArrayLike,
    disagreement: ArrayLike,
    span: int = SPAN,
    statistic: Statistic = "disagreement",
) -> np.ndarray:
    """Each window's scan (module docstring): the largest studentised change
    (:mod:`calibration.drift.statistic`) against ``reference`` (``..., k, k``) of the tables
    pooled over the spans of at most ``span`` of ``windows`` (``..., W, k, k``, in stream
    order) that end at it. Shape ``(..., W)``."""
    ref = np.asarray(reference, dtype=float)
    tables = np.asarray(windows, dtype=float)
    d = np.asarray(disagreement, dtype=float)
    drops = DROPS[statistic]
    total = np.cumsum(tables, axis=-3)
    out = np.full(tables.shape[:-2], -np.inf)
    for length in range(1, min(span, tables.shape[-3]) + 1):
        pooled = total.copy()
        pooled[..., length:, :, :] -= total[..., :-length, :, :]
        x = drops(ref[..., None, :, :], pooled, d)
        x[..., : length - 1] = -np.inf  # the first windows have no span this long
        out = np.maximum(out, x)
    return out


def past_scan(
    windows: ArrayLike,
    disagreement: ArrayLike,
    span: int = SPAN,
    statistic: Statistic = "disagreement",
) -> np.ndarray:
    """Each window's scan against its past: the largest studentised change of the tables
    pooled over the spans of at most ``span`` of ``windows`` (``..., W, k, k``, in stream
    order) that end at it, against all the windows before the span, pooled. The first
    window has no past (``-inf``). Shape ``(..., W)``."""
    tables = np.asarray(windows, dtype=float)
    d = np.asarray(disagreement, dtype=float)
    drops = DROPS[statistic]
    total = np.cumsum(tables, axis=-3)
    count = tables.shape[-3]
    out = np.full(tables.shape[:-2], -np.inf)
    for length in range(1, min(span, count - 1) + 1):
        before = total[..., : count - length, :, :]  # windows 0 .. w - length
        spans = total[..., length:, :, :] - before  # windows w - length + 1 .. w
        out[..., length:] = np.maximum(out[..., length:], drops(before, spans, d))
    return out


@dataclass(frozen=True)
class ScanChoice:
    """How spans are scanned: their longest, against the past or a reference, and the
    statistic. Also what a simulated null stream goes through."""

    span: int = SPAN
    past: bool = False
    statistic: Statistic = "disagreement"

    def scan(self, ref: np.ndarray, tables: np.ndarray, d: np.ndarray, span: int | None = None):
        """The scan of ``tables`` against ``ref`` (``past``: against their past, ``ref``
        the stream's first window, which is not tested)."""
        length = self.span if span is None else span
        if not self.past:
            return span_scan(ref, tables, d, length, self.statistic)
        stream = np.concatenate([ref[..., None, :, :], tables], axis=-3)
        return past_scan(stream, d, length, self.statistic)[..., 1:]


@dataclass(frozen=True)
class Watched:
    """One stream the alarm watches: its reference table, its tested windows' tables (in
    stream order) and, when its pairs come in groups, the groups (``clusters``)."""

    reference: ArrayLike
    windows: Sequence[ArrayLike]
    clusters: Clusters | None = None


def drift_alarm(
    reference: ArrayLike,
    windows: Sequence[ArrayLike],
    disagreement: ArrayLike,
    *,
    alpha: float = 0.05,
    simulations: int = SIMULATIONS,
    span: int = SPAN,
    past: bool = False,
    seed: int = 0,
    statistic: Statistic = "disagreement",
    clusters: Clusters | None = None,
) -> Alarm:
    """The alarm of the tested ``windows`` (confusion tables, in stream order) against the
    ``reference`` table; see the module docstring. With ``past``, ``reference`` is the
    stream's first window and each span is tested against all the windows before it
    (:func:`past_scan`). With ``clusters``, the null resamples the stream's groups
    (:func:`calibration.drift.null.null_maxima`). Seeded: the same inputs give the same
    threshold."""
    choice = ScanChoice(span, past, statistic)
    watched = [Watched(reference, windows, clusters)]
    return family_alarm(watched, disagreement, choice, alpha=alpha, simulations=simulations,
                        seed=seed)[0]  # fmt: skip


def family_alarm(
    streams: Sequence[Watched],
    disagreement: ArrayLike,
    choice: ScanChoice = ScanChoice(),
    *,
    alpha: float = 0.05,
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> list[Alarm]:
    """The alarms of several streams (slices) under one threshold: the ``1 - alpha``
    quantile of the largest scan over every window of every stream, each stream's null
    simulated from its own table (independent slices), so the chance that any slice alarms
    falsely is ``alpha``; each stream's p-value is the share of simulated families whose
    largest scan reached that stream's."""
    d = np.asarray(disagreement, dtype=float)
    family = np.full(simulations, -np.inf)
    observed = []
    for i, stream in enumerate(streams):
        ref = np.asarray(stream.reference, dtype=float)
        tables = np.asarray([np.asarray(w, dtype=float) for w in stream.windows])
        observed.append((choice.scan(ref, tables, d, 1), choice.scan(ref, tables, d)))
        sizes = tables.sum(axis=(-1, -2))
        maxima = null_maxima(ref, tables, sizes, d, choice, stream.clusters,
                             simulations=simulations, seed=[seed, i])  # fmt: skip
        family = np.maximum(family, maxima)
    threshold = float(np.quantile(family, 1 - alpha))
    return [_alarm(drops, scan, threshold, family) for drops, scan in observed]


def _alarm(drops: np.ndarray, scan: np.ndarray, threshold: float, null: np.ndarray) -> Alarm:
    largest = float(scan.max()) if scan.size else 0.0
    return Alarm(
        drops=drops.tolist(),
        scan=scan.tolist(),
        threshold=threshold,
        alarms=(scan > threshold).tolist(),
        p_value=float((null >= largest).mean()),
    )
