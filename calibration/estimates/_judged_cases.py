"""Every judged case with its judge and (when labelled) human values, for PPI estimates.

The judge's records are the cases; a human label joins by id. Labels of both sides are
spelled one way (:mod:`calibration.io.vocabulary`); slices come from the records' ``slices``
field (a list, or one name).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from calibration.errors import CalibrationInputError
from calibration.io.labels import (
    LabelRecord,
    LabelSet,
    as_number,
    normalise_label,
    row_number_hint,
)
from calibration.io.vocabulary import label_key, unify_labels

__all__ = ["Cases", "Sample", "slice_names", "unify_cases"]


@dataclass(frozen=True)
class Sample:
    """Per case: human value (``nan`` where unlabelled), judge value, whether labelled,
    and the design weight (``nan`` where unlabelled; ``weights`` is ``None`` without)."""

    y: np.ndarray
    f: np.ndarray
    labelled: np.ndarray
    weights: np.ndarray | None


@dataclass(frozen=True)
class Cases:
    """Parallel lists, one entry per judged case; ``human[i] is None`` when unlabelled."""

    ids: list[str]
    judge: list[str]
    human: list[str | None]
    judge_score: list[float | None]
    human_score: list[float | None]
    slices: list[list[str]]
    weight: list[float | None]
    human_only: list[str] = field(default_factory=list)
    spelling: Mapping[str, str] = field(default_factory=dict)

    @property
    def n_labelled(self) -> int:
        return sum(h is not None for h in self.human)

    def take(self, index: Sequence[int]) -> Cases:
        def pick(values: Sequence[Any]) -> list[Any]:
            return [values[i] for i in index]

        return replace(
            self,
            ids=pick(self.ids),
            judge=pick(self.judge),
            human=pick(self.human),
            judge_score=pick(self.judge_score),
            human_score=pick(self.human_score),
            slices=pick(self.slices),
            weight=pick(self.weight),
        )

    def with_weights(self, weights: Mapping[str, float] | None, path: str) -> Cases:
        """The cases with each labelled one's design weight (1/inclusion probability)."""
        if weights is None:
            return self
        values: list[float | None] = []
        for case_id, human in zip(self.ids, self.human, strict=True):
            value = as_number(weights.get(case_id)) if human is not None else None
            if human is not None and (value is None or value <= 0):
                raise CalibrationInputError(
                    f"labelled case {case_id!r} has no positive weight (1/inclusion probability)",
                    path=path,
                )
            values.append(value)
        return replace(self, weight=values)

    def labels(self) -> list[str]:
        return [*self.judge, *(h for h in self.human if h is not None)]

    def respell(self, label: str) -> str:
        return self.spelling.get(label_key(normalise_label(label)), label)

    def _sample(self, keep: Sequence[int], y: Sequence[Any], f: Sequence[Any]) -> Sample:
        """The cases ``keep`` with their human values ``y`` and judge values ``f``."""
        yy = np.array([np.nan if v is None else float(v) for v in y], dtype=float)
        weights = None
        if any(w is not None for w in self.weight):
            weights = np.array([self.weight[i] or np.nan for i in keep], dtype=float)
        labelled = np.array([self.human[i] is not None for i in keep], dtype=bool)
        return Sample(yy, np.asarray(f, dtype=float), labelled & np.isfinite(yy), weights)

    def pass_fail(self, classes: Sequence[str], positive: str) -> Sample:
        """0/1 values over the cases both sides put in ``classes`` (``abstained`` leaves)."""
        keep = [
            i
            for i, (h, j) in enumerate(zip(self.human, self.judge, strict=True))
            if j in classes and (h is None or h in classes)
        ]
        human = [None if self.human[i] is None else self.human[i] == positive for i in keep]
        return self._sample(keep, human, [self.judge[i] == positive for i in keep])

    def scores(self) -> Sample | None:
        """Scores over the cases with a judge score; cases without a human score count as
        unlabelled. ``None`` when no human score exists."""
        if all(h is None for h in self.human_score):
            return None
        keep = [i for i, j in enumerate(self.judge_score) if j is not None]
        return self._sample(
            keep, [self.human_score[i] for i in keep], [self.judge_score[i] for i in keep]
        )

    def numeric_labels(self) -> Sample | None:
        """The labels as numbers (relevance ``1``..``5``) over the cases whose labels are
        numbers (an ``abstained`` case leaves); ``None`` when no labelled case has two."""
        human = [None if h is None else as_number(h) for h in self.human]
        judge = [as_number(j) for j in self.judge]
        keep = [
            i
            for i, (h, raw) in enumerate(zip(human, self.human, strict=True))
            if judge[i] is not None and (raw is None or h is not None)
        ]
        if all(human[i] is None for i in keep):
            return None
        return self._sample(keep, [human[i] for i in keep], [judge[i] for i in keep])


