"""The intervals of the PPI summary kept on the scale and never narrower than the labels allow.

A pass rate lies in [0, 1] and a mean score on its scale (0..1, or a rubric's 1..5), so
every interval of those is clipped to the scale. The normal intervals of PPI++ and of a
mean rest on the central limit theorem; with few labels, or labels that do not vary (a
standard error of 0, and an interval of width 0), they claim more than the labels say.
There the reported interval is the hull of the normal one and the labelled cases' own
score interval (Wilson's for a rate, its bounded-scale form for a mean,
:func:`calibration.agreement.small_sample.bounded_mean_interval`): four labels that are all
``unfaithful`` give a PPI++ pass rate of ``0`` with at least Wilson's ``[0, 0.49]``.
At :data:`calibration.agreement.small_sample.SMALL_SAMPLE` labels and more, with spread, the
normal interval stands as computed.

A mean of values that do not all lie at the scale's two ends (a 1-5 label of 3) is
different: the bounded-scale interval assumes the largest variance the scale allows and,
hulled in under 30 labels, was 2.2-3.1 times as wide as the mean's real spread at 10-30
labels. There the labelled cases' own interval is :func:`prior_mean_interval` (Student's
quantile around a posterior with one prior label spread over the scale's points).

PPI++'s own interval (a simple random sample) is :func:`posterior_ppi_interval` at every
n: the judge's errors read from a Dirichlet posterior of the labelled (human, judge) pairs,
with Student's quantile. For 0/1 values it is still hulled with Wilson's interval under
30 labels; a mean of more than two points stands alone (hulled, it was 1.7x its own
spread at 18 labels). Coverage and width in ``benchmarks/small_n_intervals.md``.

References: Angelopoulos, Duchi and Zrnic (2023), PPI++ (the normal interval is
asymptotic); Wilson (1927); Brown, Cai and DasGupta (2001), Stat. Sci. 16(2) (normal
intervals of a proportion under-cover at small n); Bhatia and Davis (2000).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from calibration.agreement.small_sample import (
    SMALL_SAMPLE,
    bounded_mean_interval,
    hull,
    is_degenerate,
)
from calibration.inference.intervals import t_quantile, wilson_interval

__all__ = [
    "Scale",
    "clip",
    "guarded",
    "labelled_interval",
    "posterior_ppi_interval",
    "prior_mean_interval",
    "scale_of",
    "scale_points",
    "spread_is_known",
    "student_interval",
    "uses_prior",
]

Scale = tuple[float, float]
UNIT: Scale = (0.0, 1.0)
GUARD_NOTE = (
    "widened to the labelled cases' own score interval: {why}, the normal interval "
    "would claim more than the labels say"
)


def scale_of(*values: np.ndarray, declared: Sequence[float] | None = None) -> Scale | None:
    """The scale the values lie on: ``declared`` (a rubric's numeric labels) when given,
    else [0, 1] when every value is in it, else the observed range; ``None`` when the
    values do not span a range (nothing to bound by)."""
    if declared:
        low, high = float(min(declared)), float(max(declared))
    else:
        finite = np.concatenate([v[np.isfinite(v)] for v in values]) if values else np.array([])
        if not len(finite):
            return None
        low, high = float(finite.min()), float(finite.max())
        if low >= 0 and high <= 1:
            return UNIT
    return (low, high) if high > low else None


def clip(ci: Sequence[float] | None, scale: Scale | None) -> tuple[float, float] | None:
    """``ci`` clipped to ``scale`` (unchanged without one); ``None`` stays ``None``."""
    if ci is None:
        return None
    low, high = float(ci[0]), float(ci[1])
    if scale is None:
        return (low, high)
    return (min(scale[1], max(scale[0], low)), max(scale[0], min(scale[1], high)))


def _why(n: int, degenerate: bool) -> str | None:
    if degenerate:
        return "the labelled values do not vary (standard error 0)"
    if n < SMALL_SAMPLE:
        return f"only {n} labelled cases (under {SMALL_SAMPLE})"
    return None


def labelled_interval(
    values: np.ndarray,
    scale: Scale | None,
    confidence: float,
    *,
    rate: bool,
    declared: Sequence[float] | None = None,
) -> tuple[float, float] | None:
    """The score interval of the labelled values alone: Wilson's for 0/1 values; for a
    mean on a scale of more than two points, or of values between its ends
    (:func:`uses_prior`), :func:`prior_mean_interval`; else the bounded-scale Wilson
    interval; ``None`` without values or a scale."""
    n = len(values)
    if n == 0:
        return None
    if rate:
        return wilson_interval(int(values.sum()), n, confidence=confidence)
    if scale is None:
        return None
    if uses_prior(values, scale, declared):
        ci = prior_mean_interval(values, scale_points(scale, declared), confidence=confidence)
        if ci is not None:
            return ci
    return bounded_mean_interval(float(values.mean()), n, *scale, confidence=confidence)


def uses_prior(
    values: np.ndarray, scale: Scale | None, declared: Sequence[float] | None = None
) -> bool:
    """Whether a mean's interval is :func:`prior_mean_interval`: a scale of more than two
    points (a 1-5 label), or values between the scale's ends; not for 0/1 values, where
    the bounded-scale (Wilson) interval is exact in its variance."""
    if scale is None:
        return False
    return len(scale_points(scale, declared)) > 2 or not spread_is_known(values, scale)


def spread_is_known(values: np.ndarray, scale: Scale | None) -> bool:
    """Whether the bounded-scale interval's variance is the values' own: every value at
    one of the scale's two ends (0/1 values on [0, 1]), where the Bhatia-Davis bound
    ``(M - μ)(μ - m)`` is the variance itself; otherwise it overstates it."""
    if scale is None or not len(values):
        return True
    return bool(np.all((values == scale[0]) | (values == scale[1])))


def student_interval(
    estimate: float, std_error: float, n: int, *, confidence: float = 0.95
) -> tuple[float, float] | None:
    """``estimate ± t(1-α/2; n-1)·std_error``: Student's quantile for a standard error
    estimated from ``n`` labels (Student 1908); ``None`` below 2 labels or without a
    finite standard error."""
    if n < 2 or not (math.isfinite(estimate) and math.isfinite(std_error)):
        return None
    half = t_quantile(confidence, n - 1) * std_error
    return (estimate - half, estimate + half)


def prior_mean_interval(
    values: np.ndarray, points: Sequence[float], *, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Interval of the mean of ``n`` labels on a scale of ``K`` points: the posterior mean
    and standard deviation of the scale's mean under a Dirichlet prior of total weight 1
    spread evenly over the points (``1/K`` each, Perks 1947), with Student's
    ``t(1-α/2; n-1)`` quantile, clipped to the scale.

    With ``a_k`` the labels at point ``v_k`` plus ``1/K`` and ``A = n + 1``: centre
    ``m = Σ a_k v_k / A``, variance ``(Σ a_k v_k² / A - m²) / (A + 1)``. The prior's one
    label keeps the interval open towards points no label reached: 19 fives and a four on
    a 1-5 scale give ``[4.61, 5]``, where Student's interval of the labels alone,
    ``[4.85, 5.05]``, misses a true mean of 4.8 (a ceiling-heavy scale whose rare low
    labels a sample of 20 often lacks). Elsewhere it is about as wide as Student's.
    ``None`` below 2 labels.

    Reference: Perks (1947), J. Inst. Actuaries 73; Rubin (1981), Ann. Stat. 9(1) (the
    Bayesian bootstrap); Student (1908).
    """
    n = len(values)
    grid = np.asarray(sorted(set(points)), dtype=float)
    if n < 2 or len(grid) < 2:
        return None
    weight = np.concatenate([np.ones(n), np.full(len(grid), 1 / len(grid))])
    support = np.concatenate([np.asarray(values, dtype=float), grid])
    total = weight.sum()
    centre = float((weight * support).sum() / total)
    variance = float((weight * (support - centre) ** 2).sum() / total / (total + 1))
    half = t_quantile(confidence, n - 1) * math.sqrt(variance)
    return (max(float(grid[0]), centre - half), min(float(grid[-1]), centre + half))


# The prior of :func:`posterior_ppi_interval`: Jeffreys' 1/2 a cell on a 2 x 2 table of
# 0/1 values (pass rates); elsewhere Perks' total weight 1 over the cells, as in
# :func:`prior_mean_interval` (Jeffreys' 1/2 a cell on 25 cells of a 1-5 scale would
# outweigh 12 labels).
JEFFREYS_CELL = 0.5
PERKS_TOTAL = 1.0


def posterior_ppi_interval(
    y: np.ndarray,
    f: np.ndarray,
    f_unlabelled: np.ndarray,
    lam: float,
    points: Sequence[float],
    *,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Interval of the PPI++ mean ``θ = λ·mean(fᵤ) + E[y - λf]`` whose rectifier term is
    read from a Dirichlet posterior of the labelled ``(y, f)`` pairs, with Student's
    quantile; ``None`` below 2 labels.

    The ``n`` labelled rectifiers ``rᵢ = yᵢ - λfᵢ`` each weigh 1; a prior of total weight
    ``w`` is spread evenly over the ``K²`` pairs of the scale's ``points``
    (``r = v_a - λv_b``): Jeffreys' ``1/2`` a cell when every value is at one of two
    points (a pass rate, 0/1 scores), else Perks' ``w = 1`` in all. With ``A = n + w``,
    the rectifier's posterior mean ``m`` and its posterior variance
    ``s²_w / (A + 1)`` (``s²_w`` the weighted variance), the interval is

    ``λ·mean(fᵤ) + m ± t(1-α/2; n-1)·sqrt(λ² Var(fᵤ)/N + s²_w/(A + 1))``.

    How to read it: the normal PPI++ interval reads the rectifier's spread off the
    labels; near a ceiling a sample of 30-50 often holds no disagreement of the rarer
    kind, and that spread, hence the interval, is too small (0.84-0.88 coverage at a pass
    rate of 0.9-0.95 or a 1-5 scale with 85% fives). The prior keeps every disagreement
    possible and pulls the centre a little towards it; with 30 labels or more it moves
    the interval by a few hundredths. Coverage 0.93 or more and width 1.0-1.3x the
    estimate's real spread on the benchmark's grid (``benchmarks/small_n_intervals.md``).
    The point estimate is PPI++'s, unchanged.

    Reference: Angelopoulos, Duchi and Zrnic (2023), PPI++ (the estimator and its normal
    interval); Gelman et al. (2013), Bayesian Data Analysis, 3rd ed., sec. 3.4 (the
    Dirichlet-multinomial posterior); Rubin (1981) (the Bayesian bootstrap); Perks (1947);
    Jeffreys (1946); Brown, Cai and DasGupta (2001) (the Jeffreys prior near a bound).
    """
    n, big_n = len(y), len(f_unlabelled)
    grid = np.asarray(sorted(set(points)), dtype=float)
    if n < 2 or len(grid) < 2:
        return None
    gy, gf = (a.ravel() for a in np.meshgrid(grid, grid, indexing="ij"))
    binary = len(grid) == 2 and bool(np.all(np.isin(y, grid)) and np.all(np.isin(f, grid)))
    prior = JEFFREYS_CELL * len(gy) if binary else PERKS_TOTAL
    r = np.concatenate([y - lam * f, gy - lam * gf])
    w = np.concatenate([np.ones(n), np.full(len(gy), prior / len(gy))])
    total = float(w.sum())
    centre = float((w * r).sum() / total)
    rectifier_var = float((w * (r - centre) ** 2).sum() / total / (total + 1))
    imputed_var = lam**2 * float(np.var(f_unlabelled, ddof=1)) / big_n if big_n > 1 else 0.0
    mid = (lam * float(np.mean(f_unlabelled)) if big_n else 0.0) + centre
    half = t_quantile(confidence, n - 1) * math.sqrt(rectifier_var + imputed_var)
    return (mid - half, mid + half)


def scale_points(scale: Scale, declared: Sequence[float] | None) -> list[float]:
    """The points of a scale: the declared labels' numbers, else every whole number of
    an integer range (1..5), else its two ends."""
    if declared:
        return sorted({float(v) for v in declared})
    low, high = scale
    if float(low).is_integer() and float(high).is_integer() and high - low <= 100:
        return [float(v) for v in range(int(low), int(high) + 1)]
    return [low, high]


def guarded(
    normal: Sequence[float] | None,
    labelled: tuple[float, float] | None,
    n_labelled: int,
    scale: Scale | None,
) -> tuple[tuple[float, float] | None, str | None]:
    """``(interval, note)``: the normal interval clipped to the scale, widened to the
    labelled score interval when it is degenerate or rests on under 30 labels (``note``
    says so), else as it is (``note`` ``None``)."""
    degenerate = normal is not None and is_degenerate(normal)
    why = _why(n_labelled, degenerate)
    if why is None or labelled is None:
        return clip(normal, scale), None
    widened = hull(clip(normal, scale), labelled)
    if widened is None or (normal is not None and widened == clip(normal, scale)):
        return widened, None
    return widened, GUARD_NOTE.format(why=why)
