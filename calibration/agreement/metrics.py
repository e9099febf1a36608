"""Agreement between a judge and human labels: pure functions in scikit-learn style.

Every function takes ``(y_human, y_judge, *, labels=None, weights=None)`` as it applies.
Rows of a confusion matrix are human labels, columns judge labels. A statistic that is
undefined (a zero denominator) is ``nan``, never 0; each docstring states when.

``labels`` fixes the class order; cases whose human or judge label is outside ``labels`` are
left out, as scikit-learn does (the report layer refuses such files instead). Without
``labels`` the order is the sorted union of both sides, numerically when every label is a
number.

The corrected pass rate (Rogan-Gladen) is an estimate, not agreement: it is
`calibration.estimates.rates` (and `from calibration import rogan_gladen`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from calibration.agreement.correlation import correlations, grouped_correlations
from calibration.agreement.multirater import fleiss_kappa, krippendorff_alpha
from calibration.inference.intervals import binomial_test_p, bootstrap_ci, wilson_interval

Weights = Literal["linear", "quadratic"] | None

__all__ = [
    "adjacent_agreement",
    "balanced_accuracy",
    "binomial_test_p",
    "bootstrap_ci",
    "cohen_kappa",
    "confusion",
    "correlations",
    "expected_agreement",
    "fleiss_kappa",
    "grouped_correlations",
    "kappa_from_confusion",
    "kappa_from_confusions",
    "krippendorff_alpha",
    "label_order",
    "label_values",
    "mean_absolute_error",
    "observed_agreement",
    "per_class_scores",
    "wilson_interval",
]


def label_order(*ys: ArrayLike) -> list[Any]:
    """The sorted union of the labels in ``ys``; numeric order when all are numbers."""
    values = {v.item() if isinstance(v, np.generic) else v for y in ys for v in np.asarray(y)}
    try:
        return sorted(values, key=float)
    except (TypeError, ValueError):
        return sorted(values, key=str)


def _codes(
    y_human: ArrayLike, y_judge: ArrayLike, labels: Sequence[Any] | None
) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Map both label vectors to indices into ``labels``, dropping cases outside it."""
    h = np.asarray(y_human)
    j = np.asarray(y_judge)
    if h.shape != j.shape or h.ndim != 1:
        raise ValueError(f"y_human and y_judge must be 1-D of equal length: {h.shape}, {j.shape}")
    order = list(labels) if labels is not None else label_order(h, j)
    index = {label: i for i, label in enumerate(order)}
    hi, ji = _indices(h, index), _indices(j, index)
    keep = (hi >= 0) & (ji >= 0)
    return hi[keep].astype(int), ji[keep].astype(int), order


def _indices(values: np.ndarray, index: dict[Any, int]) -> np.ndarray:
    """Each value's index in ``index`` (-1 when absent). Numbers are looked up once per
    distinct value (millions of pairs hold a few); other values one by one."""
    if values.dtype.kind in "biuf" and len(values):
        distinct, inverse = np.unique(values, return_inverse=True)
        codes = np.array([index.get(v.item(), -1) for v in distinct], dtype=int)
        return codes[inverse.reshape(-1)]
    return np.array(
        [index.get(v.item() if isinstance(v, np.generic) else v, -1) for v in values], dtype=int
    )


def confusion(y_human: ArrayLike, y_judge: ArrayLike, *, labels: Sequence[Any] | None = None):
    """Confusion matrix ``C[i, j]`` = cases the human labelled ``labels[i]`` and the judge
    ``labels[j]``. Classes that occur on one side only get their row or column of zeros.

    Reference: sklearn.metrics.confusion_matrix (same orientation: rows are the truth).
    """
    h, j, order = _codes(y_human, y_judge, labels)
    k = len(order)
    return np.bincount(h * k + j, minlength=k * k).reshape(k, k)


def label_values(labels: Sequence[Any]) -> np.ndarray | None:
    """The labels as numbers, in order, when every one is a number (``"4"``, ``4``, ``4.0``);
    ``None`` otherwise (text labels: weights then follow their stated order)."""
    numbers = []
    for label in labels:
        if isinstance(label, bool | np.bool_):
            return None
        try:
            number = float(label)
        except (TypeError, ValueError):
            return None
        if not np.isfinite(number):
            return None
        numbers.append(number)
    return np.array(numbers, dtype=float)


