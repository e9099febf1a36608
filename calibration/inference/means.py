"""Intervals and tests for a mean, a paired change and a difference of two means.

Student's t interval of one mean (paired changes are the mean of the differences),
Welch's interval and test of a difference of means with unequal variances, and the
Wilcoxon signed-rank test of paired changes; each from scipy, with the edge cases the
bias probes rely on stated and kept: below two values a side the interval is
``(nan, nan)``; a sample with no spread (standard error 0) gives a zero-width interval at
its mean, where scipy would warn and divide 0 by 0.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = [
    "mean_interval",
    "mean_interval_from_moments",
    "welch_interval",
    "welch_p_value",
    "wilcoxon_p_value",
]

# Changes smaller than this are float noise (scores are on 0..1), not a change.
ZERO_CHANGE = 1e-12


def mean_interval(values: ArrayLike, *, confidence: float = 0.95) -> tuple[float, float]:
    """Student t interval of the mean of ``values`` (one sample, or paired differences).

    Formula: ``x̄ ± t(1-α/2; n-1)·s/√n`` with ``s`` the sample standard deviation
    (``ddof=1``). Computed by ``scipy.stats.ttest_1samp(values, 0).confidence_interval``.
    Read it as the range of true means compatible with the sample (exact for normal
    data, close for sums of many small effects). ``(nan, nan)`` below two values; a
    constant sample gives ``(x̄, x̄)``.

    Reference: Student (1908), Biometrika 6(1); scipy.stats.ttest_1samp.
    """
    array = np.asarray(values, dtype=float)
    if len(array) < 2:
        return (math.nan, math.nan)
    if not np.all(np.isfinite(array)):
        return (math.nan, math.nan)
    if float(array.std(ddof=1)) == 0:
        mean = float(array.mean())
        return (mean, mean)
    ci = stats.ttest_1samp(array, 0.0).confidence_interval(confidence_level=confidence)
    return (float(ci.low), float(ci.high))


def mean_interval_from_moments(
    mean: float, sd: float, n: int, *, confidence: float = 0.95
) -> tuple[float, float]:
    """The interval of :func:`mean_interval` from a sample's mean, standard deviation
    (``ddof=1``) and size alone, as a database returns them: ``x̄ ± t(1-α/2; n-1)·s/√n``.
    ``(nan, nan)`` below two values."""
    if n < 2 or not math.isfinite(mean) or not math.isfinite(sd):
        return (math.nan, math.nan)
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    return (mean - half, mean + half)


@contextmanager
def _constant_side_allowed() -> Iterator[None]:
    """scipy warns of "precision loss" whenever a sample is constant, unable to tell exact
    ties from nearly equal floats; here a side with no spread is exact (scores repeat), its
    variance 0 is right, and the other side carries the interval."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
        yield


def _two_samples(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray] | None:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) < 2 or len(y) < 2 or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return None
    return x, y


def welch_interval(a: ArrayLike, b: ArrayLike, *, confidence: float = 0.95) -> tuple[float, float]:
    """Welch t interval of ``mean(a) - mean(b)`` (the variances need not be equal).

    Formula: ``(ā - b̄) ± t(1-α/2; ν)·√(s²ₐ/nₐ + s²ᵦ/nᵦ)`` with the Welch-Satterthwaite
    degrees of freedom ``ν = (s²ₐ/nₐ + s²ᵦ/nᵦ)² / ((s²ₐ/nₐ)²/(nₐ-1) + (s²ᵦ/nᵦ)²/(nᵦ-1))``.
    Computed by ``scipy.stats.ttest_ind(a, b, equal_var=False).confidence_interval``.
    ``(nan, nan)`` below two values a side; zero-width at the difference when neither
    side varies (standard error 0).

    Reference: Welch (1947), Biometrika 34(1-2); Satterthwaite (1946), Biom. Bull. 2(6).
    """
    pair = _two_samples(a, b)
    if pair is None:
        return (math.nan, math.nan)
    x, y = pair
    if x.var(ddof=1) == 0 and y.var(ddof=1) == 0:
        diff = float(x.mean() - y.mean())
        return (diff, diff)
    with _constant_side_allowed():
        result = stats.ttest_ind(x, y, equal_var=False)
        ci = result.confidence_interval(confidence_level=confidence)
    return (float(ci.low), float(ci.high))


def welch_p_value(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sided Welch t-test p-value of ``mean(a) = mean(b)``; ``nan`` below two values a
    side or when no value varies (the test statistic is then 0/0).

    Small values say the two groups' means differ by more than their spread explains.
    Reference: Welch (1947); scipy.stats.ttest_ind(equal_var=False).
    """
    pair = _two_samples(a, b)
    if pair is None or np.var(np.concatenate(pair)) == 0:
        return math.nan
    with _constant_side_allowed():
        return float(stats.ttest_ind(*pair, equal_var=False).pvalue)


def wilcoxon_p_value(diffs: ArrayLike) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired differences (zeros dropped, the
    ``"wilcox"`` rule); ``nan`` when every difference is 0 (nothing changed).

    Small values say the changes lean one way more than chance would make them; unlike
    the t interval it uses only ranks, so a few large changes cannot dominate.
    Reference: Wilcoxon (1945), Biometrics Bull. 1(6); scipy.stats.wilcoxon.
    """
    array = np.asarray(diffs, dtype=float)
    if not np.any(np.abs(array) > ZERO_CHANGE):
        return math.nan
    return float(stats.wilcoxon(array, zero_method="wilcox").pvalue)
