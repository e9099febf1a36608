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

References: Angelopoulos, Duchi and Zrnic (2023), PPI++ (the normal interval is
asymptotic); Wilson (1927); Brown, Cai and DasGupta (2001), Stat. Sci. 16(2) (normal
intervals of a proportion under-cover at small n); Bhatia and Davis (2000).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from calibration.agreement.small_sample import (
    SMALL_SAMPLE,
    bounded_mean_interval,
    hull,
    is_degenerate,
)
from calibration.inference.intervals import wilson_interval

__all__ = ["Scale", "clip", "guarded", "labelled_interval", "scale_of"]

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
    values: np.ndarray, scale: Scale | None, confidence: float, *, rate: bool
) -> tuple[float, float] | None:
    """The score interval of the labelled values alone: Wilson's for 0/1 values, the
    bounded-scale Wilson interval for a mean; ``None`` without values or a scale."""
    n = len(values)
    if n == 0:
        return None
    if rate:
        return wilson_interval(int(values.sum()), n, confidence=confidence)
    if scale is None:
        return None
    return bounded_mean_interval(float(values.mean()), n, *scale, confidence=confidence)


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
