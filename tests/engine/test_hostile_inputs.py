"""Issue 16 item 11: bad input that used to crash or mislead now gets file, line and exit 2;
Ragas files are read as the README promises."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from calibration.io.rows import MAX_DEPTH
from judge.cli import main
from judge.engine.inputs import iter_cases
from tests.helpers import case, read_jsonl, write_jsonl


def grade(*args: str) -> int:
    return main(["grade", *args], env={})


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000, 100_000])
def test_deeply_nested_json_is_a_clear_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    """Before: RecursionError, a traceback and exit 1 (HTTP 500 on a job upload)."""
    good = json.dumps(case("a"))
    bad = good[:-1] + f', "metadata": {{"x": {nested(depth)}}}}}'
    source = tmp_path / "deep.jsonl"
    source.write_text(f"{good}\n{bad}\n{nested(depth)}\n")
    out = tmp_path / "o.jsonl"
    assert grade(str(source), "--rubric", "faithfulness", "-o", str(out)) == 2
    err = capsys.readouterr().err
    assert f"deep.jsonl:2: nested more than {MAX_DEPTH} levels deep" in err
    assert "deep.jsonl:3:" in err and "Traceback" not in err
    assert not out.exists()


def test_the_depth_rule_is_exact_with_or_without_many_brackets(tmp_path: Path) -> None:
    """A case nested exactly MAX_DEPTH deep is read, one level more is refused, and a case
    with far more brackets than levels (in strings, in sibling lists) is read: the fast path
    that skips the walk for lines with few brackets changes no outcome."""
    from calibration.io.rows import TOO_DEEP, iter_rows

    base = json.dumps(case("a"))[:-1]
    at_limit = base + f', "metadata": {{"x": {nested(MAX_DEPTH - 2)}}}}}'  # case, metadata, x...
    over = base + f', "metadata": {{"x": {nested(MAX_DEPTH - 1)}}}}}'
    wide = (
        base + ', "metadata": {"x": ' + json.dumps([[i] for i in range(200)] + ["[[{"] * 50) + "}}"
    )
    source = tmp_path / "depths.jsonl"
    source.write_text(f"{at_limit}\n{over}\n{wide}\n")
    rows = [row for _, row in iter_rows(source)]
    assert isinstance(rows[0], dict) and rows[1] == TOO_DEEP and isinstance(rows[2], dict)


def test_deep_nesting_in_a_csv_cell_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "deep.csv"
    source.write_text(
        f'id,question,contexts,answer,metadata\na,q?,ctx,yes,"{{""x"": {nested(3000)}}}"\n'
    )
    assert grade(str(source), "--rubric", "faithfulness", "-o", str(tmp_path / "o.jsonl")) == 2
    assert "deep.csv:2" in capsys.readouterr().err


def test_a_json_array_file_is_named_for_what_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: 20 'not valid JSON' lines and 'stopped after 20 problems'."""
    source = tmp_path / "cases.json"
    source.write_text(json.dumps([case(f"c{i}") for i in range(30)], indent=2))
    assert grade(str(source), "--rubric", "faithfulness", "-o", str(tmp_path / "o.jsonl")) == 2
    err = capsys.readouterr().err.splitlines()
    lines = [line for line in err if line.strip() and not line.startswith("judge:")]
    assert len(lines) == 1, lines
    assert "cases.json:1: expected JSONL, one object per line" in lines[0]
    one_line = tmp_path / "one.jsonl"
    one_line.write_text(json.dumps([case("a")]) + "\n")
    assert grade(str(one_line), "--rubric", "faithfulness", "-o", str(tmp_path / "o.jsonl")) == 2
    assert "JSONL has one case object per line" in capsys.readouterr().err


def test_stdin_errors_name_stdin_not_a_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = b"id,question,contexts,answer\na,q?,ctx,yes\nb,q?,ctx\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    args = ["-", "--input-format", "csv", "--rubric", "faithfulness", "-o", str(tmp_path / "o")]
    assert grade(*args) == 2
    err = capsys.readouterr().err
    assert "<stdin>:3: has 3 fields, the header has 4" in err and "stdin-" not in err


def test_stdin_needs_a_named_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the records went to a random name (stdin-XXXX.faithfulness.jsonl) that no
    rerun could resume."""
    monkeypatch.chdir(tmp_path)
    data = (json.dumps(case("a")) + "\n").encode()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert grade("-", "--rubric", "faithfulness") == 2
    assert "needs -o OUT.jsonl" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert grade("-", "--rubric", "faithfulness", "-o", "graded.jsonl") == 0
    assert [r["id"] for r in read_jsonl(tmp_path / "graded.jsonl")] == ["a"]


RAGAS_CSV = (
    "user_input,retrieved_contexts,response\n"
    '"How long is the trial?","[\'The trial lasts 14 days.\', ""You can\'t extend it.""]",'
    "The trial lasts 14 days.\n"
    '"Can I cancel?","[\'Cancel any time before day 14.\']","Yes, before day 14."\n'
)


def test_a_ragas_csv_reads_list_literals_and_derives_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: refused for its missing id column; and a Python list literal became one
    context with its brackets."""
    source = tmp_path / "ragas.csv"
    source.write_text(RAGAS_CSV)
    cases = list(iter_cases(source))
    assert [c.id for c in cases] == ["row-1", "row-2"]
    assert cases[0].contexts == ["The trial lasts 14 days.", "You can't extend it."]
    out = tmp_path / "o.jsonl"
    assert grade(str(source), "--rubric", "faithfulness", "-o", str(out)) == 0
    assert [r["id"] for r in read_jsonl(out)] == ["row-1", "row-2"]
    err = capsys.readouterr().err
    assert "ragas.csv: no id column in Ragas' names: ids are the row numbers" in err


def test_a_ragas_jsonl_without_ids_and_a_list_literal_that_is_code(tmp_path: Path) -> None:
    rows = [{"user_input": "q?", "retrieved_contexts": ["c"], "response": "c."}] * 2
    cases = list(iter_cases(write_jsonl(tmp_path / "r.jsonl", rows)))
    assert [c.id for c in cases] == ["row-1", "row-2"]
    source = tmp_path / "evil.csv"
    source.write_text("id,question,contexts,answer\na,q?,\"[__import__('os').getcwd()]\",x\n")
    (only,) = iter_cases(source)
    assert only.contexts == ["[__import__('os').getcwd()]"]  # text, never evaluated


def test_rubric_refs_and_locks_that_crashed(tmp_path: Path) -> None:
    """Found by tests/engine/test_cli_fuzz.py (a lock that is not UTF-8) and in review (a version
    in non-ASCII digits, which str.isdigit accepts and int() refuses)."""
    import shutil

    from judge.rubric import DEFAULT_RUBRICS_DIR

    assert main(["rubrics", "show", "faithfulness@\u00b2"], env={}) == 2
    rubrics = tmp_path / "rubrics"
    shutil.copytree(DEFAULT_RUBRICS_DIR, rubrics)
    lock = rubrics / "rubrics.lock"
    lock.write_bytes(b"\x80" + lock.read_bytes())
    assert main(["rubrics", "verify", "--rubrics-dir", str(rubrics)], env={}) == 2
