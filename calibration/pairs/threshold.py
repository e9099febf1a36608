"""Turn a numeric judge score into pass/fail against two-class human labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from calibration.agreement.metrics import kappa_from_confusion
from calibration.errors import CalibrationInputError
from calibration.io.classes import choose_positive, order_labels
from calibration.io.labels import as_number, normalise_label

__all__ = ["apply_threshold", "cut_scores", "fit_threshold"]


def fit_threshold(scores: Sequence[float], is_positive: Sequence[bool]) -> tuple[float, float]:
    """The cut ``t`` (judge passes when ``score >= t``) that maximises Cohen's kappa, and
    that kappa. Candidates are the distinct scores; the lowest best cut wins a tie.

    In-sample: the cut is tuned on the labels it is then scored on, so the kappa is
    optimistic; confirm it on held-out labels.
    """
    s = np.asarray(scores, dtype=float)
    truth = np.asarray(is_positive, dtype=int)
    best_t, best_kappa = float("nan"), -np.inf
    for t in np.unique(s):
        judged = (s >= t).astype(int)
        matrix = np.bincount(truth * 2 + judged, minlength=4).reshape(2, 2)
        kappa = kappa_from_confusion(matrix)
        if np.isfinite(kappa) and kappa > best_kappa:
            best_t, best_kappa = float(t), kappa
    return best_t, float(best_kappa) if np.isfinite(best_kappa) else float("nan")


def apply_threshold(
    ids: Sequence[str],
    human: Sequence[Any],
    judge: Sequence[Any],
    *,
    threshold: float | None,
    fit: bool,
    positive_label: str | None = None,
    labels: Sequence[str] | None = None,
    source: str = "judge file",
) -> tuple[list[str], dict[str, Any]]:
    """Judge labels from scores (``score >= threshold`` is the pass class) and a record of
    the rule used. Raises :class:`CalibrationInputError` when humans do not give exactly two
    classes or a judge value is not a number."""
    order = order_labels([normalise_label(v) for v in human], explicit=labels)
    if len(order) != 2:
        raise CalibrationInputError(
            f"a threshold needs two human classes, found {len(order)}: {order}", path=source
        )
    positive = choose_positive(order, positive_label)
    negative = order[0] if order[1] == positive else order[1]
    numbers = _numbers(ids, judge, source)
    info: dict[str, Any] = {
        "fitted": fit,
        "positive_label": positive,
        "negative_label": negative,
        "in_sample": fit,
    }
    if fit:
        cut, _ = fit_threshold(numbers, [normalise_label(v) == positive for v in human])
    else:
        cut = float(threshold) if threshold is not None else float("nan")
    info["value"] = cut
    info["rule"] = f"judge score >= {cut:g} -> {positive!r}, else {negative!r}"
    return [positive if s >= cut else negative for s in numbers], info


def _numbers(ids: Sequence[str], values: Sequence[Any], source: str) -> list[float]:
    scores = [as_number(v) for v in values]
    bad = [case_id for case_id, s in zip(ids, scores, strict=True) if s is None]
    if bad:
        raise CalibrationInputError(
            f"a threshold needs numeric judge scores; not a number for id {bad[0]!r}", path=source
        )
    return [float(s) for s in scores if s is not None]


def cut_scores(
    ids: Sequence[str], values: Sequence[Any], info: dict[str, Any], *, source: str = "judge file"
) -> list[str]:
    """Judge labels from scores by the rule ``info`` (from :func:`apply_threshold`), for
    cases the threshold was not fitted on (judge-only cases, a held-out split)."""
    positive, negative, cut = info["positive_label"], info["negative_label"], info["value"]
    return [positive if s >= cut else negative for s in _numbers(ids, values, source)]
