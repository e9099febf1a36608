"""A rerun keeps a record only for the case it graded (issue 52, item 8): every record holds
`inputs_sha256`, a hash of what the judge is shown of its case; a resume over a case set
whose ids overlap grades again exactly the cases whose inputs changed, and says how many.
Records written before the field are kept, with a one-line note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.engine.cache import inputs_sha256
from judge.rubric import load_rubric
from judge.schemas import Case
from tests.e2e.test_trajectory_cli import conversation
from tests.helpers import case, read_jsonl, write_jsonl

SUPPORTED = "The free trial lasts 14 days from the day you sign up."
INVENTED = "The free trial lasts 90 days and includes a gift card."


def grade(source: Path, out: Path, rubric: str, summary: Path) -> int:
    argv = ["grade", str(source), "--rubric", rubric, "--offline", "-o", str(out)]
    return main([*argv, "--summary", str(summary)], env={})


def run_block(summary: Path) -> dict[str, Any]:
    run: dict[str, Any] = json.loads(summary.read_text())["run"]
    return run


def test_a_rerun_grades_again_exactly_the_changed_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = [case(f"q{n}", answer=SUPPORTED) for n in range(7)]
    source, out, summary = tmp_path / "a.jsonl", tmp_path / "out.jsonl", tmp_path / "s.json"
    write_jsonl(source, first)
    assert grade(source, out, "faithfulness", summary) == 0
    before = {r["id"]: r for r in read_jsonl(out)}
    assert all(r["label"] == "faithful" for r in before.values())
    second = [dict(row) for row in first]
    second[1]["answer"] = INVENTED  # the answer changed
    second[4]["contexts"] = ["Trials are not offered."]  # the evidence changed
    second[6]["slices"] = ["renamed"]  # not shown to the judge: not a change
    write_jsonl(source, second)
    capsys.readouterr()
    assert grade(source, out, "faithfulness", summary) == 0
    run = run_block(summary)
    assert (run["kept"], run["graded"], run["inputs_changed"]) == (5, 2, 2)
    said = capsys.readouterr()
    line = [x for x in (said.out + said.err).splitlines() if x.startswith("resumed:")]
    assert len(line) == 1 and "2 whose inputs changed" in line[0]
    after = {r["id"]: r for r in read_jsonl(out)}
    assert [r["id"] for r in read_jsonl(out)] == [f"q{n}" for n in range(7)]
    assert after["q1"]["label"] == after["q4"]["label"] == "unfaithful"
    for key in ("q0", "q2", "q3", "q5"):
        assert after[key] == before[key]  # kept as they were
    assert after["q6"] == before["q6"]  # slices are the record's, not the judge's: kept
    rubric = load_rubric("faithfulness")
    for row in second:
        assert after[row["id"]]["inputs_sha256"] == inputs_sha256(rubric, Case(**row))


def test_a_computed_rubric_resumes_by_inputs_too(tmp_path: Path) -> None:
    lookup = ("lookup_order", {"order_id": "B-2"})
    rows = [conversation(f"t{n}", [lookup], [lookup]) for n in range(5)]
    source, out, summary = tmp_path / "t.jsonl", tmp_path / "out.jsonl", tmp_path / "s.json"
    write_jsonl(source, rows)
    assert grade(source, out, "trajectory", summary) == 0
    rows[3] = conversation("t3", [lookup], [("lookup_order", {"order_id": "B-3"})])
    write_jsonl(source, rows)
    assert grade(source, out, "trajectory", summary) == 0
    run = run_block(summary)
    assert (run["kept"], run["graded"], run["inputs_changed"]) == (4, 1, 1)
    assert [r["label"] for r in read_jsonl(out)] == ["match"] * 3 + ["mismatch", "match"]


def test_records_without_the_hash_are_kept_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, out, summary = tmp_path / "a.jsonl", tmp_path / "out.jsonl", tmp_path / "s.json"
    write_jsonl(source, [case(f"o{n}", answer=SUPPORTED) for n in range(3)])
    assert grade(source, out, "faithfulness", summary) == 0
    older = []
    for record in read_jsonl(out):
        record.pop("inputs_sha256")
        older.append(record)
    write_jsonl(out, older)
    write_jsonl(source, [case(f"o{n}", answer=INVENTED) for n in range(3)])
    capsys.readouterr()
    assert grade(source, out, "faithfulness", summary) == 0
    run = run_block(summary)
    assert (run["kept"], run["graded"], run["kept_unchecked"]) == (3, 0, 3)
    said = capsys.readouterr()
    notes = [x for x in (said.out + said.err).splitlines() if "without inputs_sha256" in x]
    assert len(notes) == 1 and "--overwrite" in notes[0]


def test_batch_exports_and_other_engines_leave_out_only_unchanged_cases(tmp_path: Path) -> None:
    """`resume.unchanged_ids`, what a batch export (one judge or a jury's juror) and
    `--engine ray` skip as done: the finished records whose case still hashes the same."""
    from judge.engine.resume import unchanged_ids

    source, out, summary = tmp_path / "a.jsonl", tmp_path / "out.jsonl", tmp_path / "s.json"
    rows = [case(f"b{n}", answer=SUPPORTED) for n in range(4)]
    write_jsonl(source, rows)
    assert grade(source, out, "faithfulness", summary) == 0
    rubric = load_rubric("faithfulness")
    assert unchanged_ids(out, rubric, source) == {"b0", "b1", "b2", "b3"}
    rows[2]["question"] = "How long does the refund take?"
    write_jsonl(source, rows)
    assert unchanged_ids(out, rubric, source) == {"b0", "b1", "b3"}
    assert unchanged_ids(tmp_path / "none.jsonl", rubric, source) == set()
