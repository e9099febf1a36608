"""Correlation between numeric judge scores and human scores, overall and per group."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = ["correlations", "grouped_correlations"]

_METHODS = ("pearson", "spearman", "kendall")


def _is_constant(x: np.ndarray) -> bool:
    return len(x) < 2 or bool(np.all(x == x[0]))


def correlations(y_human: ArrayLike, y_judge: ArrayLike) -> dict[str, float]:
    """Pearson r, Spearman rho and Kendall tau-b between human and judge scores.

    Pearson measures linear agreement of the values; Spearman and Kendall only the order
    (Kendall's tau-b corrects for ties, which are common on short rating scales). Read each
    from -1 (reversed) through 0 (unrelated) to 1 (same order). A high correlation does not
    mean the scores are on the same scale: a judge that adds 2 to every score has r = 1.
    All three are ``nan`` when either side is constant or n < 2.

    Reference: scipy.stats.pearsonr, spearmanr, kendalltau (variant "b");
    Kendall (1945), Biometrika 33(3).
    """
    h = np.asarray(y_human, dtype=float)
    j = np.asarray(y_judge, dtype=float)
    if len(h) != len(j):
        raise ValueError(f"y_human has {len(h)} cases, y_judge {len(j)}")
    if _is_constant(h) or _is_constant(j):
        return {name: float("nan") for name in _METHODS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        return {
            "pearson": float(stats.pearsonr(h, j).statistic),
            "spearman": float(stats.spearmanr(h, j).statistic),
            "kendall": float(stats.kendalltau(h, j, variant="b").statistic),
        }


def grouped_correlations(
    y_human: ArrayLike, y_judge: ArrayLike, *, groups: Sequence[Any] | ArrayLike
) -> dict[str, Any]:
    """Mean over groups of each group's correlation (per-document or per-dialogue).

    For every group (e.g. all responses to one dialogue) the three correlations of
    :func:`correlations` are computed; the result is their unweighted mean over groups.
    This asks "does the judge rank the candidates for one input the way people do?",
    as G-Eval and its successors report for summarisation and dialogue. Groups where
    either side is constant (or with one case) have no correlation and are skipped and
    counted in ``groups_skipped``; all three means are ``nan`` if no group is usable.

    Reference: Liu et al. (2023), G-Eval, EMNLP, Table 2 (Topical-Chat);
    Mehri and Eskenazi (2020), USR, ACL.
    """
    h = np.asarray(y_human, dtype=float)
    j = np.asarray(y_judge, dtype=float)
    g = np.asarray(groups)
    if not len(h) == len(j) == len(g):
        raise ValueError(f"lengths differ: human {len(h)}, judge {len(j)}, groups {len(g)}")
    per_group: list[dict[str, float]] = []
    skipped = 0
    for key in dict.fromkeys(g.tolist()):
        mask = g == key
        if _is_constant(h[mask]) or _is_constant(j[mask]):
            skipped += 1
            continue
        per_group.append(correlations(h[mask], j[mask]))
    result: dict[str, Any] = {
        name: float(np.mean([c[name] for c in per_group])) if per_group else float("nan")
        for name in _METHODS
    }
    result["groups_used"] = len(per_group)
    result["groups_skipped"] = skipped
    return result
