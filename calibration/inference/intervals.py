"""Intervals and tests for proportions, normal estimates and any statistic of paired labels.

Every Wilson interval of the project is :func:`wilson_interval`; every normal (Wald)
interval ``estimate ± z·se`` is :func:`normal_interval`. Shared with the bias probes: the
exact two-sided binomial test and a seeded case-resampling (percentile) bootstrap. Means
and differences of means (t intervals) are in :mod:`calibration.inference.means`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

DEFAULT_RESAMPLES = 2000  # every bootstrap in the project, CLI and service alike

__all__ = [
    "DEFAULT_RESAMPLES",
    "binomial_test_p",
    "bootstrap_ci",
    "bootstrap_indices_ci",
    "normal_interval",
    "normal_quantile",
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


def normal_quantile(confidence: float = 0.95) -> float:
    """``z``, the two-sided standard normal quantile: ``Φ⁻¹(0.5 + confidence/2)``
    (1.959964 for 0.95), from ``scipy.stats.norm.ppf``."""
    return float(stats.norm.ppf(0.5 + confidence / 2))


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
    draws = rng.integers(0, n, size=(n_resamples, n))
    values = np.array([statistic(idx) for idx in draws], dtype=float)
    finite = values[np.isfinite(values)]
    if len(finite) < n_resamples / 2:
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
