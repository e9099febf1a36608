"""People in the viewer: their labels and notes (`--labels FILE`), and "label these",
which puts chosen cases into a `judge label` set.

A label file is read as `judge calibrate` reads it (calibration.io.labels: CSV or JSONL,
`id` and `label`, optional `annotator` and `note` or `annotator_note`); several labels of
one case are all shown, and the most frequent one (the first given on a tie) is the
people's label the filters and the confusion matrix compare with.

"Label these" writes the chosen cases (as their cases file has them) to
`DIR/RUN-N.cases.jsonl` and opens the label store `DIR/RUN-N.labels.sqlite` for them with
`judge label`'s own plan (judge.label.labelset: every case, seed 0, no overlap), so
`judge label DIR/RUN-N.cases.jsonl --rubric REF --db DIR/RUN-N.labels.sqlite` resumes it
as its own: the same store, the same blind page, the same export.

The folder may hold what others put there: a set takes the first number none of whose
files (cases, store, the store's journal and WAL) exists, even as a dangling link, and its
cases file is created new (never through a link) and private (0600), as the store is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from calibration.errors import CalibrationInputError
from calibration.io.labels import normalise_label, read_labels
from judge.errors import JudgeError, UsageError
from judge.rubric import RubricLibrary
from judge.view.query import HumanLabels

NOTE_FIELDS = ("note", "annotator_note", "notes", "comment")


def read_human_labels(path: Path) -> HumanLabels:
    """The labels of `path`; UsageError naming the file and line of a bad row."""
    if not path.is_file():
        raise UsageError(f"--labels {path}: no such file")
    try:
        labels = read_labels(path)
    except CalibrationInputError as exc:
        raise UsageError(f"--labels {exc}") from None
    out = HumanLabels()
    for record in labels.records:
        note = next((record.fields[f] for f in NOTE_FIELDS if record.fields.get(f)), None)
        out.by_id.setdefault(record.id, []).append(
            {
                "label": normalise_label(record.value),
                "annotator": record.fields.get("annotator") or None,
                "note": note,
            }
        )
    return out


STORE_FILES = (
    ".labels.sqlite",
    ".labels.sqlite-journal",
    ".labels.sqlite-wal",
    ".labels.sqlite-shm",
)


def _new_set(folder: Path, run_id: str) -> tuple[Path, Path]:
    """(cases file, store) of the first set number whose files are all absent: `lexists`,
    so that a planted link, even one to nowhere, is never written through."""
    number = 1
    while any(
        os.path.lexists(folder / f"{run_id}-{number}{suffix}")
        for suffix in (".cases.jsonl", *STORE_FILES)
    ):
        number += 1
    stem = f"{run_id}-{number}"
    return folder / f"{stem}.cases.jsonl", folder / f"{stem}.labels.sqlite"


def _write_new(text: str, path: Path) -> None:
    """`text` into a file created now (O_EXCL: never an existing file or link), 0600."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        raise UsageError(f"{path} appeared while the set was made: try again") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def queue_for_labelling(
    folder: Path,
    run_id: str,
    rubric_ref: str,
    cases: Sequence[str],
    library: RubricLibrary,
) -> dict[str, Any]:
    """A new labelling set of `cases` (each case's JSON text) in `folder`; what was written
    and the command that opens it."""
    from judge.label.labelset import LabelPlan, describe, open_label_store  # on use: seconds

    if not cases:
        raise UsageError("no case to label: select cases whose input the viewer has")
    rubric = library.load(rubric_ref)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    cases_file, db = _new_set(folder, run_id)
    _write_new("".join(json.dumps(json.loads(c)) + "\n" for c in cases), cases_file)
    try:
        store = open_label_store(db, LabelPlan(cases_file, rubric))
    except JudgeError:
        cases_file.unlink(missing_ok=True)
        raise
    try:
        described = describe(store)
    finally:
        store.close()
    os.chmod(db, 0o600)  # case text, as the cases file is
    return {
        "count": len(cases),
        "cases": str(cases_file),
        "db": str(db),
        "described": described,
        "command": f"judge label {cases_file} --rubric {rubric.ref} --db {db}",
    }