def _weight_matrix(k: int, weights: Weights, values: ArrayLike | None = None) -> np.ndarray:
    v = np.arange(k, dtype=float) if values is None else np.asarray(values, dtype=float)
    if len(v) != k:
        raise ValueError(f"{len(v)} label values for a {k} x {k} confusion matrix")
    if weights is None:
        return 1.0 - np.eye(k)
    distance = np.abs(v[:, None] - v[None, :])
    if weights == "linear":
        return distance
    if weights == "quadratic":
        return distance**2
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def kappa_from_confusion(
    matrix: ArrayLike, *, weights: Weights = None, values: ArrayLike | None = None
) -> float:
    """Cohen's (weighted) kappa from a confusion matrix; see :func:`cohen_kappa`.

    ``values`` are the numbers of the matrix's classes (the scale's levels); without them
    a weighted kappa weighs positions ``0..k-1``, right only when no level is missing.
    """
    m = np.asarray(matrix, dtype=float)
    n = m.sum()
    if n == 0:
        return float("nan")
    w = _weight_matrix(m.shape[0], weights, values)
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    disagreement_expected = float((w * expected).sum())
    if disagreement_expected == 0:
        return float("nan")
    return 1.0 - float((w * m).sum()) / disagreement_expected


def kappa_from_confusions(
    tables: ArrayLike, *, weights: Weights = None, values: ArrayLike | None = None
) -> np.ndarray:
    """:func:`kappa_from_confusion` of every table of a stack ``(R, k, k)`` at once (a
    bootstrap's resamples): the same formula on whole arrays, ``nan`` where it is
    undefined (an empty table, or no expected disagreement)."""
    m = np.asarray(tables, dtype=float)
    n = m.sum(axis=(1, 2))
    w = _weight_matrix(m.shape[1], weights, values)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = m.sum(axis=2)[:, :, None] * m.sum(axis=1)[:, None, :] / n[:, None, None]
        disagreement_expected = (w * expected).sum(axis=(1, 2))
        out = 1.0 - (w * m).sum(axis=(1, 2)) / disagreement_expected
    out[(n == 0) | (disagreement_expected == 0)] = np.nan
    return out


def cohen_kappa(
    y_human: ArrayLike,
    y_judge: ArrayLike,
    *,
    labels: Sequence[Any] | None = None,
    weights: Weights = None,
) -> float:
    """Cohen's kappa: agreement corrected for the agreement chance alone would produce.

    Formula: ``κ = 1 - Σ w_ij O_ij / Σ w_ij E_ij`` with ``O`` the confusion matrix, ``E`` the
    matrix expected from the two sides' marginals (``E_ij = row_i · col_j / n``) and
    disagreement weights ``w_ij`` = ``[i≠j]`` (unweighted, which equals
    ``(p_o - p_e) / (1 - p_e)``), ``|x_i - x_j|`` (linear) or ``(x_i - x_j)²`` (quadratic).
    ``x_i`` is the value of label i when every label is a number (on a 1-5 scale where
    nobody used 3 or 4, 2 -> 5 is 3 points apart, not one position), else its position in
    ``labels``. Weighted kappa gives partial credit to near misses on an ordinal scale;
    any rescaling of the values leaves it unchanged, so values and positions agree when
    the numbers are evenly spaced (scikit-learn weighs positions in its ``labels``: pass
    it the full scale).

    Read: 1 perfect agreement, 0 no better than chance, below 0 worse than chance; a common
    rule of thumb reads below 0.4 as poor, 0.4-0.6 moderate, above 0.6 substantial.
    Undefined (``nan``) when the expected disagreement is 0, i.e. both sides used one and
    the same single label: the labels do not vary, so chance explains everything.

    Reference: Cohen (1960), Educ. Psychol. Meas. 20(1); Cohen (1968), Psychol. Bull. 70(4);
    Artstein and Poesio (2008), Comput. Linguist. 34(4); sklearn.metrics.cohen_kappa_score.
    """
    order = list(labels) if labels is not None else label_order(y_human, y_judge)
    values = label_values(order) if weights else None
    return kappa_from_confusion(
        confusion(y_human, y_judge, labels=order), weights=weights, values=values
    )


