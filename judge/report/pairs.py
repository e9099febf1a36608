"""The matched (human, judge) values behind a calibration, for its scatter and
reliability diagram, read again from the label files the result names.

Reading goes through `calibration.io.labels` (the same reader, join and annotator majority
as `judge calibrate`), so the points are exactly the pairs the figures were computed on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from calibration.agreement.annotators import consolidate_annotators
from calibration.errors import CalibrationInputError
from calibration.io.labels import as_number, join_labels, normalise_label, read_labels

BINS = 10


@dataclass(frozen=True)
class Side:
    """One side's matched values: numbers when every value is one, else label text."""

    field: str
    values: list[Any]
    numeric: bool


def _side(field: str, raw: list[Any]) -> Side:
    numbers = [as_number(v) for v in raw]
    if all(x is not None for x in numbers):
        return Side(field, [float(x) for x in numbers if x is not None], True)
    return Side(field, [normalise_label(v) for v in raw], False)


def paired_values(settings: dict[str, Any]) -> tuple[Side, Side] | None:
    """(human, judge) matched values, or None when the judge side is not numeric."""
    try:
        judge = read_labels(settings["judge_file"], field=settings.get("judge_field", "label"))
        human = read_labels(settings["human_file"], field=settings.get("human_field", "label"))
    except (CalibrationInputError, KeyError, TypeError):
        return None
    joined = join_labels(judge, consolidate_annotators(human))
    judge_side = _side(judge.field, list(joined.judge))
    if not judge_side.numeric or not joined.ids:
        return None
    return _side(human.field, list(joined.human)), judge_side


def _unit(values: list[float]) -> np.ndarray:
    """Values on [0, 1]: as they are when already there, else min-max rescaled."""
    x = np.asarray(values, dtype=float)
    if x.min() >= 0 and x.max() <= 1:
        return x
    span = x.max() - x.min()
    return (x - x.min()) / span if span > 0 else np.full_like(x, 0.5)


def reliability_points(
    human: Side, judge: Side, positive: str | None
) -> tuple[list[tuple[float, float, int]], str]:
    """(mean judge score, mean human outcome, n) per bin of ten on the judge's 0..1 score.

    The human outcome is the human score rescaled to 0..1, or, for two human classes, the
    share of the pass class (`positive`, else the larger label), as in a classic
    reliability diagram. Empty bins are left out."""
    x = _unit(judge.values)
    if human.numeric:
        y, ylabel = _unit(human.values), f"human {human.field} (0..1)"
    else:
        classes = sorted(set(human.values))
        if len(classes) != 2:
            return [], ""
        target = positive if positive in classes else classes[-1]
        y, ylabel = np.array([v == target for v in human.values], float), f"share human {target}"
    index = np.minimum((x * BINS).astype(int), BINS - 1)
    points = [
        (float(x[index == b].mean()), float(y[index == b].mean()), int((index == b).sum()))
        for b in range(BINS)
        if (index == b).any()
    ]
    return points, ylabel
