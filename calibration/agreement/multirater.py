"""Agreement among several human annotators: the ceiling a judge can be held to.

Ratings are a table with one row per item and one column per annotator; ``None`` (or
``nan``) marks a missing rating.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "category_counts",
    "fleiss_kappa",
    "fleiss_kappa_from_counts",
    "generalised_fleiss_kappa",
    "krippendorff_alpha",
    "krippendorff_alpha_from_counts",
]

Level = Literal["nominal", "ordinal", "interval"]
Weights = Literal["linear", "quadratic"] | None


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def category_counts(ratings: ArrayLike, labels: Sequence[Any] | None) -> np.ndarray:
    """Items x categories table of how many annotators gave each category."""
    table = np.asarray(ratings, dtype=object)
    if table.ndim != 2:
        raise ValueError(f"ratings must be a 2-D items x annotators table, got {table.shape}")
    if labels is None:
        labels = _sorted_labels(table)
    index = {label: i for i, label in enumerate(labels)}
    counts = np.zeros((table.shape[0], len(labels)), dtype=float)
    for u, row in enumerate(table):
        for value in row:
            if not _is_missing(value) and value in index:
                counts[u, index[value]] += 1
    return counts


def fleiss_kappa_from_counts(counts: ArrayLike) -> float:
    """Fleiss' kappa from an items x categories table of rating counts; see
    :func:`fleiss_kappa`. Every row must sum to the same number of raters (at least 2)."""
    c = np.asarray(counts, dtype=float)
    raters = c.sum(axis=1)
    if len(c) == 0 or raters[0] < 2 or np.any(raters != raters[0]):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings for every item")
    r = raters[0]
    p_item = ((c * c).sum(axis=1) - r) / (r * (r - 1))
    p_cat = c.sum(axis=0) / c.sum()
    p_e = float((p_cat**2).sum())
    if p_e >= 1.0:
        return float("nan")
    return float((p_item.mean() - p_e) / (1 - p_e))


def generalised_fleiss_kappa(
    counts: ArrayLike, *, weights: Weights = None, values: ArrayLike | None = None
) -> float:
    """Fleiss' kappa for any number of ratings per item (missing ratings allowed), weighted
    or not: the chance-corrected agreement of two ratings of one item by two different
    annotators, one rater against another.

    Formula (Gwet 2014, sec. 2.5 and ch. 3; irrCAC's ``CAC.fleiss``): with ``r_ik`` the
    ratings of item i in category k, ``r_i = Σ_k r_ik``, agreement weights ``w_kl`` (1 on
    the diagonal; ``1 - |x_k - x_l| / (x_max - x_min)`` linear, its square's complement
    ``1 - (x_k - x_l)² / (x_max - x_min)²`` quadratic, 0/1 unweighted) and
    ``r*_ik = Σ_l w_kl r_il``:
    ``p_a = mean over the items with r_i >= 2 of Σ_k r_ik (r*_ik - 1) / (r_i (r_i - 1))``,
    ``π_k = mean over all rated items of r_ik / r_i``, ``p_e = Σ_kl w_kl π_k π_l`` and
    ``κ = (p_a - p_e) / (1 - p_e)``. With every item rated by the same number of people and
    no weights it is Fleiss' (1971) kappa (:func:`fleiss_kappa_from_counts`). ``x`` are the
    categories' ``values`` (positions ``0..q-1`` without them). Undefined (``nan``) when
    no item has two ratings or when ``p_e`` is 1 (one category only).

    Reference: Fleiss (1971), Psychol. Bull. 76(5); Gwet (2014), Handbook of Inter-Rater
    Reliability, 4th ed.; irrCAC 0.4.4, which the tests check it against.
    """
    c = np.asarray(counts, dtype=float)
    if c.ndim != 2:
        raise ValueError(f"counts must be an items x categories table, got shape {c.shape}")
    r = c.sum(axis=1)
    c, r = c[r > 0], r[r > 0]
    several = r >= 2
    if not several.any():
        return float("nan")
    w = _agreement_weights(c.shape[1], weights, values)
    weighted = c @ w.T
    pairs = (c * (weighted - 1)).sum(axis=1)
    p_a = float((pairs[several] / (r[several] * (r[several] - 1))).mean())
    pi = (c / r[:, None]).mean(axis=0)
    p_e = float(pi @ w @ pi)
    if p_e >= 1.0 - 1e-15:
        return float("nan")
    return (p_a - p_e) / (1 - p_e)


def _agreement_weights(q: int, weights: Weights, values: ArrayLike | None) -> np.ndarray:
    if weights is None:
        return np.eye(q)
    x = np.arange(q, dtype=float) if values is None else np.asarray(values, dtype=float)
    if len(x) != q:
        raise ValueError(f"{len(x)} category values for {q} categories")
    span = float(x.max() - x.min()) if q else 0.0
    if span == 0:
        return np.ones((q, q))
    distance = np.abs(x[:, None] - x[None, :]) / span
    if weights == "linear":
        return 1 - distance
    if weights == "quadratic":
        return 1 - distance**2
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def fleiss_kappa(ratings: ArrayLike, *, labels: Sequence[Any] | None = None) -> float:
    """Fleiss' kappa for a fixed number of raters per item (not necessarily the same people).

    Formula: ``κ = (P̄ - P_e) / (1 - P_e)``, with ``P̄`` the mean over items of the share of
    agreeing rater pairs, ``P_i = (Σ_j n_ij² - r) / (r(r-1))``, and ``P_e = Σ_j p_j²`` from the
    overall category shares ``p_j``. Read it like Cohen's kappa (for two raters it equals
    Scott's pi). Undefined (``nan``) when every rating is the same category.
    Raises ``ValueError`` when items have different numbers of ratings: use
    :func:`krippendorff_alpha`, which allows missing ratings.

    Reference: Fleiss (1971), Psychol. Bull. 76(5).
    """
    return fleiss_kappa_from_counts(category_counts(ratings, labels))


def _delta_squared(counts_by_value: np.ndarray, values: np.ndarray, level: Level) -> np.ndarray:
    k = len(values)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if level == "ordinal":
        cumulative = np.concatenate([[0.0], np.cumsum(counts_by_value)])
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        between = cumulative[hi + 1] - cumulative[lo]
        half = (counts_by_value[:, None] + counts_by_value[None, :]) / 2
        return (between - half) ** 2
    raise ValueError(f"level must be nominal, ordinal or interval, got {level!r}")


def krippendorff_alpha(
    ratings: ArrayLike, *, level: Level = "nominal", labels: Sequence[Any] | None = None
) -> float:
    """Krippendorff's alpha: agreement among any number of raters, missing ratings allowed.

    Formula: ``α = 1 - D_o / D_e``. From each item with ``m >= 2`` ratings every ordered pair
    of its ratings adds ``1/(m-1)`` to the coincidence matrix ``o_ck``; with ``n_c = Σ_k o_ck``
    and ``n = Σ n_c``, ``α = 1 - (n-1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck``. The distance ``δ²`` is
    0/1 for ``nominal``, ``(c-k)²`` for ``interval`` and, for ``ordinal``, the squared count of
    ratings between c and k (less half of each end). Items rated once are ignored.

    Read: 1 perfect, 0 chance-level, negative systematic disagreement; Krippendorff suggests
    relying on data with α >= 0.8 and tentative conclusions for 0.667-0.8. Undefined
    (``nan``) when there is no expected disagreement (a single category in all pairable
    ratings). ``labels`` fixes the category order (and, for interval, must be numeric).

    Reference: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability";
    Hayes and Krippendorff (2007), Commun. Methods Meas. 1(1).
    """
    counts = category_counts(ratings, labels)
    order = labels if labels is not None else _sorted_labels(ratings)
    values = np.asarray(order, dtype=float) if level == "interval" else np.arange(len(order))
    return krippendorff_alpha_from_counts(counts, level=level, values=values)


def coincidence_matrix(counts: ArrayLike) -> np.ndarray | None:
    """Krippendorff's coincidence matrix ``o_ck`` from an items x categories table of rating
    counts: each ordered pair of an item's ``m >= 2`` ratings adds ``1/(m-1)``. ``None``
    when no item has two ratings."""
    table = np.asarray(counts, dtype=float)
    m = table.sum(axis=1)
    table = table[m >= 2]
    m = m[m >= 2]
    if len(table) == 0:
        return None
    coincidence = np.einsum("uc,uk->ck", table / (m - 1)[:, None], table)
    coincidence -= np.diag((table / (m - 1)[:, None]).sum(axis=0))
    return coincidence


def alpha_distance(
    coincidence: np.ndarray, *, level: Level = "nominal", values: ArrayLike | None = None
) -> np.ndarray:
    """Alpha's squared distances ``δ²_ck`` between categories at ``level``, for the
    coincidence matrix (the ordinal distance depends on its marginals)."""
    n_c = coincidence.sum(axis=1)
    numbers = np.arange(len(n_c)) if values is None else np.asarray(values)
    return _delta_squared(n_c, numbers.astype(float), level)


def krippendorff_alpha_from_counts(
    counts: ArrayLike, *, level: Level = "nominal", values: ArrayLike | None = None
) -> float:
    """Krippendorff's alpha from an items x categories table of rating counts; see
    :func:`krippendorff_alpha`. ``values`` are the categories' numbers (interval level)."""
    coincidence = coincidence_matrix(counts)
    if coincidence is None:
        return float("nan")
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    delta = alpha_distance(coincidence, level=level, values=values)
    expected = float((np.outer(n_c, n_c) * delta).sum())
    if expected == 0:
        return float("nan")
    return 1.0 - (n - 1) * float((coincidence * delta).sum()) / expected


def _sorted_labels(ratings: ArrayLike) -> list[Any]:
    present = {v for v in np.asarray(ratings, dtype=object).ravel() if not _is_missing(v)}
    try:
        return sorted(present, key=float)
    except (TypeError, ValueError):
        return sorted(present, key=str)