def _slices_of(record: LabelRecord) -> list[str]:
    value = record.fields.get("slices")
    if value in (None, ""):
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _number_field(record: LabelRecord | None, name: str) -> float | None:
    return None if record is None else as_number(record.fields.get(name))


def _human_score(
    record: LabelRecord | None, name: str, label_scores: Mapping[str, float | None]
) -> float | None:
    """The row's ``name`` field, else the score its label stands for (``label_scores``)."""
    if record is None:
        return None
    given = _number_field(record, name)
    if given is not None or record.fields.get(name) not in (None, ""):
        return given
    return label_scores.get(label_key(normalise_label(record.value)))


def unify_cases(
    judge: LabelSet,
    human: LabelSet,
    score_field: str,
    label_scores: Mapping[str, float | None] | None = None,
) -> Cases:
    """Join the human labels to the judge's records by id and spell the labels one way.

    A human score is the row's ``score_field``; a row without one takes the score its label
    stands for in ``label_scores`` (label -> score, compared as labels are), when given.

    Raises :class:`CalibrationInputError` when no labelled id is among the records or the
    two sides share no label.
    """
    by_id = {r.id: r for r in human.records}
    judged = {r.id for r in judge.records}
    labelled = [r for r in judge.records if r.id in by_id]
    if not labelled:
        judge.check_not_all_excluded()
        raise CalibrationInputError(
            f"no id in common with {human.path} ({len(judge.records)} judged ids, "
            f"{len(human.records)} labelled ids){row_number_hint(judge, human)}",
            path=judge.path,
        )
    unlabelled = [r for r in judge.records if r.id not in by_id]
    h, j, u, _ = unify_labels(
        [by_id[r.id].value for r in labelled],
        [r.value for r in labelled],
        [r.value for r in unlabelled],
        judge_path=judge.path,
        human_path=human.path,
    )
    spelled = dict(zip((r.id for r in labelled), zip(h, j, strict=True), strict=True))
    spelled_u = dict(zip((r.id for r in unlabelled), u, strict=True))
    judge_labels, human_labels = [], []
    for record in judge.records:
        pair = spelled.get(record.id)
        judge_labels.append(pair[1] if pair else spelled_u[record.id])
        human_labels.append(pair[0] if pair else None)
    spelling = {label_key(v): v for v in [*h, *j, *u]}
    scores = {label_key(normalise_label(k)): v for k, v in (label_scores or {}).items()}
    return Cases(
        ids=[r.id for r in judge.records],
        judge=judge_labels,
        human=human_labels,
        judge_score=[_number_field(r, "score") for r in judge.records],
        human_score=[_human_score(by_id.get(r.id), score_field, scores) for r in judge.records],
        slices=[_slices_of(r) for r in judge.records],
        weight=[None] * len(judge.records),
        human_only=[r.id for r in human.records if r.id not in judged],
        spelling=spelling,
    )


def slice_names(cases: Cases) -> dict[str, list[int]]:
    """slice name -> indices of its cases, by name."""
    members: dict[str, list[int]] = {}
    for i, names in enumerate(cases.slices):
        for name in dict.fromkeys(names):
            members.setdefault(name, []).append(i)
    return dict(sorted(members.items()))
