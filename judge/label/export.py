"""`judge label export`: the human-labels CSV that `judge calibrate` reads.

Columns: `id, label, annotator, note, labelled_at, inclusion_probability`, plus
`shown_order` (`ab`: answer A was shown first) for pairwise sets, whose labels are already
mapped back to the case's A and B. One row per label given; skips are not labels. With
several annotators `judge calibrate` measures their agreement (the ceiling) and compares
the judge with the majority. Weight a row by 1 / inclusion_probability to estimate
figures for the whole answer set from a stratified sample.

A cell that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab
or a carriage return: an id, a note, an annotator's name) is written with a leading `'`
(`calibration.io.rows.escape_cell`); `judge calibrate` and `--human-labels` read it back
exactly. The file is replaced atomically through a temporary file of its own.
"""

from __future__ import annotations

import csv
import io
import sqlite3
from pathlib import Path

from calibration.io.rows import escape_cell
from judge.engine.atomic import replacing
from judge.errors import UsageError
from judge.label.store import LabelStore

COLUMNS = ["id", "label", "annotator", "note", "labelled_at", "inclusion_probability"]


def export_labels(db: Path, output: Path) -> int:
    """Write every label in `db` to `output` (atomically); return how many rows."""
    if not db.is_file():
        raise UsageError(f"--db {db}: no such file")
    try:
        store = LabelStore(db)
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"--db {db}: not a label store ({exc})") from None
    try:
        plan = store.plan()
        if plan is None:
            raise UsageError(f"--db {db} holds no labelling set")
        items = {i.case_id: i for i in store.items()}
        pairwise = any("answer_a" in i.view for i in items.values())
        events = [e for e in store.events() if e.action == "label"]
    finally:
        store.close()
    columns = COLUMNS + (["shown_order"] if pairwise else [])
    with replacing(output) as raw:
        handle = io.TextIOWrapper(raw, "utf-8", newline="")
        writer = csv.writer(handle)
        writer.writerow(columns)
        for e in sorted(events, key=lambda e: (items[e.case_id].position, e.annotator)):
            row = [e.case_id, e.label, e.annotator, e.note or "", e.labelled_at]
            row.append(repr(items[e.case_id].inclusion_probability))
            cells = row + ([e.shown_order] if pairwise else [])
            writer.writerow([escape_cell(str(cell)) for cell in cells])
        handle.flush()
        handle.detach()  # `replacing` fsyncs and closes the file itself
    return len(events)