def observed_agreement(
    y_human: ArrayLike, y_judge: ArrayLike, *, labels: Sequence[Any] | None = None
) -> float:
    """Share of cases where judge and human gave the same label: ``p_o = Σ O_ii / n``.

    Raw accuracy; it overstates quality when one label dominates. ``nan`` when n = 0.
    """
    m = confusion(y_human, y_judge, labels=labels)
    n = m.sum()
    return float(np.trace(m) / n) if n else float("nan")


def expected_agreement(
    y_human: ArrayLike, y_judge: ArrayLike, *, labels: Sequence[Any] | None = None
) -> float:
    """Agreement expected by chance from the marginals: ``p_e = Σ_i (row_i/n)(col_i/n)``.

    Two labellers who each say "pass" 90% of the time agree 82% of the time by chance.
    ``nan`` when n = 0. Reference: Cohen (1960).
    """
    m = confusion(y_human, y_judge, labels=labels)
    n = m.sum()
    if n == 0:
        return float("nan")
    return float((m.sum(axis=1) * m.sum(axis=0)).sum() / (n * n))


def per_class_scores(
    y_human: ArrayLike, y_judge: ArrayLike, *, labels: Sequence[Any] | None = None
) -> dict[Any, dict[str, float]]:
    """Precision, recall, F1 and support of each class, humans taken as the truth.

    ``precision = TP/(TP+FP)`` (``nan`` when the judge never gives the class),
    ``recall = TP/(TP+FN)`` (``nan`` when humans never give it),
    ``F1 = 2TP/(2TP+FP+FN)`` (``nan`` when the class appears on neither side).
    Low recall on a class means the judge misses it. Reference:
    sklearn.metrics.precision_recall_fscore_support with ``zero_division=np.nan``.
    """
    m = confusion(y_human, y_judge, labels=labels)
    order = list(labels) if labels is not None else label_order(y_human, y_judge)
    tp = np.diag(m).astype(float)
    fp = m.sum(axis=0) - tp
    fn = m.sum(axis=1) - tp
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = tp / (tp + fp)
        recall = tp / (tp + fn)
        f1 = 2 * tp / (2 * tp + fp + fn)
    return {
        label: {
            "precision": float(precision[i]),
            "recall": float(recall[i]),
            "f1": float(f1[i]),
            "support": int(tp[i] + fn[i]),
        }
        for i, label in enumerate(order)
    }


def balanced_accuracy(
    y_human: ArrayLike, y_judge: ArrayLike, *, labels: Sequence[Any] | None = None
) -> float:
    """Mean of per-class recall over the classes humans used: ``mean_i O_ii / row_i``.

    Unlike accuracy it is not inflated by a dominant class: a judge that always says the
    majority label scores ``1/k``. ``nan`` when n = 0.
    Reference: Brodersen et al. (2010), ICPR; sklearn.metrics.balanced_accuracy_score.
    """
    m = confusion(y_human, y_judge, labels=labels)
    rows = m.sum(axis=1)
    present = rows > 0
    if not present.any():
        return float("nan")
    return float(np.mean(np.diag(m)[present] / rows[present]))


def mean_absolute_error(y_human: ArrayLike, y_judge: ArrayLike) -> float:
    """Mean of ``|human - judge|`` on a numeric scale, in the scale's own units.

    ``nan`` when n = 0. Reference: sklearn.metrics.mean_absolute_error.
    """
    h = np.asarray(y_human, dtype=float)
    j = np.asarray(y_judge, dtype=float)
    return float(np.mean(np.abs(h - j))) if len(h) else float("nan")


def adjacent_agreement(y_human: ArrayLike, y_judge: ArrayLike, *, tolerance: float = 1.0) -> float:
    """Share of cases where the judge is within ``tolerance`` points of the human score.

    On a 1-5 scale, exact agreement asks for the same point; adjacent agreement forgives a
    one-point slip, the usual check for ordinal relevance scores. ``nan`` when n = 0.
    """
    h = np.asarray(y_human, dtype=float)
    j = np.asarray(y_judge, dtype=float)
    return float(np.mean(np.abs(h - j) <= tolerance + 1e-12)) if len(h) else float("nan")
