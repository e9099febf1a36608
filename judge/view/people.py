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
"""

from __future__ import annotations

import json
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
    folder.mkdir(parents=True, exist_ok=True)
    number = 1
    while (folder / f"{run_id}-{number}.cases.jsonl").exists():
        number += 1
    stem = folder / f"{run_id}-{number}"
    cases_file, db = Path(f"{stem}.cases.jsonl"), Path(f"{stem}.labels.sqlite")
    cases_file.write_text("".join(json.dumps(json.loads(c)) + "\n" for c in cases), "utf-8")
    try:
        store = open_label_store(db, LabelPlan(cases_file, rubric))
    except JudgeError:
        cases_file.unlink(missing_ok=True)
        raise
    try:
        described = describe(store)
    finally:
        store.close()
    return {
        "count": len(cases),
        "cases": str(cases_file),
        "db": str(db),
        "described": described,
        "command": f"judge label {cases_file} --rubric {rubric.ref} --db {db}",
    }
