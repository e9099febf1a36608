"""Issue 54 item 1: `judge grade` reads its input once and never reads its records back.

Before, an offline `judge grade` read and validated the input file (a first pass), read it
again to grade, read it a third time and the records once to check their order, and read
the records again for the summary. Now, when nothing is sent (the rules judge, or a rubric
that needs no judge) and nothing is resumed, each line is read, validated and graded once,
the summary comes from running totals, and a file with a bad line anywhere still leaves
nothing behind (DESIGN.md: nothing is graded from a file that does not validate).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import judge.engine.inputs as inputs
import judge.engine.records as records
from judge.cli import main
from judge.engine.files import summarise_file
from judge.rubric import load_rubric
from tests.api.test_iter_grade import conversation, faithfulness_case


def write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def grade(source: Path, out: Path, rubric: str, *extra: str) -> int:
    args = ["grade", str(source), "--rubric", rubric, "-o", str(out), "--offline", *extra]
    return main(args, env={})


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times the input was opened for rows, and record lines were read back."""
    count = {"input": 0, "records": 0}
    real_rows, real_lines = inputs.iter_rows, records._lines

    def iter_rows(path: Path) -> Any:
        count["input"] += 1
        return real_rows(path)

    def lines(path: Path) -> Any:
        count["records"] += path.exists()
        return real_lines(path)

    monkeypatch.setattr(inputs, "iter_rows", iter_rows)
    monkeypatch.setattr(records, "_lines", lines)
    return count


@pytest.mark.parametrize(
    ("make", "rubric"), [(faithfulness_case, "faithfulness"), (conversation, "trajectory")]
)
def test_the_input_is_read_once_and_the_summary_is_the_files(
    make: Any, rubric: str, tmp_path: Path, reads: dict[str, int]
) -> None:
    source = write(tmp_path / "cases.jsonl", [make(n) for n in range(60)])
    out, summary = tmp_path / "graded.jsonl", tmp_path / "summary.json"
    assert grade(source, out, rubric, "--summary", str(summary)) == 0
    assert reads == {"input": 1, "records": 0}
    said = json.loads(summary.read_text())
    from_file = summarise_file(out, load_rubric(rubric))
    assert {k: v for k, v in said.items() if k != "run"} == json.loads(json.dumps(from_file))
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [
        make(n)["id"] for n in range(60)
    ]


@pytest.mark.parametrize(
    "bad",
    ["{not json", {"id": "c2", "question": "q?"}, "PLACEHOLDER-DUPLICATE"],
    ids=["not-json", "missing-field", "duplicate-id"],
)
@pytest.mark.parametrize("existing", [None, b""])
def test_a_bad_last_line_leaves_nothing_graded(
    bad: Any, existing: bytes | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows: list[Any] = [faithfulness_case(n) for n in range(50)]
    rows.append(faithfulness_case(7) if bad == "PLACEHOLDER-DUPLICATE" else bad)
    source = write(tmp_path / "cases.jsonl", rows)
    out = tmp_path / "graded.jsonl"
    if existing is not None:
        out.write_bytes(existing)
    assert grade(source, out, "faithfulness") == 2
    err = capsys.readouterr().err
    assert f"{source}:51" in err
    if existing is None:
        assert not out.exists()
    else:
        assert out.read_bytes() == existing
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_bad_file_leaves_no_folder_made_for_the_output(tmp_path: Path) -> None:
    source = write(tmp_path / "cases.jsonl", [faithfulness_case(0), "{not json"])
    out = tmp_path / "new" / "deeper" / "graded.jsonl"
    assert grade(source, out, "faithfulness") == 2
    assert not (tmp_path / "new").exists()


def test_a_resumed_file_is_validated_first_and_summarised_whole(
    tmp_path: Path, reads: dict[str, int]
) -> None:
    """With records to keep the two-pass path stays: the summary covers kept and new."""
    source = write(tmp_path / "cases.jsonl", [faithfulness_case(n) for n in range(30)])
    out, summary = tmp_path / "graded.jsonl", tmp_path / "summary.json"
    assert grade(source, out, "faithfulness", "--limit", "10") == 0
    assert grade(source, out, "faithfulness", "--summary", str(summary)) == 0
    said = json.loads(summary.read_text())
    assert said["cases"] == 30 and said["run"]["kept"] == 10 and said["run"]["graded"] == 20
