"""The drift alarm: a window-limited scan of the drop in agreement below the reference,
over the last one or two windows pooled, with a threshold simulated so that a stream with
no drift alarms with probability ``alpha`` over all of its windows.

For a span of tested windows, its tables added up (``n_s`` pairs), the studentised drop
below the reference (``n_r`` pairs) is

``x = (κ_r - κ_s) / sqrt(V_r + V_s)``,

with ``V`` each table's Fleiss-Cohen-Everitt large-sample variance at its observed table,
never taken below ``1/n²`` (a table whose cases all agree has variance 0, and one case's
change moves kappa by about ``1/n``). Studentised, the statistic depends less on the
unknown table than a drop scaled by one pooled variance, so its simulated null errs less
(Hall (1992), ch. 3).

Window ``w``'s scan is the largest ``x`` over the spans that end at it and hold at most
``SPAN`` tested windows: ``max(x(w), x(w-1..w))`` for ``SPAN = 2``. It is the one-sided
generalised likelihood ratio for a drop that began within the span (the window-limited
GLR of Willsky and Jones (1976) and Lai (1995)): a drop caught at once shows in the last
window alone; a smaller one, in the two pooled, whose kappa is twice as precise. Pooling
the tables, not adding the windows' ``x``, counts the reference's error once: the windows
share it, and a sum of their ``x`` counts it again for each. ``SPAN = 2`` because the
alarm is meant to fire within two windows of a lasting drop; a drop lasting longer keeps
alarming, each window with its own span. A window alarms when its scan passes ``h``.

Against its past (``past``, ``--reference past``), a span is compared with all the windows
before it, pooled, in place of one reference: the first window is the start, and the
reference grows as the stream does, so a stream needs no release calibration to be
tested against hundreds of labels (:func:`past_scan`). It tests for a change, not for a
level: a slow slide, each window a little below the last, shows less against a past that
slides with it than against a fixed reference.

Measured against Page's CUSUM (``S_w = max(0, S_{w-1} + x_w - 1)`` of the windows' ``x``),
which this replaced, on the same seeded streams (``benchmarks/drift.md``, 10 windows of
100 labels, kappa 0.2 lower from window 6): within two windows of the change it catches
0.78 of drops from kappa 0.8 against 0.77 with a 500-label reference, and 0.47 against
0.25 with the stream's first window (100 labels) as the reference. By the stream's end
the CUSUM, which adds up every low window, had caught a little more (0.97 against 0.95
from kappa 0.8): the scan trades that for speed.

The threshold ``h`` is the ``1 - alpha`` quantile of the largest scan over the windows of
``B`` simulated streams with no drift: for each, a table drawn from the pooled table's
Dirichlet posterior (prior weight 1/4 spread over the cells, as the project's posterior
intervals), then the reference and every window drawn from it with their own sizes
(multinomial), through the same statistic (a parametric bootstrap of the null that
carries the uncertainty of its estimate, as Westfall and Young's single-step max-T). So
the false-alarm rate over all windows of a stream is held at ``alpha``, whatever the
number of windows, their sizes and the correlation that their shared reference and
overlapping spans give them; under drift the pooled table is less tight than the
reference's, which makes the alarm conservative, not liberal. ``benchmarks/drift.md``
measures both rates.

References: Willsky and Jones (1976), IEEE Trans. Automat. Control 21(1), and Lai (1995),
J. R. Stat. Soc. B 57(4) (the window-limited GLR); Westfall and Young (1993),
Resampling-Based Multiple Testing, ch. 2 (max-T with a simulated null); Fleiss, Cohen and
Everitt (1969), Psychol. Bull. 72(5) (the variance of kappa); Hall (1992), The Bootstrap
and Edgeworth Expansion, ch. 3 (studentised statistics); Davison and Hinkley (1997),
sec. 4.2 (parametric bootstrap tests); Gelman et al. (2013), Bayesian Data Analysis,
sec. 3.4 (the Dirichlet posterior of a multinomial).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from calibration.inference.intervals import dirichlet_tables

__all__ = [
    "SIMULATIONS",
    "SPAN",
    "Alarm",
    "drift_alarm",
    "kappa_of_tables",
    "kappa_variance_of_tables",
    "past_scan",
    "span_scan",
]

SPAN = 2  # the most tested windows a span pools: the delay within which a drop is to be seen
SIMULATIONS = 4000  # null streams behind the threshold; its quantile's Monte-Carlo error ~0.005
BLOCK_CELLS = 1 << 22  # simulated table cells held at once (32 MiB of int64)


@dataclass(frozen=True)
class Alarm:
    """Each tested window's studentised drop alone and its scan, the threshold, what fired."""

    drops: list[float]
    scan: list[float]
    threshold: float
    alarms: list[bool]
    p_value: float  # share of null streams whose largest scan reached this stream's


