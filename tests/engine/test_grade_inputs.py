"""`judge grade` input validation: every problem names file and line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.cli import main
from tests.helpers import case, write_jsonl

OFFLINE = {"PATH": "/usr/bin"}  # no model, no key


def grade(*args: str) -> int:
    return main(["grade", *args], env=OFFLINE)


def good_lines() -> list[str]:
    return [json.dumps(case("a")), json.dumps(case("b"))]


BAD_FILES: list[tuple[str, bytes, str]] = [
    (
        "malformed.jsonl",
        ("\n".join([*good_lines(), '{"id": "c", "question": ']) + "\n").encode(),
        ":3: not valid JSON",
    ),
    (
        "duplicate.jsonl",
        ("\n".join([*good_lines(), json.dumps(case("a"))]) + "\n").encode(),
        ":3 (id 'a'): duplicate id (first on line 1)",
    ),
    (
        "missing.jsonl",
        (json.dumps({"id": "a", "question": "q", "contexts": ["c"]}) + "\n").encode(),
        ":1 (id 'a'): missing answer (needed by rubric faithfulness@1)",
    ),
    (
        "noid.jsonl",
        (json.dumps({"question": "q", "contexts": ["c"], "answer": "x"}) + "\n").encode(),
        ":1: id: field required",
    ),
    ("empty.jsonl", b"", "empty file: no cases to grade"),
    ("blank.jsonl", b"\n\n  \n", "empty file: no cases to grade"),
    (
        "latin1.jsonl",
        (good_lines()[0] + "\n").encode() + '{"id": "x", "answer": "caf\xe9"}\n'.encode("latin-1"),
        ":2: not UTF-8 (byte 0xe9",
    ),
    ("array.jsonl", b'["not", "an", "object"]\n', ":1: expected a JSON object, got list"),
    (
        "types.jsonl",
        (json.dumps(case("a", contexts="ok", answer=5)) + "\n").encode(),
        ":1 (id 'a'): answer: input should be a valid string",
    ),
    (
        "unknown.jsonl",
        (json.dumps(case("a", colour="red")) + "\n").encode(),
        ":1 (id 'a'): colour: unknown field",
    ),
    ("nocol.csv", b"id,question,answer\na,q?,yes\n", ":1: CSV has no column contexts"),
    (
        "ragged.csv",
        b"id,question,contexts,answer\na,q?,ctx,yes,extra\n",
        ":2: has 5 fields, the header has 4",
    ),
]


@pytest.mark.parametrize(("name", "content", "expected"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_input_exits_2_names_file_and_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, expected: str
) -> None:
    source = tmp_path / name
    source.write_bytes(content)
    out = tmp_path / "out.jsonl"
    summary = tmp_path / "summary.json"
    assert (
        grade(str(source), "--rubric", "faithfulness", "-o", str(out), "--summary", str(summary))
        == 2
    )
    err = capsys.readouterr().err
    assert f"{source}{expected}" in err or (expected in err and str(source) in err), err
    assert not out.exists() and not summary.exists()


def test_bad_input_leaves_existing_output_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    good = write_jsonl(tmp_path / "good.jsonl", [case("a"), case("b")])
    assert grade(str(good), "--rubric", "faithfulness", "-o", str(out)) == 0
    before = out.read_bytes()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + "{oops\n")
    assert grade(str(bad), "--rubric", "faithfulness", "-o", str(out)) == 2
    assert out.read_bytes() == before


def test_problems_are_all_listed_up_to_a_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "many.jsonl"
    bad.write_text("{oops\n" * 50)
    assert grade(str(bad), "--rubric", "faithfulness", "-o", str(tmp_path / "o.jsonl")) == 2
    err = capsys.readouterr().err
    assert f"{bad}:1:" in err and f"{bad}:20:" in err and f"{bad}:21:" not in err
    assert "stopped after 20 problems" in err


def test_missing_file_and_unknown_rubric(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert grade(str(tmp_path / "nope.jsonl"), "--rubric", "faithfulness") == 2
    assert "nope.jsonl: no such file" in capsys.readouterr().err
    good = write_jsonl(tmp_path / "good.jsonl", [case("a")])
    assert grade(str(good), "--rubric", "faithfullness") == 2
    assert "no rubric named 'faithfullness'" in capsys.readouterr().err


def test_csv_with_ragas_aliases_and_json_cells(tmp_path: Path) -> None:
    source = tmp_path / "ragas.csv"
    source.write_text(
        "id,user_input,retrieved_contexts,response,slices\n"
        'r1,How long is the trial?,"[""The trial lasts 14 days.""]",The trial lasts 14 days.,trial|pricing\n'
        "r2,Is there a fee?,There is no fee.,There is no fee.,pricing\n",
        "utf-8",
    )
    out = tmp_path / "out.jsonl"
    assert grade(str(source), "--rubric", "faithfulness", "-o", str(out)) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in records] == ["r1", "r2"]
    assert records[0]["slices"] == ["trial", "pricing"] and records[0]["label"] == "faithful"


def test_stdin_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    data = "".join(json.dumps(case(i)) + "\n" for i in ("x", "y"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    out = tmp_path / "out.jsonl"
    assert grade("-", "--rubric", "relevance", "-o", str(out)) == 0
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["x", "y"]
