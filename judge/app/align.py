"""The align job: the next version of a rubric, with few-shot examples from labelled
disagreements on the dev split (the picking is `calibration.pairs.teaching_cases`', the
writing `judge.engine.measure.aligned_rubric`'s). Adoption is left to `judge gate` on the
test split: the job writes the test split's labels beside the new rubric version.

Three steps, so that a caller can check the outputs and show the records' warning before
anything is written: `prepare_alignment` (the rubric and where its next version goes),
`records_judge` (whose records these are), `align_rubric` (pick and write)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from calibration.errors import CalibrationInputError
from calibration.io.rows import read_label_rows
from calibration.pairs.teaching_cases import AlignmentSet, alignment_set
from judge.engine.measure.aligned_rubric import (
    Target,
    aligned_target,
    aligned_text,
    choose_examples,
    write_aligned,
    write_test_labels,
)
from judge.engine.rules import RULES_INFO
from judge.errors import InputError, UsageError
from judge.rubric import Rubric, RubricLibrary, load_rubric

if TYPE_CHECKING:
    from judge.app.requests import AlignRequest

__all__ = [
    "AlignResult",
    "AlignSetup",
    "RecordsJudge",
    "align_rubric",
    "prepare_alignment",
    "records_judge",
]

RULES_MODEL = RULES_INFO.model


@dataclass(frozen=True)
class AlignSetup:
    """The rubric to align, where its next version goes, where the test labels go."""

    rubric: Rubric
    target: Target
    test_labels: Path


@dataclass(frozen=True)
class RecordsJudge:
    """The model that graded the records (None: the rules judge, or not said) and, for the
    rules judge's records, the warning to show."""

    model: str | None
    warning: str | None = None


@dataclass(frozen=True)
class AlignResult:
    """`written` is None when the judge agrees with people on every dev case (`how`: the
    split); otherwise the new version, its examples, the disagreements they came from, and
    the test split's labels."""

    how: str
    written: Rubric | None = None
    examples: tuple[str, ...] = ()
    disagreements: int = 0
    test_rows: int = 0


def prepare_alignment(request: AlignRequest, user_dirs: Sequence[Path]) -> AlignSetup:
    """The rubric (from the built-in rubrics and `user_dirs`) and its next version's place."""
    if user_dirs and not user_dirs[0].exists():
        user_dirs[0].mkdir(parents=True)  # the folder the aligned rubric is written into
    library = RubricLibrary(list(user_dirs))
    rubric = load_rubric(request.rubric, library)
    target = aligned_target(rubric, library, user_dirs)
    test_labels = request.test_labels or Path(f"{request.labels.stem}.test.jsonl")
    return AlignSetup(rubric, target, test_labels)


def records_judge(records: Path, rubric: Rubric) -> RecordsJudge:
    """The records must be the judge's with this rubric (a plain id,label file passes)."""
    try:
        first = next((row for _, row in read_label_rows(records)), None)
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None
    graded = first.get("rubric") if first else None
    if graded is not None and str(graded) != rubric.id:
        raise UsageError(
            f"--records {records} were graded with rubric {graded!r}, not {rubric.id!r}: "
            "align the rubric the records were graded with"
        )
    judge = first.get("judge") if first else None
    model = judge.get("model") if isinstance(judge, dict) else None
    if model == RULES_MODEL:
        return RecordsJudge(None, warning=(
            f"--records {records} are the offline rules judge's, which "
            "reads no examples: the aligned rubric grades exactly as before on it (a gate then "
            "passes with a difference of 0); align the records of the model judge you use"
        ))  # fmt: skip
    return RecordsJudge(str(model) if model else None)


def align_rubric(request: AlignRequest, setup: AlignSetup) -> AlignResult:
    """Pick the examples, write the next rubric version and the test split's labels."""
    aligned = _alignment(request)
    disagreements = aligned.disagreements()
    if not disagreements:
        return AlignResult(aligned.how)
    rubric = setup.rubric
    examples = choose_examples(
        rubric, aligned, request.cases, n=request.examples, seed=request.seed
    )
    provenance = _provenance(rubric, request, aligned, len(examples), len(disagreements))
    written = write_aligned(aligned_text(rubric, setup.target, examples, provenance), setup.target)
    test_ids = (aligned.ids[i] for i in aligned.test)
    rows = write_test_labels(request.labels, test_ids, setup.test_labels)
    ids = tuple(e.id for e in examples)
    return AlignResult(aligned.how, written, ids, len(disagreements), rows)


def _dev_ids(path: Path) -> list[str]:
    """Ids from a text file (one a line) or a calibration.json's split.dev_ids."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(path), [(None, None, f"cannot be read ({exc})")]) from None
    if text.lstrip().startswith("{"):
        try:
            ids = json.loads(text)["split"]["dev_ids"]
        except (ValueError, KeyError, TypeError):
            raise InputError(
                str(path), [(None, None, "a JSON file without split.dev_ids")]
            ) from None
        return [str(i) for i in ids]
    return [line.strip() for line in text.splitlines() if line.strip()]


def _alignment(request: AlignRequest) -> AlignmentSet:
    dev = _dev_ids(request.dev_ids) if request.dev_ids else None
    try:
        return alignment_set(
            request.records,
            request.labels,
            test_fraction=request.split,
            seed=request.seed,
            dev_ids=dev,
        )
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None


def _provenance(
    rubric: Rubric, request: AlignRequest, aligned: AlignmentSet, n: int, total: int
) -> str:
    split = f"--split test={request.split:g}" if request.split else f"--dev-ids {request.dev_ids}"
    return (
        f"Written by `judge align` from {rubric.ref} (sha256 {rubric.short_hash}) with\n"
        f"labels {request.labels.name}, records {request.records.name}, {split} --seed {request.seed}:\n"
        f"{n} examples from {total} labelled disagreements on the dev split; {aligned.how}.\n"
        "Not locked: review it, grade with it and adopt it only if `judge gate` passes on\n"
        "the test split; then lock it (judge rubrics lock)."
    )