def kappa_of_tables(tables: ArrayLike, disagreement: ArrayLike) -> np.ndarray:
    """Cohen's (weighted) kappa of every ``k x k`` table in ``tables`` (any leading shape):
    ``1 - Σ d_ij O_ij / Σ d_ij E_ij``, ``E_ij = row_i col_j / n``; ``nan`` where the
    expected disagreement is 0. The batch form of
    :func:`calibration.agreement.metrics.kappa_from_confusion` (the tests check they agree),
    for the thousands of simulated tables of the threshold."""
    t = np.asarray(tables, dtype=float)
    d = np.asarray(disagreement, dtype=float)
    n = t.sum(axis=(-1, -2))
    rows, cols = t.sum(axis=-1), t.sum(axis=-2)
    expected = np.einsum("ij,...i,...j->...", d, rows, cols)
    observed = np.einsum("ij,...ij->...", d, t)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1 - observed * n / expected, np.nan)


def kappa_variance_of_tables(tables: ArrayLike, disagreement: ArrayLike) -> np.ndarray:
    """The Fleiss-Cohen-Everitt large-sample variance of (weighted) kappa of every table
    in ``tables`` at its observed table, for disagreement weights ``d`` on [0, 1]: the
    batch form of :func:`calibration.agreement.kappa_variance.weighted_kappa_variance`
    (its docstring gives the formula; the tests check they agree); ``nan`` where kappa is
    undefined."""
    t = np.asarray(tables, dtype=float)
    d = np.asarray(disagreement, dtype=float)
    a = 1.0 - d
    n = t.sum(axis=(-1, -2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = t / n[..., None, None]
        rows, cols = p.sum(axis=-1), p.sum(axis=-2)
        chance = np.einsum("ij,...i,...j->...", a, rows, cols)
        kappa = kappa_of_tables(t, d)
        a_row = np.einsum("ij,...j->...i", a, cols)
        a_col = np.einsum("...i,ij->...j", rows, a)
        centre = (a_row[..., :, None] + a_col[..., None, :]) * (1 - kappa)[..., None, None]
        spread = (p * (a - centre) ** 2).sum(axis=(-1, -2))
        return (spread - (kappa - chance * (1 - kappa)) ** 2) / (n * (1 - chance) ** 2)


def _drops(reference: np.ndarray, tables: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The studentised drops ``x`` of ``tables`` (``..., k, k``) below ``reference`` (tables
    that broadcast against them); an undefined kappa (a simulated table with one class) is
    no evidence either way (0)."""

    def variance(t: np.ndarray) -> np.ndarray:
        n = t.sum(axis=(-1, -2))
        return np.fmax(kappa_variance_of_tables(t, d), 1.0 / n**2)

    gap = kappa_of_tables(reference, d) - kappa_of_tables(tables, d)
    with np.errstate(invalid="ignore"):
        x = gap / np.sqrt(variance(reference) + variance(tables))
    return np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)


def span_scan(
    reference: ArrayLike, windows: ArrayLike, disagreement: ArrayLike, span: int = SPAN
) -> np.ndarray:
    """Each window's scan (module docstring): the largest studentised drop below
    ``reference`` (``..., k, k``) of the tables pooled over the spans of at most ``span``
    of ``windows`` (``..., W, k, k``, in stream order) that end at it. Shape ``(..., W)``."""
    ref = np.asarray(reference, dtype=float)
    tables = np.asarray(windows, dtype=float)
    d = np.asarray(disagreement, dtype=float)
    total = np.cumsum(tables, axis=-3)
    out = np.full(tables.shape[:-2], -np.inf)
    for length in range(1, min(span, tables.shape[-3]) + 1):
        pooled = total.copy()
        pooled[..., length:, :, :] -= total[..., :-length, :, :]
        x = _drops(ref[..., None, :, :], pooled, d)
        x[..., : length - 1] = -np.inf  # the first windows have no span this long
        out = np.maximum(out, x)
    return out


def past_scan(windows: ArrayLike, disagreement: ArrayLike, span: int = SPAN) -> np.ndarray:
    """Each window's scan against its past: the largest studentised drop of the tables
    pooled over the spans of at most ``span`` of ``windows`` (``..., W, k, k``, in stream
    order) that end at it, below all the windows before the span, pooled. The first window
    has no past (``-inf``). Shape ``(..., W)``."""
    tables = np.asarray(windows, dtype=float)
    d = np.asarray(disagreement, dtype=float)
    total = np.cumsum(tables, axis=-3)
    count = tables.shape[-3]
    out = np.full(tables.shape[:-2], -np.inf)
    for length in range(1, min(span, count - 1) + 1):
        before = total[..., : count - length, :, :]  # windows 0 .. w - length
        spans = total[..., length:, :, :] - before  # windows w - length + 1 .. w
        out[..., length:] = np.maximum(out[..., length:], _drops(before, spans, d))
    return out


def _scan(ref: np.ndarray, tables: np.ndarray, d: np.ndarray, span: int, past: bool):
    """The scan of ``tables`` against ``ref`` (``past``: against their past, ``ref`` the
    stream's first window, which is not tested)."""
    if not past:
        return span_scan(ref, tables, d, span)
    stream = np.concatenate([ref[..., None, :, :], tables], axis=-3)
    return past_scan(stream, d, span)[..., 1:]


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
) -> Alarm:
    """The alarm of the tested ``windows`` (confusion tables, in stream order) against the
    ``reference`` table; see the module docstring. With ``past``, ``reference`` is the
    stream's first window and each span is tested against all the windows before it
    (:func:`past_scan`). Seeded: the same inputs give the same threshold."""
    ref = np.asarray(reference, dtype=float)
    tables = np.asarray([np.asarray(w, dtype=float) for w in windows])
    d = np.asarray(disagreement, dtype=float)
    pooled = ref + tables.sum(axis=0)
    sizes = tables.sum(axis=(-1, -2))
    drops = _scan(ref, tables, d, 1, past)
    observed = _scan(ref, tables, d, span, past)
    null_max = _null_maxima(pooled, float(ref.sum()), sizes, d, simulations, (span, past), seed)
    threshold = float(np.quantile(null_max, 1 - alpha))
    largest = float(observed.max()) if observed.size else 0.0
    return Alarm(
        drops=drops.tolist(),
        scan=observed.tolist(),
        threshold=threshold,
        alarms=(observed > threshold).tolist(),
        p_value=float((null_max >= largest).mean()),
    )


def _null_maxima(pooled, n_ref, sizes, d, simulations, scan, seed) -> np.ndarray:
    """The largest scan of ``simulations`` streams with no drift. Each stream's table is
    first drawn from the pooled table's Dirichlet posterior
    (:func:`calibration.inference.intervals.dirichlet_tables`), then its reference and
    windows from that table: the null carries the uncertainty of the pooled estimate, which
    a plug-in null leaves out (a plug-in from a 100-label reference alarmed in 10-12% of
    streams at alpha = 0.05)."""
    shape = pooled.shape
    tables = dirichlet_tables(pooled, n_draws=simulations, seed=seed).reshape(simulations, -1)
    rng = np.random.default_rng([seed, 1])
    # Streams in blocks, so memory stays near BLOCK_CELLS numbers however many windows.
    block = max(1, BLOCK_CELLS // (pooled.size * (len(sizes) + 1)))
    out = []
    for start in range(0, simulations, block):
        p = tables[start : start + block]
        ref = rng.multinomial(int(n_ref), p).reshape(len(p), *shape)
        wins = np.stack([rng.multinomial(int(n), p) for n in sizes], axis=1)
        wins = wins.reshape(len(p), len(sizes), *shape)
        out.append(_scan(ref, wins, d, *scan).max(axis=-1))
    return np.concatenate(out)
