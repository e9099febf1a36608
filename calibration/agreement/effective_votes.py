"""How many independent votes a panel of ``k`` jurors is worth, with an interval.

Kish's design effect turns the jurors' mean pairwise correlation into an effective number
of votes. Two correlations are on offer, and they answer different questions:

- the correlation of the jurors' **errors** (1 where a juror's label differs from the
  human's): do they fail on the same cases? This is the figure a majority vote depends on
  (independent errors are outvoted, shared ones are not), and the one gates read when
  human labels exist (``n_eff_errors``);
- the correlation of the jurors' **verdicts** (scores): do they say the same thing? Jurors
  that are all right agree, so this reads as redundancy even when their errors are
  independent (three accurate jurors with independent errors: about 1.7 of 3). It is the
  only figure without human labels (``n_eff_verdicts``).

Both are kept in ``[1, k]``: a negative mean correlation (errors that avoid each other,
e.g. three jurors each wrong on a different case, mean ``-1/(k-1)``, where the raw formula
divides by 0) counts as independent, ``k``, never more. The interval is a percentile
bootstrap over cases (a case's votes stay together), so it is as wide as the cases make
it, and widened to hold Fisher's z interval of the mean correlation (:func:`_fisher_interval`:
the percentile bootstrap alone covered 0.84-0.92 at 10-30 cases). Fisher's spread is the
bootstrap's, never below one correlation's on ``n`` cases (``1/sqrt(n - 3)``), and its
centre is held within ``1 - 1/n_info`` of ±1, ``n_info`` the cases the correlation rests on
(:func:`informative_cases`): with errors shared on a few hard cases (a fifth of cases
hard, 60% errors there, 8% elsewhere) the earlier interval covered 0.79 (3 jurors, 10
cases) to 0.91-0.94 (3 and 5 jurors, 20-30 cases), mostly from resamples of two or three
shared errors that read as n_eff 1 for sure; now 0.98-1.00, the interval the whole range
[1, k] at 10 cases about half the time (``benchmarks/n_eff_coverage.md``). Where no pair of jurors varies, in the data or in most resamples, the interval is
the whole range with its reason. The bootstrap's estimate of the small-sample bias (mean of the resamples minus the
estimate) is reported beside it, not subtracted (a bias estimate from a few cases is as
noisy as the figure).

References: Kish (1965), *Survey Sampling*, ch. 5 (design effect ``1 + (m - 1) rho``);
Efron and Tibshirani (1993), ch. 10 (bootstrap estimate of bias) and ch. 13.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from calibration.inference.intervals import t_quantile

__all__ = ["effective_votes", "kish_n_eff", "mean_pairwise_correlation"]

N_EFF_METHOD = (
    "Kish k / (1 + (k - 1) * max(rho_bar, 0)), in [1, k]; interval: percentile bootstrap "
    "over cases, widened to hold Fisher's z interval of rho_bar (spread: the bootstrap's, "
    "at least 1/sqrt(n - 3); Student's t quantile, n - 1 degrees of freedom; centre held "
    "within 1 - 1/n_informative of +-1)"
)
FISHER_CLIP = 0.9999  # |rho| at which atanh is taken: a resample of perfect agreement
DEGENERATE = (
    "every bootstrap resample gave the same n_eff: an interval of width 0 is no evidence, "
    "the interval is the whole range [1, k]"
)
UNDEFINED = (
    "no pair of jurors varies on these cases: nothing measures their correlation, the "
    "interval is the whole range [1, k]"
)
SMALL = 30  # below this many cases the note says the figure is rough


def kish_n_eff(k: int, rho_bar: float) -> float:
    """Kish's effective number of independent votes among ``k`` equally correlated ones.

    Formula: ``n_eff = k / (1 + (k - 1) * max(rho_bar, 0))``, the design effect of a
    cluster of ``k`` observations with intra-cluster correlation ``rho_bar`` (here the
    jurors' mean pairwise correlation). Read: ``k`` when the jurors are uncorrelated, 1 when
    they are perfectly correlated (one vote, asked ``k`` times). A negative ``rho_bar``
    counts as 0: votes that avoid each other are independent votes, not more than ``k``
    (the raw formula passes ``k`` and divides by 0 at ``rho_bar = -1/(k-1)``). Always in
    ``[1, k]``; ``nan`` when ``rho_bar`` is.

    Reference: Kish (1965), *Survey Sampling*, Wiley, ch. 5 (the design effect
    ``1 + (m - 1) rho``); applied to LLM juries in arXiv 2605.29800.
    """
    if k < 1:
        raise ValueError(f"a panel needs at least one juror, got k={k}")
    if math.isnan(rho_bar):
        return float("nan")
    rho = min(1.0, max(0.0, float(rho_bar)))
    return k / (1 + (k - 1) * rho)


def mean_pairwise_correlation(scores: Sequence[Sequence[float | None]] | np.ndarray) -> float:
    """The mean over juror pairs of the Pearson correlation of their scores, each pair on
    the cases both scored; a pair where either side is constant is left out. ``nan`` when
    no pair has a correlation."""
    values = _pair_correlations(_numeric(scores))
    defined = [v for v in values if not math.isnan(v)]
    return float(np.mean(defined)) if defined else float("nan")


def _pair_correlations(table: np.ndarray) -> list[float]:
    out = []
    for a, b in itertools.combinations(range(table.shape[1]), 2):
        both = ~np.isnan(table[:, a]) & ~np.isnan(table[:, b])
        x, y = table[both, a], table[both, b]
        ok = len(x) >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0
        out.append(float(np.corrcoef(x, y)[0, 1]) if ok else float("nan"))
    return out


def effective_votes(
    table: Sequence[Sequence[float | None]] | np.ndarray,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Kish's n_eff of the columns of ``table`` (cases x jurors; ``None``/nan = no value)
    with a percentile bootstrap interval over cases and the bootstrap's bias estimate.

    Returns ``{"n_eff", "n_eff_ci95", "n_eff_bias", "n_eff_note", "n_eff_ci95_reason",
    "mean_correlation"}`` (the interval is ``[1, k]`` with its reason where every resample
    gave one value),
    each ``None`` when undefined (no pair of jurors with varying values; the interval also
    when most resamples have none, or ``n_boot`` is 0). Never raises on a well-formed
    table; every figure lies in ``[1, k]``.
    """
    data = _numeric(table)
    n, k = data.shape
    rho = mean_pairwise_correlation(data)
    n_eff = kish_n_eff(k, rho) if k >= 1 else float("nan")
    ci: list[float] | None = None
    bias: float | None = None
    reason: str | None = None
    if n >= 2 and n_boot >= 1 and not math.isnan(n_eff):
        rng = np.random.default_rng(seed)
        rhos = _resampled_correlations(data, rng.integers(0, n, (n_boot, n)))
        rhos = rhos[~np.isnan(rhos)]
        finite = np.array([kish_n_eff(k, r) for r in rhos])
        if len(finite) >= n_boot / 2:
            tail = (1 - confidence) / 2 * 100
            lo, hi = np.percentile(finite, [tail, 100 - tail])
            z_lo, z_hi = _fisher_interval(rho, rhos, n, k, confidence, informative_cases(data))
            ci = [round(float(min(lo, z_lo, n_eff)), 6), round(float(max(hi, z_hi, n_eff)), 6)]
            bias = round(float(finite.mean() - n_eff), 6)
            if ci[1] - ci[0] <= 1e-12:  # every resample alike: no evidence, the whole range
                ci, reason = [1.0, float(k)], DEGENERATE
        else:  # most resamples left no pair varying: the data cannot bound the figure
            ci, reason = [1.0, float(k)], UNDEFINED
    if math.isnan(n_eff) and n >= 2 and n_boot >= 1 and k >= 2:
        ci, reason = [1.0, float(k)], UNDEFINED
    note = None
    if not math.isnan(n_eff) and n < SMALL:
        note = (
            f"only {n} cases (under {SMALL}): the correlation behind n_eff is rough and "
            "n_eff is biased at this size; read its interval"
        )
    return {
        "n_eff": None if math.isnan(n_eff) else round(n_eff, 6),
        "n_eff_ci95": ci,
        "n_eff_bias": bias,
        "n_eff_note": note,
        "n_eff_ci95_reason": reason,
        "mean_correlation": None if math.isnan(rho) else round(rho, 6),
    }


def _resampled_correlations(data: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """:func:`mean_pairwise_correlation` of each resample ``data[picks[b]]``: all at once
    when no value is missing, else one resample at a time (pairs on their common cases)."""
    if np.isnan(data).any():
        return np.array([mean_pairwise_correlation(data[take]) for take in picks])
    drawn = data[picks]  # (B, n, k)
    centred = drawn - drawn.mean(axis=1, keepdims=True)
    k = data.shape[1]
    values = []
    for a, b in itertools.combinations(range(k), 2):
        x, y = centred[:, :, a], centred[:, :, b]
        sxx, syy = (x * x).sum(axis=1), (y * y).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (x * y).sum(axis=1) / np.sqrt(sxx * syy)
        # a constant side (as np.ptp == 0) has no correlation, as in _pair_correlations
        values.append(np.where((sxx > 1e-12) & (syy > 1e-12), np.clip(r, -1, 1), np.nan))
    stacked = np.stack(values, axis=1)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample with no pair: nan
        return np.nanmean(stacked, axis=1)


def informative_cases(data: np.ndarray) -> int:
    """The cases a correlation of these columns rests on: ``n``, or, for 0/1 columns, at
    most twice the rarer value's count in the column where it is rarest (plus two). Three
    jurors who each err on 2 of 30 cases give 6, not 30: a correlation of rare events
    is read off the few cases where they happen."""
    n = len(data)
    values = data[~np.isnan(data)]
    if not np.isin(values, (0.0, 1.0)).all():
        return n
    ones = np.nansum(data, axis=0)
    seen = (~np.isnan(data)).sum(axis=0)
    rare = np.minimum(ones, seen - ones)
    varying = rare[rare > 0]
    return n if not len(varying) else int(min(n, 2 * varying.min() + 2))


def _fisher_interval(
    rho: float, rhos: np.ndarray, n: int, k: int, confidence: float, informative: int
) -> tuple[float, float]:
    """n_eff at the ends of ``tanh(atanh(ρ̄) ± t(1-α/2; n-1)·s_z)``, ``s_z`` the standard
    deviation of the resampled ``atanh(ρ̄*)`` (|ρ| clipped at :data:`FISHER_CLIP`).

    The percentile bootstrap of a correlation from 10-30 cases covered 0.84-0.92: a
    resample of n cases holds about 0.63n distinct ones, and the correlation's skewed
    sampling distribution is read straight off it. On Fisher's z scale the distribution
    is close to normal; Student's quantile allows for a spread estimated from n cases.
    The hull of the two covered 0.95-1.00 for three jurors at 10-30 cases
    (``benchmarks/small_n_intervals.md``). Reference: Fisher (1921), Metron 1; Efron and
    Tibshirani (1993), ch. 12-13 (bootstrap standard errors and intervals)."""
    z = np.arctanh(np.clip(rhos, -FISHER_CLIP, FISHER_CLIP))
    if len(z) < 2 or n < 2:
        return (float(k), 1.0)
    # a correlation of ±1 from a handful of informative cases is not a sure one: the
    # centre is held within 1 - 1/n_info of it (two errors shared by every juror in 10
    # cases read as n_eff 1 with an interval [1, 1.01])
    clip = min(FISHER_CLIP, 1 - 1 / max(informative, 2))
    centre = math.atanh(min(clip, max(-clip, rho)))
    # the bootstrap's spread, never below one correlation's on n cases (1/sqrt(n - 3)):
    # from 10-30 cases with rare errors the resamples understate it
    spread = max(float(np.std(z, ddof=1)), 1 / math.sqrt(max(n - 3, 1)))
    half = t_quantile(confidence, n - 1) * spread
    return (kish_n_eff(k, math.tanh(centre + half)), kish_n_eff(k, math.tanh(centre - half)))


def _numeric(scores: Sequence[Sequence[float | None]] | np.ndarray) -> np.ndarray:
    if isinstance(scores, np.ndarray) and scores.dtype.kind == "f":
        return scores.reshape(len(scores), -1)
    return np.asarray(
        [[np.nan if v is None else float(v) for v in row] for row in scores], dtype=float
    ).reshape(len(scores), -1)
