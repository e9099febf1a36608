"""A judge's pass rate corrected for its measured errors (Rogan-Gladen, two-phase design).

The design this module assumes is the one a calibration run has: a judge grades ``N``
cases; people label a random subset of ``m`` of them (``m <= N``). The judge's apparent
pass rate ``p`` comes from all ``N`` judged cases; its sensitivity ``Se`` (it passes what
people pass) and specificity ``Sp`` (it fails what people fail) from the ``m`` labelled
ones. The cases only the judge saw are what the correction is for: with ``m = N`` there is
nothing to correct, and the corrected rate is the human rate with its Wilson interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from calibration.inference.intervals import normal_quantile, wilson_interval

__all__ = ["CorrectedRate", "corrected_pass_rate", "rogan_gladen", "rogan_gladen_interval"]


def rogan_gladen(apparent_rate: float, sensitivity: float, specificity: float) -> float:
    """True rate implied by an imperfect judge's apparent rate.

    Formula: ``π = (p + Sp - 1) / (Se + Sp - 1)``, clipped to [0, 1], where ``p`` is the
    share of cases the judge passes, ``Se`` its true-positive rate (passes what humans
    pass) and ``Sp`` its true-negative rate (fails what humans fail), both measured against
    human labels. It inverts ``p = π·Se + (1-π)·(1-Sp)``. A judge that passes too readily
    (low Sp) inflates ``p``; the correction removes that.

    Undefined (``nan``) when ``Se + Sp <= 1``: the judge is no better than a coin at
    telling the classes apart, so its verdicts carry no information about the true rate.

    Reference: Rogan and Gladen (1978), Am. J. Epidemiol. 107(1).
    """
    youden = sensitivity + specificity - 1
    if not np.isfinite(youden) or youden <= 0 or not np.isfinite(apparent_rate):
        return float("nan")
    return float(min(1.0, max(0.0, (apparent_rate + specificity - 1) / youden)))


def _shrunk_variance(successes: int, n: int, z2: float) -> float:
    """``p̃(1-p̃)·n/(n+z²)`` with ``p̃ = (x + z²/2)/(n + z²)`` (Agresti and Coull 1998):
    a measured Se or Sp of exactly 1 still carries the uncertainty of a finite sample."""
    shrunk = (successes + z2 / 2) / (n + z2)
    return shrunk * (1 - shrunk) * n / (n + z2)


def rogan_gladen_interval(
    judged_positive: int,
    n_judged: int,
    *,
    tp: int,
    fn: int,
    tn: int,
    fp: int,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Score interval for the corrected rate when the labelled cases are among the judged.

    ``n_judged`` cases were judged, ``judged_positive`` of them passed; ``tp, fn, tn, fp``
    count the labelled ones (a random subset of the judged, so
    ``m = tp+fn+tn+fp <= n_judged``). With ``A = p + Sp - 1`` and ``Y = Se + Sp - 1`` the
    interval is every ``π₀`` in [0, 1] that the score statistic does not reject:

    ``(A - π₀ Y)² <= z² · V(π₀)``,
    ``V(π₀) = Y² π₀(1-π₀)/N + (1/m - 1/N) · (π₀ Se(1-Se) + (1-π₀) Sp(1-Sp))``,

    a quadratic inequality in ``π₀`` solved in closed form. ``V`` is the delta-method
    variance of ``A - π₀ Y`` under the two-phase design: the first term is the sampling
    variation of the true rate itself, the second that of the judge's errors measured on
    ``m`` labelled cases instead of all ``N`` (zero when every judged case is labelled).
    Se and Sp in ``V`` use the Agresti-Coull adjustment, so a perfect measured Sp (the
    judge never passed a failure on a small sample) does not claim certainty.

    How to read it: the range of true pass rates compatible with both the judge's verdicts
    on every case and its measured error rates. With ``m = N`` it is exactly the Wilson
    interval of the human rate; it widens as the judge's verdicts carry less information
    (``Y`` near 0) and as fewer of the judged cases are labelled. Like Wilson's (and
    unlike a Wald or delta-method interval) it does not rely on the ratio being normal,
    which fails when ``Y`` is small. ``(nan, nan)`` when either class is missing from the
    labels, ``Y <= 0``, or no rate in [0, 1] passes the test (the judge's rate and its
    measured errors contradict each other at this confidence, as when ``Y`` is near 0);
    :func:`corrected_pass_rate` then reports the rate undefined, saying why, instead of
    a point.

    Seeded simulations (tests/unit/test_calibration_rates.py) check that it covers the full-data
    human rate at least at its nominal rate.

    References: Rogan and Gladen (1978); Tenenbein (1970), JASA 65(331) (double sampling
    with misclassification); Wilson (1927), JASA 22(158) (score inversion); Agresti and
    Coull (1998), Am. Stat. 52(2); Lang and Reiczigel (2014), Prev. Vet. Med. 113(1).
    """
    n_pos, n_neg = tp + fn, tn + fp
    m = n_pos + n_neg
    if m > n_judged:
        raise ValueError(f"{m} labelled cases but only {n_judged} judged: labels are a subset")
    nan = (float("nan"), float("nan"))
    if n_pos == 0 or n_neg == 0:
        return nan
    se, sp = tp / n_pos, tn / n_neg
    youden = se + sp - 1
    if youden <= 0:
        return nan
    z2 = normal_quantile(confidence) ** 2
    a = judged_positive / n_judged + sp - 1
    fpc = 1 / m - 1 / n_judged
    s1, s0 = _shrunk_variance(tp, n_pos, z2), _shrunk_variance(tn, n_neg, z2)
    # (A - tY)² - z²·V(t) <= 0 written as qa·t² + qb·t + qc <= 0.
    qa = youden**2 * (1 + z2 / n_judged)
    qb = -2 * a * youden - z2 * (youden**2 / n_judged + fpc * (s1 - s0))
    qc = a * a - z2 * fpc * s0
    disc = qb * qb - 4 * qa * qc
    if disc < 0:  # no rate fits the score inequality: the caller falls back
        return nan
    root = math.sqrt(disc)
    low, high = (-qb - root) / (2 * qa), (-qb + root) / (2 * qa)
    if high < 0 or low > 1:  # every rate that fits lies off [0, 1]
        return nan
    return (min(1.0, max(0.0, low)), min(1.0, max(0.0, high)))


