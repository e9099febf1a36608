"""The three files of ``judge gate``: two judges' labels and the human anchor labels,
checked, joined on the ids all three have, and spelled one way.

Refused (:class:`CalibrationInputError`, exit 2): a file that cannot be read, graded
records given as the human labels, a judge file whose labels share none with the human
ones, continuous scores (the gate compares labels), no id common to the three files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from calibration.agreement.annotators import consolidate_annotators
from calibration.errors import CalibrationInputError
from calibration.io.classes import order_labels
from calibration.io.labels import LabelSet, read_labels
from calibration.io.vocabulary import check_human_file, unify_labels
from calibration.pairs.analysis import scale_of

__all__ = ["GateInputs", "read_gate_inputs"]


@dataclass(frozen=True)
class GateInputs:
    """Labels of the ids common to the three files, in the human file's order."""

    ids: list[str]
    human: list[str]
    baseline: list[str]
    candidate: list[str]
    labels: list[str]
    left_out: dict[str, Any]
    files: dict[str, str]


def _judge_file(path: str | Path, human: LabelSet) -> LabelSet:
    judge = read_labels(path)
    check_human_file(human, judge.path)
    if judge.has_annotators:
        raise CalibrationInputError("a judge file has no annotator column", path=judge.path)
    return judge


def _refuse_scores(values: list[Any], path: str) -> None:
    if scale_of(values, values) == "continuous":
        raise CalibrationInputError(
            "continuous scores: judge gate compares labels (the `label` field)", path=path
        )


def read_gate_inputs(
    baseline_path: str | Path, candidate_path: str | Path, human_path: str | Path
) -> GateInputs:
    """Read, check and join the three files (see the module docstring)."""
    human = consolidate_annotators(read_labels(human_path))
    baseline = _judge_file(baseline_path, human)
    candidate = _judge_file(candidate_path, human)
    b_by_id = {r.id: r.value for r in baseline.records}
    c_by_id = {r.id: r.value for r in candidate.records}
    common = [r for r in human.records if r.id in b_by_id and r.id in c_by_id]
    if not common:
        baseline.check_not_all_excluded()
        candidate.check_not_all_excluded()
        raise CalibrationInputError(
            f"no id common to the baseline ({len(b_by_id)} ids), the candidate "
            f"({len(c_by_id)} ids) and the human labels ({len(human.records)} ids, {human.path})",
            path=candidate.path,
        )
    h = [r.value for r in common]
    b = [b_by_id[r.id] for r in common]
    c = [c_by_id[r.id] for r in common]
    for values, path in ((h, human.path), (b, baseline.path), (c, candidate.path)):
        _refuse_scores(values, path)
    # Each judge must share labels with people; then one spelling for all three.
    unify_labels(h, b, [], judge_path=baseline.path, human_path=human.path)
    unify_labels(h, c, [], judge_path=candidate.path, human_path=human.path)
    spelled_h, judged, _, _ = unify_labels(
        h, [*b, *c], [], judge_path=baseline.path, human_path=human.path
    )
    spelled_b, spelled_c = judged[: len(b)], judged[len(b) :]
    human_ids = {r.id for r in human.records}
    return GateInputs(
        ids=[r.id for r in common],
        human=spelled_h,
        baseline=spelled_b,
        candidate=spelled_c,
        labels=order_labels([*spelled_h, *judged]),
        left_out={
            "human_not_in_baseline": sorted(human_ids - set(b_by_id)),
            "human_not_in_candidate": sorted(human_ids - set(c_by_id)),
            "excluded": {
                "baseline": {k: len(v) for k, v in baseline.excluded.items()},
                "candidate": {k: len(v) for k, v in candidate.excluded.items()},
                "human": {k: len(v) for k, v in human.excluded.items()},
            },
        },
        files={"baseline": baseline.path, "candidate": candidate.path, "labels": human.path},
    )
