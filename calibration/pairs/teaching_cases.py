"""Which labelled cases teach a judge (``judge align``): disagreements on the dev split only.

A judge is aligned by showing it cases it got wrong, with the label people gave. Those
cases must come from the development split alone: the test split is what ``judge gate``
later measures the aligned judge on, and a case the judge was shown cannot measure it.
The split is ``judge calibrate --split``'s own (:func:`calibration.pairs.prepare.prepare`, the
same files and seed give the same dev and test ids), or a list of dev ids.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from calibration.errors import CalibrationInputError
from calibration.pairs.analysis import scale_of
from calibration.pairs.prepare import Settings, prepare

__all__ = ["AlignmentSet", "alignment_set", "pick_examples"]


@dataclass(frozen=True)
class AlignmentSet:
    """The labelled cases (judge and human label of each, in one spelling, with the human
    row's other fields) and which of them are dev and which test."""

    ids: list[str]
    human: list[str]
    judge: list[str]
    fields: list[dict[str, Any]]
    dev: list[int]
    test: list[int]
    how: str

    def disagreements(self) -> list[int]:
        """Dev cases where the judge's label is not the human one."""
        return [i for i in self.dev if self.human[i] != self.judge[i]]


def alignment_set(
    records: str | Path,
    labels: str | Path,
    *,
    test_fraction: float | None = None,
    seed: int = 0,
    dev_ids: Collection[str] | None = None,
) -> AlignmentSet:
    """Join the judge's records and the human labels (as ``judge calibrate`` does) and
    split them: ``test_fraction`` and ``seed`` as ``judge calibrate --split test=F --seed
    S`` (stratified by human label), or the given ``dev_ids`` (the rest is test).

    Raises :class:`CalibrationInputError` on files calibration refuses, numeric scores (a
    disagreement needs labels), or dev ids none of which is labelled.
    """
    if (test_fraction is None) == (dev_ids is None):
        raise CalibrationInputError("give a test fraction or the dev ids (one of them)")
    settings = Settings(test_fraction=test_fraction, seed=seed, n_bootstrap=0)
    # columnar=False: the aligned rubric's notes need each pair's other fields
    prepared = prepare(records, labels, settings, columnar=False)
    pairs = prepared.pairs
    if scale_of(pairs.human, pairs.judge) == "continuous":
        raise CalibrationInputError(
            "the labels are numeric scores: aligning needs labels the judge can get wrong",
            path=str(labels),
        )
    human, judge = [str(v) for v in pairs.human], [str(v) for v in pairs.judge]
    if prepared.split is not None:
        split = prepared.split
        how = split.describe()
        return AlignmentSet(pairs.ids, human, judge, pairs.fields, split.dev, split.test, how)
    wanted = set(dev_ids or ())
    dev = [i for i, case_id in enumerate(pairs.ids) if case_id in wanted]
    if not dev:
        raise CalibrationInputError(
            f"none of the {len(wanted)} dev ids is a labelled case of {records}", path=str(labels)
        )
    chosen = set(dev)
    test = [i for i in range(len(pairs.ids)) if i not in chosen]
    how = f"dev {len(dev)} / test {len(test)} labelled cases (dev ids given)"
    return AlignmentSet(pairs.ids, human, judge, pairs.fields, dev, test, how)


def pick_examples(
    human: Sequence[str], judge: Sequence[str], dev: Sequence[int], *, n: int, seed: int
) -> list[int]:
    """Up to ``n`` indices among ``dev`` where ``judge[i] != human[i]``, spread over the
    human labels: round robin over the labels (sorted), each label's disagreements in a
    seeded random order, so a judge that errs mostly one way still sees the other.
    Nothing outside ``dev`` is ever picked. Deterministic for a given ``seed``.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    rng = np.random.default_rng(seed)
    by_label: dict[str, list[int]] = {}
    for i in sorted(set(dev)):
        if human[i] != judge[i]:
            by_label.setdefault(human[i], []).append(i)
    queues = [list(rng.permutation(by_label[label])) for label in sorted(by_label)]
    picked: list[int] = []
    while len(picked) < n and any(queues):
        for queue in queues:
            if queue and len(picked) < n:
                picked.append(int(queue.pop(0)))
    return picked
