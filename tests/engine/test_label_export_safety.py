"""Issue 20 items 1, 12 (CSV injection) and 14 (label tracebacks): `judge label export`
goes through the one output check, escapes spreadsheet formulas and reads back exactly;
`judge label` refuses a kind it has no label set for, and a `--db` that is not SQLite,
with one line and exit 2, before it creates or touches anything."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import pytest

from calibration.io.labels import read_labels
from calibration.io.rows import escape_cell, unescape_cell
from judge.cli import main
from judge.engine.measure.human_labels import read_human_labels
from judge.label.labelset import LabelPlan, open_label_store
from judge.rubric import load_rubric
from tests.helpers import write_jsonl

HOSTILE = ['=HYPERLINK("http://x")', "+1", "-2", "@SUM(A1)", "'=quoted", "plain-id"]


def run(*argv: object) -> int:
    try:
        return main([*map(str, argv)], env={})
    except SystemExit as stop:
        return int(stop.code or 0)


def cases(path: Path, ids: list[str]) -> Path:
    rows = [
        {"id": i, "question": "q?", "contexts": ["The sky is blue."], "answer": "The sky is blue."}
        for i in ids
    ]
    return write_jsonl(path, rows)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A label store whose ids, notes and annotator names start with formula characters."""
    db = tmp_path / "labels.sqlite"
    plan = LabelPlan(cases(tmp_path / "c.jsonl", HOSTILE), load_rubric("faithfulness"))
    labels = open_label_store(db, plan)
    try:
        for number, case_id in enumerate(HOSTILE):
            note = f"=cmd|' /C calc'!A{number}"
            labels.record("-ann" if number % 2 else "@ann", case_id, label="faithful", note=note)
    finally:
        labels.close()
    return db


def test_export_onto_its_own_store_is_refused_and_the_labels_stay(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = store.read_bytes()
    assert run("label", "export", "--db", store, "-o", store) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "would overwrite the input" in err
    assert store.read_bytes() == before
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == len(HOSTILE)


def test_export_never_replaces_a_file_that_is_not_a_labels_csv(store: Path, tmp_path: Path) -> None:
    precious = tmp_path / "notes.csv"
    precious.write_text("somebody,else's\n")
    assert run("label", "export", "--db", store, "-o", precious) == 2
    assert precious.read_text() == "somebody,else's\n"
    assert run("label", "export", "--db", store, "-o", precious, "--overwrite") == 0
    assert run("label", "export", "--db", store, "-o", precious) == 0  # ours now: replaced
    assert not list(tmp_path.glob(".*.tmp")) and not list(tmp_path.glob("*.partial"))


def test_export_escapes_formulas_and_reads_back_exactly(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.csv"
    assert run("label", "export", "--db", store, "-o", out) == 0
    with out.open(newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@")), row
    assert {r[0] for r in rows} == {escape_cell(i) for i in HOSTILE}
    back = read_human_labels(out)
    assert back.ids == set(HOSTILE)
    assert {r["annotator"] for r in back.rows()} == {"-ann", "@ann"}
    assert {r.id for r in read_labels(out).records} == set(HOSTILE)


@pytest.mark.parametrize("text", ["", "'", "''", "'x", "-", "'-", "''-", "=1", "a=b", "\t1"])
def test_escape_is_exactly_undone(text: str) -> None:
    assert unescape_cell(escape_cell(text)) == text
    assert not escape_cell(text).startswith(("=", "+", "-", "@", "\t"))


@pytest.mark.parametrize("rubric", ["citations", "context_relevance"])
def test_label_refuses_a_kind_without_a_label_set_before_creating_a_store(
    tmp_path: Path, rubric: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(
        tmp_path / "c.jsonl",
        [{"id": "a", "question": "q", "contexts": ["c [1]"], "answer": "a [1]"}],
    )
    db = tmp_path / "l.sqlite"
    assert run("label", source, "--rubric", rubric, "--db", db, "--port", "0") == 2
    err = capsys.readouterr().err
    assert "has no label set" in err and "faithfulness, relevance, pairwise" in err
    assert "Traceback" not in err and not db.exists()


@pytest.mark.parametrize("content", [b"not a database at all\n", b"SQLite format 3\x00junk" * 8])
def test_label_refuses_a_db_that_is_not_sqlite(
    tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "l.sqlite"
    db.write_bytes(content)
    source = cases(tmp_path / "c.jsonl", ["a", "b"])
    assert run("label", source, "--rubric", "faithfulness", "--db", db, "--port", "0") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --db") and "Traceback" not in err
    assert db.read_bytes() == content
