"""A judge's pass rate corrected for its measured errors (Rogan-Gladen)."""

from __future__ import annotations

import numpy as np

__all__ = ["rogan_gladen", "rogan_gladen_interval"]


def rogan_gladen(apparent_rate: float, sensitivity: float, specificity: float) -> float:
    """True rate implied by an imperfect judge's apparent rate.

    Formula: ``π = (p + Sp - 1) / (Se + Sp - 1)``, clipped to [0, 1], where ``p`` is the
    share of cases the judge passes, ``Se`` its true-positive rate (passes what humans
    pass) and ``Sp`` its true-negative rate (fails what humans fail), both measured against
    human labels. A judge that passes too readily (low Sp) inflates ``p``; the correction
    removes that.

    Undefined (``nan``) when ``Se + Sp <= 1``: the judge is no better than a coin at
    telling the classes apart, so its verdicts carry no information about the true rate.

    Reference: Rogan and Gladen (1978), Am. J. Epidemiol. 107(1).
    """
    youden = sensitivity + specificity - 1
    if not np.isfinite(youden) or youden <= 0 or not np.isfinite(apparent_rate):
        return float("nan")
    return float(min(1.0, max(0.0, (apparent_rate + specificity - 1) / youden)))


def rogan_gladen_interval(
    judged_positive: int,
    n_judged: int,
    *,
    tp: int,
    fn: int,
    tn: int,
    fp: int,
    confidence: float = 0.95,
    n_resamples: int = 4000,
    seed: int = 0,
) -> tuple[float, float]:
    """Interval for the corrected rate that carries both sources of uncertainty.

    Parametric bootstrap: each draw takes the apparent rate from
    ``Binomial(n_judged, judged_positive/n_judged)``, the sensitivity from
    ``Binomial(tp+fn, Se)`` and the specificity from ``Binomial(tn+fp, Sp)``, independently
    (the judged set and the human-labelled calibration set are separate samples), and
    applies :func:`rogan_gladen`. The percentile interval is taken over the draws where the
    correction is defined; ``(nan, nan)`` if fewer than half are.

    It is wider than an interval on the apparent rate alone because the judge's error rates
    are themselves estimates from a finite calibration set.

    Reference: Rogan and Gladen (1978); Lang and Reiczigel (2014), Prev. Vet. Med. 113(1).
    """
    n_pos, n_neg = tp + fn, tn + fp
    if n_judged <= 0 or n_pos <= 0 or n_neg <= 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    p = rng.binomial(n_judged, judged_positive / n_judged, n_resamples) / n_judged
    se = rng.binomial(n_pos, tp / n_pos, n_resamples) / n_pos
    sp = rng.binomial(n_neg, tn / n_neg, n_resamples) / n_neg
    youden = se + sp - 1
    defined = youden > 0
    if defined.sum() < n_resamples / 2:
        return (float("nan"), float("nan"))
    values = np.clip((p[defined] + sp[defined] - 1) / youden[defined], 0.0, 1.0)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(values, [alpha, 1 - alpha])
    return (float(lo), float(hi))