@dataclass(frozen=True)
class CorrectedRate:
    """The corrected pass rate, its interval and what it was computed from."""

    rate: float
    ci95: tuple[float, float] | None
    n_judged: int
    n_labelled: int
    apparent_rate: float
    reason: str | None


def corrected_pass_rate(
    judged_positive: int, n_judged: int, *, tp: int, fn: int, tn: int, fp: int
) -> CorrectedRate:
    """:func:`rogan_gladen` on the judge's rate over all judged cases, with Se and Sp from
    the labelled ones, and :func:`rogan_gladen_interval`; ``reason`` says why it is
    undefined (``nan``) when it is.

    With every judged case labelled (``m = N``) there is nothing to correct: the rate is
    the human rate with its Wilson interval, whatever the judge's Se and Sp (it is
    defined even when ``Se + Sp <= 1`` or one class is missing). Where the score interval
    finds no rate in [0, 1] (``Y`` near 0) the corrected rate is undefined and ``reason``
    says why and gives the labelled cases' own rate with its Wilson interval: never a
    point interval."""
    n_pos, n_neg = tp + fn, tn + fp
    m = n_pos + n_neg
    apparent = judged_positive / n_judged if n_judged else float("nan")
    sizes = (n_judged, m, apparent)
    if m and m == n_judged:  # every judged case labelled: the rate is the human one
        return CorrectedRate(n_pos / m, wilson_interval(n_pos, m), *sizes, None)
    if n_pos == 0 or n_neg == 0:
        reason = "corrected rate undefined: the labelled cases hold only one class"
        return CorrectedRate(float("nan"), None, *sizes, reason)
    se, sp = tp / n_pos, tn / n_neg
    rate = rogan_gladen(apparent, se, sp)
    if not math.isfinite(rate):
        reason = (
            f"corrected rate undefined: sensitivity {se:.3f} + specificity {sp:.3f} <= 1, "
            "the judge's verdicts carry no information about the true rate"
        )
        return CorrectedRate(rate, None, *sizes, reason)
    ci = rogan_gladen_interval(judged_positive, n_judged, tp=tp, fn=fn, tn=tn, fp=fp)
    if not all(math.isfinite(b) for b in ci):
        low, high = wilson_interval(n_pos, m)
        reason = (
            f"corrected rate undefined: no rate in [0, 1] fits the judge's rate "
            f"{apparent:.3f} with sensitivity {se:.3f} and specificity {sp:.3f} at 95% "
            f"(Se + Sp - 1 = {se + sp - 1:.3f}: its verdicts say almost nothing about the "
            f"true rate); the {m} labelled cases alone give {n_pos / m:.3f} "
            f"[{low:.3f}, {high:.3f}] (Wilson)"
        )
        return CorrectedRate(float("nan"), None, *sizes, reason)
    return CorrectedRate(rate, ci, *sizes, None)
