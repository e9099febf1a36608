"""`judge label export`: the human-labels CSV that `judge calibrate` reads.

Columns: `id, label, annotator, note, labelled_at, inclusion_probability`, plus
`shown_order` (`ab`: answer A was shown first) for pairwise sets, whose labels are already
mapped back to the case's A and B. One row per label given; skips are not labels. With
several annotators `judge calibrate` measures their agreement (the ceiling) and compares
the judge with the majority. Weight a row by 1 / inclusion_probability to estimate
figures for the whole answer set from a stratified sample.
"""

from __future__ import annotations

import csv
import os
import sqlite3
from pathlib import Path

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
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    with partial.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for e in sorted(events, key=lambda e: (items[e.case_id].position, e.annotator)):
            row = [e.case_id, e.label, e.annotator, e.note or "", e.labelled_at]
            row.append(repr(items[e.case_id].inclusion_probability))
            writer.writerow(row + ([e.shown_order] if pairwise else []))
    os.replace(partial, output)
    return len(events)
