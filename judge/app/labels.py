"""`--human-labels FILE` on grade: reading the labels file (checked) and naming it as an
input no output may overwrite; the statistics load only when labels are given."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judge.app.requests import GradeRequest
    from judge.engine.measure.human_labels import HumanLabels


def human_labels_option(request: GradeRequest) -> HumanLabels | None:
    """The checked labels of `--human-labels`, or None; InputError (exit 2) listing every
    problem of a file that is not a label file."""
    if request.human_labels is None:
        return None
    # calibration's readers load only when labels are given: offline grading starts light
    from judge.engine.measure.human_labels import read_human_labels

    labels = read_human_labels(request.human_labels)
    return replace(labels, positive_label=request.positive_label)


def human_labels_inputs(request: GradeRequest) -> list[Path]:
    """The labels file as an input no output may overwrite."""
    return [request.human_labels] if request.human_labels is not None else []


def small_sample() -> int:
    """Under this many labels every interval is rough (calibration's threshold)."""
    from calibration.agreement.small_sample import SMALL_SAMPLE  # only when labels print

    return SMALL_SAMPLE
