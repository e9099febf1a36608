"""Intervals and tests for proportions, normal estimates and any statistic of paired labels.

Every Wilson interval of the project is :func:`wilson_interval`; every normal (Wald)
interval ``estimate ± z·se`` is :func:`normal_interval`. Shared with the bias probes: the
exact two-sided binomial test and a seeded case-resampling (percentile) bootstrap. Means
and differences of means (t intervals) are in :mod:`calibration.inference.means`.

Memory does not grow with cases times resamples. :func:`bootstrap_indices_ci` draws the
resampled indices a block of resamples at a time (at most :data:`DRAW_BLOCK` indices
held at once); the blocks continue one seeded stream, so the intervals are those of one
``n_resamples x n`` draw, to the seed. A statistic of a contingency table (kappa, AC1,
weighted kappa of a confusion matrix) is resampled by :func:`bootstrap_table_ci`, which
draws the table's cell counts from the multinomial distribution: resampling n cases with
replacement gives exactly that distribution of counts, at a cost independent of n.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

DEFAULT_RESAMPLES = 2000  # every bootstrap in the project, CLI and service alike
# The most resamples a command draws for one interval: far past where a 95% interval
# settles, and a few megabytes of draws; past it numpy tries to allocate gigabytes.
MAX_RESAMPLES = 100_000
DRAW_BLOCK = 1 << 22  # resampled indices held at once (32 MiB of int64), whatever n
# The Dirichlet prior of :func:`posterior_table_ci`: a quarter of one case, spread evenly
# over the table's cells. Weight 1 (Perks) pulled the interval down so far that it missed
# below the truth in 8-15% of samples of an accurate judge on its own; a quarter keeps
# open the cells a small sample never reached (benchmarks/small_n_intervals.md).
POSTERIOR_PRIOR_WEIGHT = 0.25

__all__ = [
    "DEFAULT_RESAMPLES",
    "binomial_lower_tail",
    "binomial_test_p",
    "bootstrap_ci",
    "bootstrap_indices_ci",
    "clopper_pearson_interval",
    "clopper_pearson_upper",
    "bootstrap_table_ci",
    "dirichlet_tables",
    "posterior_table_ci",
    "holm_adjust",
    "normal_interval",
    "normal_quantile",
    "sign_test_p",
    "t_quantile",
    "wilson_interval",
]


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n``.

    Formula: ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)`` with ``z`` the normal
    quantile for ``confidence``. Unlike the Wald interval it stays inside [0, 1] and keeps
    close to its nominal coverage for small n and for rates near 0 or 1.

    Read it as the range of true rates compatible with what was seen. ``n == 0`` gives
    ``(nan, nan)``: nothing was observed.

    Computed by ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``.

    Reference: Wilson (1927), JASA 22(158); Brown, Cai and DasGupta (2001), Stat. Sci. 16(2).
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return (float("nan"), float("nan"))
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    # At p = 0 (or 1) the bound is exactly 0 (or 1); floating point leaves ~1e-17 otherwise.
    low = 0.0 if successes == 0 else max(0.0, float(ci.low))
    high = 1.0 if successes == n else min(1.0, float(ci.high))
    return (low, high)


def clopper_pearson_interval(
    successes: float, n: float, *, confidence: float = 0.95
) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval of a proportion: the rates ``π`` for which neither
    tail of ``Binomial(n, π)`` at ``successes`` is below ``(1 - confidence)/2``.

    Never narrower than its evidence: 3 of 3 gives ``[0.292, 1]``, 10 of 10
    ``[0.692, 1]``. Computed from the beta quantiles the binomial tails equal,
    ``B(α/2; x, n - x + 1)`` and ``B(1 - α/2; x + 1, n - x)`` (``scipy.stats.beta.ppf``):
    the bounds of ``scipy.stats.binomtest(...).proportion_ci(method="exact")``, which
    finds them by root-finding, a hundred times slower (the tests check the two agree);
    ``(nan, nan)`` when ``n == 0``. Counts need not be whole (an effective size). Reference: Clopper and Pearson (1934).
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return (math.nan, math.nan)
    tail = (1 - confidence) / 2
    low = 0.0 if successes == 0 else float(stats.beta.ppf(tail, successes, n - successes + 1))
    high = 1.0 if successes == n else float(stats.beta.isf(tail, successes + 1, n - successes))
    return (low, high)


def clopper_pearson_upper(k: ArrayLike, n: ArrayLike, *, delta: float) -> np.ndarray:
    """The exact one-sided upper bound at level ``1 - delta`` on a binomial rate.

    ``u = Beta.ppf(1 - delta, k + 1, n - k)`` (``1`` when ``k = n``): the largest rate
    ``p`` with ``P(Binomial(n, p) <= k) >= delta``. How to read it: with probability at
    least ``1 - delta`` the true rate is at most ``u``. The same figure as
    ``scipy.stats.binomtest(k, n, alternative="less").proportion_ci(1 - delta).high``.
    Reference: Clopper and Pearson (1934), Biometrika 26(4).
    """
    k_, n_ = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        upper = stats.beta.ppf(1 - delta, k_ + 1, np.maximum(n_ - k_, 1e-300))
    return np.where(k_ >= n_, 1.0, upper)


def binomial_lower_tail(k: ArrayLike, n: ArrayLike, rate: float) -> np.ndarray:
    """``P(Binomial(n, rate) <= k)``: the exact one-sided p-value of ``H: rate >= rate``
    against fewer events, from ``scipy.stats.binom.cdf``. ``p <= delta`` exactly when
    :func:`clopper_pearson_upper` at ``delta`` is at most ``rate`` (for ``k < n``)."""
    return np.asarray(stats.binom.cdf(np.asarray(k), np.asarray(n), rate), dtype=float)


def normal_quantile(confidence: float = 0.95) -> float:
    """``z``, the two-sided standard normal quantile: ``Φ⁻¹(0.5 + confidence/2)``
    (1.959964 for 0.95), from ``scipy.stats.norm.ppf``."""
    return float(stats.norm.ppf(0.5 + confidence / 2))


def t_quantile(confidence: float, df: float) -> float:
    """Student's two-sided quantile ``t(0.5 + confidence/2; df)`` (2.262 for 0.95 and 9
    degrees of freedom), from ``scipy.stats.t.ppf``. Reference: Student (1908)."""
    return float(stats.t.ppf(0.5 + confidence / 2, df))


def normal_interval(
    estimate: float, std_error: float, *, confidence: float = 0.95
) -> tuple[float, float]:
    """Normal (Wald) interval ``estimate ± z·se``, ``z`` = :func:`normal_quantile`.

    Computed by ``scipy.stats.norm.interval(confidence, loc=estimate, scale=se)``. A
    standard error of 0 gives a zero-width interval at the estimate (scipy refuses a scale
    of 0); a non-finite estimate or standard error gives ``(nan, nan)``. Read it as the
    values compatible with the estimate when its sampling distribution is close to normal
    (large samples); for a proportion prefer :func:`wilson_interval`.

    Reference: Casella and Berger (2002), Statistical Inference, 2nd ed., sec. 9.2.
    """
    if not (math.isfinite(estimate) and math.isfinite(std_error)) or std_error < 0:
        return (math.nan, math.nan)
    if std_error == 0:
        return (float(estimate), float(estimate))
    low, high = stats.norm.interval(confidence, loc=estimate, scale=std_error)
    return (float(low), float(high))


def binomial_test_p(k: int, n: int, p: float = 0.5) -> float:
    """Exact two-sided binomial test p-value for ``k`` successes in ``n`` trials.

    Sums the probabilities of every outcome no more likely than ``k`` under
    ``Binomial(n, p)`` (scipy.stats.binomtest). A small value says the observed rate is
    unlikely if the true rate were ``p`` (for a probe: if there were no bias).
    ``n == 0`` gives ``nan``.

    Reference: scipy.stats.binomtest; Clopper and Pearson (1934), Biometrika 26(4).
    """
    if n == 0:
        return float("nan")
    return float(stats.binomtest(k, n, p, alternative="two-sided").pvalue)


def sign_test_p(wins: int, losses: int) -> float:
    """Exact two-sided sign test p-value for ``wins`` against ``losses`` (ties left out).

    Under the null hypothesis of no difference each non-tied case is a fair coin, so the
    p-value is the two-sided binomial test of ``wins`` in ``wins + losses`` trials at 1/2.
    ``1.0`` when every case is a tie (nothing tells the systems apart).

    Reference: Dixon and Mood (1946), JASA 41(236); statsmodels'
    ``descriptivestats.sign_test``, which the tests check it against.
    """
    if wins < 0 or losses < 0:
        raise ValueError(f"counts must be >= 0, got wins={wins}, losses={losses}")
    if wins + losses == 0:
        return 1.0
    return binomial_test_p(wins, wins + losses, 0.5)


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    Sort the m p-values ascending, p(1) <= ... <= p(m); the adjusted value of p(i) is
    ``max over j <= i of min(1, (m - j + 1) p(j))``. A metric is significant at family-wise
    level ``alpha`` when its adjusted value is below ``alpha``: the same rejections as
    comparing p(i) with alpha / (m - i + 1) and stopping at the first that fails. ``nan``
    entries (an undefined test) stay ``nan`` and do not count in m.

    Reference: Holm (1979), Scand. J. Stat. 6(2); statsmodels'
    ``multipletests(method="holm")``, which the tests check it against.
    """
    values = np.asarray(p_values, dtype=float)
    out = np.full(len(values), np.nan)
    defined = np.flatnonzero(np.isfinite(values))
    m = len(defined)
    if m == 0:
        return out.tolist()
    order = defined[np.argsort(values[defined], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * values[order])
    out[order] = np.maximum.accumulate(scaled)
    return out.tolist()


Statistic = Callable[[np.ndarray, np.ndarray], float]


def bootstrap_indices_ci(
    n: int,
    statistic: Callable[[np.ndarray], float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(index)`` over resampled case indices.

    Each resample draws ``n`` indices in ``0..n-1`` with replacement; the statistic sees
    them and picks its own rows (an item's several ratings stay together). Resamples
    where it is undefined (``nan``) are left out; ``(nan, nan)`` if more than half are, or
    if ``n == 0``. Seeded. See :func:`bootstrap_ci` for paired labels.

    Reference: Efron and Tibshirani (1993), An Introduction to the Bootstrap, ch. 13.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if n == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    block = max(1, DRAW_BLOCK // n)
    values = np.empty(n_resamples, dtype=float)
    for start in range(0, n_resamples, block):
        # One seeded stream drawn block by block: the same indices as one (n_resamples, n)
        # draw, without holding it.
        draws = rng.integers(0, n, size=(min(block, n_resamples - start), n))
        for offset, idx in enumerate(draws):
            values[start + offset] = statistic(idx)
    return _percentile_interval(values, confidence)


def bootstrap_table_ci(
    table: ArrayLike,
    statistic: Callable[[np.ndarray], float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
    batched: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(table)`` for a table of case counts.
    ``batched``, when given, is the same statistic of a stack of tables ``(R, *shape)``
    at once (one numpy pass instead of a Python call a resample; the same draws).

    Resampling the ``n = table.sum()`` cases with replacement and counting them into the
    table's cells gives counts ``~ Multinomial(n, table / n)``; each resample draws those
    counts directly (``numpy.random.Generator.multinomial``), so time and memory depend on
    the number of cells and resamples, never on n. The bootstrap distribution is the one
    of :func:`bootstrap_ci` on the cases behind the table; the random stream differs, so
    the bounds agree with it within Monte-Carlo error, not to the seed. Resamples where the
    statistic is undefined are left out as in :func:`bootstrap_indices_ci`; ``(nan, nan)``
    when more than half are, or when the table is empty. Seeded.

    Reference: Efron and Tibshirani (1993), An Introduction to the Bootstrap, ch. 13
    (the bootstrap of a multinomial sample); Bishop, Fienberg and Holland (1975),
    Discrete Multivariate Analysis, ch. 13.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    counts = np.asarray(table)
    if np.any(counts < 0) or not np.all(np.equal(np.mod(counts, 1), 0)):
        raise ValueError("a table of case counts holds whole numbers >= 0")
    n = int(counts.sum())
    if n == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    cells = counts.ravel().astype(float) / n
    draws = rng.multinomial(n, cells, size=n_resamples)
    if batched is not None:
        values = np.asarray(batched(draws.reshape(n_resamples, *counts.shape)), dtype=float)
    else:
        values = np.array([statistic(d.reshape(counts.shape)) for d in draws], dtype=float)
    return _percentile_interval(values, confidence)


def dirichlet_tables(
    table: ArrayLike,
    *,
    n_draws: int = DEFAULT_RESAMPLES,
    prior_weight: float = POSTERIOR_PRIOR_WEIGHT,
    seed: int = 0,
) -> np.ndarray:
    """``n_draws`` tables of cell probabilities drawn from their posterior given the case
    counts ``table``, under a Dirichlet prior of total weight ``prior_weight`` spread
    evenly over the cells: ``Dirichlet(counts + prior_weight / cells)``, each draw the
    cells' independent gamma variates over their sum. Shape ``(n_draws, *table.shape)``.
    Seeded.

    Reference: Gelman et al. (2013), Bayesian Data Analysis, 3rd ed., sec. 3.4 (the
    multinomial model with a Dirichlet prior); Rubin (1981), Ann. Stat. 9(1) (the Bayesian
    bootstrap, the case ``prior_weight = 0``).
    """
    counts = np.asarray(table, dtype=float)
    if n_draws < 1:
        raise ValueError(f"n_draws must be at least 1, got {n_draws}")
    if np.any(counts < 0) or counts.size == 0:
        raise ValueError("a table of case counts holds numbers >= 0")
    if not prior_weight > 0:
        raise ValueError(f"prior_weight must be above 0, got {prior_weight}")
    alpha = counts + prior_weight / counts.size
    rng = np.random.default_rng(seed)
    gammas = rng.gamma(np.broadcast_to(alpha, (n_draws, *counts.shape)))
    return gammas / gammas.sum(axis=tuple(range(1, gammas.ndim)), keepdims=True)


def posterior_table_ci(
    table: ArrayLike,
    statistic: Callable[[np.ndarray], float],
    *,
    n_draws: int = DEFAULT_RESAMPLES,
    prior_weight: float = POSTERIOR_PRIOR_WEIGHT,
    confidence: float = 0.95,
    seed: int = 0,
    batched: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[float, float]:
    """Equal-tailed credible interval of ``statistic`` of a table's cell probabilities,
    from :func:`dirichlet_tables` (the statistic sees probabilities summing to 1, so it
    must not depend on the total: kappa, AC1 and weighted kappa do not). ``(nan, nan)``
    when more than half of the draws leave it undefined.

    Unlike the bootstrap, which only reaches cells the sample reached, the prior keeps
    every cell possible: 12 exact agreements and 3 off-by-one of 15 on a 1-5 scale give a
    bootstrap that never sees an error of two points, so its interval of weighted kappa
    sits above a truth that has them. Its shrinkage pulls the other way (it missed below
    the truth where the bootstrap missed above), so the project reports the two together
    (:func:`calibration.agreement.small_sample.kappa_type_interval`). ``batched``: the
    statistic of the whole stack of draws at once, as in :func:`bootstrap_table_ci`."""
    draws = dirichlet_tables(table, n_draws=n_draws, prior_weight=prior_weight, seed=seed)
    if batched is not None:
        values = np.asarray(batched(draws), dtype=float)
    else:
        values = np.array([statistic(d) for d in draws], dtype=float)
    return _percentile_interval(values, confidence)


def _percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The ``(1 ± confidence)/2`` quantiles of the defined resampled values; ``(nan, nan)``
    when fewer than half of them are defined."""
    finite = values[np.isfinite(values)]
    if len(finite) == 0 or len(finite) < len(values) / 2:
        return (float("nan"), float("nan"))
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(finite, [alpha, 1 - alpha])
    return (float(lo), float(hi))


def bootstrap_ci(
    y_human: ArrayLike,
    y_judge: ArrayLike,
    statistic: Statistic,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(y_human, y_judge)``, resampling cases.

    Each resample draws n cases with replacement, keeping each case's two labels together,
    and recomputes the statistic; the interval is the ``(1-confidence)/2`` and
    ``(1+confidence)/2`` quantiles of those values. Resamples where the statistic is
    undefined (``nan``, e.g. kappa when a resample has one class only) are left out; if
    more than half are undefined the interval is ``(nan, nan)``. Seeded: the same inputs
    and seed give the same interval.

    Reference: Efron and Tibshirani (1993), An Introduction to the Bootstrap, ch. 13.
    """
    h = np.asarray(y_human)
    j = np.asarray(y_judge)
    if len(h) != len(j):
        raise ValueError(f"y_human has {len(h)} cases, y_judge {len(j)}")
    return bootstrap_indices_ci(
        len(h),
        lambda idx: statistic(h[idx], j[idx]),
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )
