"""One label vocabulary for both files: how labels are normalised, and refusals when the
two files do not speak about the same thing.

Normalisation (the same for both files, printed with every report): surrounding
whitespace is trimmed, inner runs of whitespace become one space and case is ignored, so
``Faithful``, ``faithful`` and `` FAITHFUL `` are one label, shown as the human file
spells it; numbers compare by value (``4``, ``4.0`` and ``"4"`` are one label); ``true`` and
``false`` are text. Nothing else is merged: ``pass`` and ``passed`` stay two labels.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from calibration.errors import CalibrationInputError
from calibration.io.labels import ABSTAINED, LabelSet, as_number, normalise_label

__all__ = ["NORMALISATION", "Vocabulary", "check_human_file", "label_key", "unify_labels"]

NORMALISATION = "compared after trimming whitespace and ignoring case; numbers by value (4 = 4.0)"


@functools.lru_cache(maxsize=1 << 12)  # a handful of labels over millions of rows
def label_key(label: str) -> str:
    """The form two labels are compared in (see the module docstring)."""
    return " ".join(label.split()).casefold()


@dataclass(frozen=True)
class Vocabulary:
    """The labels each side used (as shown) and those only one side used."""

    human: list[str]
    judge: list[str]
    only_human: list[str]
    only_judge: list[str]
    normalisation: str = NORMALISATION

    def as_dict(self) -> dict[str, Any]:
        return {
            "human": self.human,
            "judge": self.judge,
            "only_human": self.only_human,
            "only_judge": self.only_judge,
            "normalisation": self.normalisation,
        }


def _spellings(*sides: Sequence[str]) -> dict[str, str]:
    """key -> the first spelling met, the human side read first."""
    shown: dict[str, str] = {}
    for side in sides:
        for label in side:
            shown.setdefault(label_key(label), label)
    return shown


def _refuse_disjoint(
    human: list[str], judge: list[str], judge_path: str, human_path: str, *, common: int
):
    if not human or not judge or {label_key(v) for v in human} & {label_key(v) for v in judge}:
        return
    if all(as_number(v) is not None for v in [*human, *judge]):
        # the same kind of label (a scale) on both sides, which simply disagree: a sample
        # too small to have met a label both sides use, not files about different things
        raise CalibrationInputError(
            f"too few cases in common: on the {common} case(s) both files label, the judge "
            f"says {judge[:8]} and the human file {human[:8]}, no value in common, so "
            f"agreement is not worth computing; grade or label more cases (human file: "
            f"{human_path})",
            path=judge_path,
        )
    raise CalibrationInputError(
        f"the two files share no label: the judge file says {judge[:8]}, the human file "
        f"{human[:8]} ({NORMALISATION}). Compare like with like: the same rubric's labels "
        f"on both sides, --judge-field/--human-field to pick other fields, or --threshold T "
        f"to turn judge scores into the human classes (human file: {human_path})",
        path=judge_path,
    )


def unify_labels(
    human: Sequence[Any],
    judge: Sequence[Any],
    unlabelled: Sequence[Any],
    *,
    judge_path: str,
    human_path: str,
) -> tuple[list[str], list[str], list[str], Vocabulary]:
    """Human, judge and judge-only labels in one spelling, and the vocabulary they use.

    Raises :class:`CalibrationInputError` when the two sides share no label (``abstained``
    aside): kappa between ``1..5`` and ``faithful/unfaithful`` would be a number about
    nothing.
    """
    h = [normalise_label(v) for v in human]
    j = [normalise_label(v) for v in judge]
    u = [normalise_label(v) for v in unlabelled]
    shown = _spellings(h, j, u)
    h, j, u = ([shown[label_key(v)] for v in side] for side in (h, j, u))
    h_used = sorted(dict.fromkeys(h))
    j_used = sorted(dict.fromkeys([*j, *u]))
    _refuse_disjoint(
        [v for v in h_used if v != ABSTAINED],
        [v for v in j_used if v != ABSTAINED],
        judge_path,
        human_path,
        common=len(h),
    )
    vocab = Vocabulary(
        human=h_used,
        judge=j_used,
        only_human=[v for v in h_used if v not in j_used],
        only_judge=[v for v in j_used if v not in h_used],
    )
    return h, j, u, vocab


def respell(labels: Sequence[str] | None, vocab: Vocabulary) -> list[str] | None:
    """User-given labels (``--labels``, ``--positive-label``) in the files' spelling."""
    if labels is None:
        return None
    shown = _spellings(vocab.human, vocab.judge)
    return [shown.get(label_key(v), v) for v in labels]


def check_human_file(human: LabelSet, judge_path: str) -> None:
    """Refuse a graded records file given as the human labels (the files swapped)."""
    if not human.graded_fields:
        return
    fields = ", ".join(sorted(human.graded_fields))
    raise CalibrationInputError(
        f"this looks like a judge's graded records (it has the fields {fields}), not human "
        f"labels: the judge's file comes first, then the human labels: "
        f"judge calibrate {human.path} HUMAN_LABELS (the file given as the judge's was "
        f"{judge_path}). To compare two judges, keep one judge's id and label columns in "
        f"a CSV and give that as the human side",
        path=human.path,
    )
