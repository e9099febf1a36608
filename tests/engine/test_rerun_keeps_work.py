"""Issue 20 items 2, 3, 4, 13 and 14 (a wrongly typed score): a rerun never loses work.

A narrower rerun (`--limit`, another `--sample-seed`) keeps every record of the file and
says so; a second run on an `-o` another run is writing is refused at once (exit 2, one
line); the rewrite goes through a temporary file of its own, never `<out>.tmp`; a one-line
file without a newline is someone's file, not a torn record; a resumed run says what it
kept, graded and sent, and counts this run's tokens apart from the file's; a hand-edited
record with a wrongly typed score is a clear error naming the line, before anything is sent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.cli import main
from judge.engine.outlock import OutputLock, lock_path
from judge.testing import FakeOpenAIServer
from tests.helpers import REPO, case, read_jsonl, write_jsonl

CASES = REPO / "examples" / "cases.jsonl"
COUNT = sum(1 for line in CASES.read_text().splitlines() if line.strip())


def run(*argv: object, env: dict[str, str] | None = None) -> int:
    try:
        return main([*map(str, argv)], env=env or {})
    except SystemExit as stop:
        return int(stop.code or 0)


def grade(out: Path, *extra: object) -> int:
    return run("grade", CASES, "--rubric", "faithfulness", "-o", out, *extra)


@pytest.mark.parametrize("narrower", [["--limit", "5"], ["--sample", "5", "--sample-seed", "7"]])
def test_a_narrower_rerun_keeps_every_record(
    tmp_path: Path, narrower: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    assert grade(out) == 0
    before = {r["id"]: r for r in read_jsonl(out)}
    assert len(before) == COUNT
    capsys.readouterr()
    assert grade(out, *narrower) == 0
    after = read_jsonl(out)
    assert [r["id"] for r in after] == list(before)  # all kept, in input order
    assert {r["id"]: r for r in after} == before
    said = capsys.readouterr().out
    assert f"kept 5 finished record(s) and {COUNT - 5} outside this selection" in said


def test_the_summary_says_what_was_kept(tmp_path: Path) -> None:
    out, summary = tmp_path / "r.jsonl", tmp_path / "s.json"
    assert grade(out, "--limit", "10") == 0
    assert grade(out, "--limit", "4", "--summary", summary) == 0
    run_block = json.loads(summary.read_text())["run"]
    assert run_block["kept"] == 4 and run_block["kept_outside_selection"] == 6
    assert run_block["graded"] == 0 and run_block["sent"] == 0
    assert len(read_jsonl(out)) == 10


def test_a_second_run_on_a_locked_output_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    assert grade(out, "--limit", "3") == 0
    before = out.read_bytes()
    with OutputLock(out):  # another run is writing it
        capsys.readouterr()
        assert grade(out) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "is being written by another judge run" in err
    assert out.read_bytes() == before
    assert grade(out) == 0  # released: the next run goes ahead
    assert len(read_jsonl(out)) == COUNT and not lock_path(out).exists()


def test_the_rewrite_never_uses_a_fixed_temporary_name(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    fixed = tmp_path / "r.jsonl.tmp"
    fixed.write_text("another run's half-written file\n")
    assert grade(out, "--limit", "3") == 0
    in_order = [r["id"] for r in read_jsonl(out)]
    write_jsonl(out, list(reversed(read_jsonl(out))))  # out of order: finalize rewrites
    assert grade(out, "--limit", "3") == 0
    assert [r["id"] for r in read_jsonl(out)] == in_order
    assert fixed.read_text() == "another run's half-written file\n"
    assert {p.name for p in tmp_path.iterdir()} == {"r.jsonl", "r.jsonl.tmp"}


@pytest.mark.parametrize("content", ["sk-live-1234567890", "OPENAI_API_KEY=sk-abc", "x"])
def test_a_one_line_file_without_newline_is_not_cut(
    tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "key.txt"
    key.write_text(content)  # as `printf` writes it: no trailing newline
    assert grade(key) == 2
    assert "is not a records file" in capsys.readouterr().err
    assert key.read_text() == content


def test_a_torn_record_is_still_cut_and_a_whole_last_record_kept(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    assert grade(out, "--limit", "3") == 0
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:2]) + lines[2][:40])  # killed mid-write
    assert grade(out, "--limit", "3") == 0 and len(read_jsonl(out)) == 3
    out.write_bytes(out.read_bytes().rstrip(b"\n"))  # saved without its final newline
    assert grade(out, "--limit", "3") == 0 and len(read_jsonl(out)) == 3


def test_a_wrongly_typed_score_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    assert grade(out, "--limit", "3") == 0
    records = read_jsonl(out)
    records[1]["score"] = "high"  # a hand edit
    write_jsonl(out, records)
    before = out.read_bytes()
    capsys.readouterr()
    assert grade(out) == 2
    err = capsys.readouterr().err
    assert f"{out}:2 (id {records[1]['id']!r}) is not a valid graded record (score:" in err
    assert "Traceback" not in err and out.read_bytes() == before


def test_a_resumed_run_counts_its_own_tokens(
    tmp_path: Path, openai_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "c.jsonl", [case(f"c{i}") for i in range(6)])
    out, summary = tmp_path / "r.jsonl", tmp_path / "s.json"
    env = {
        "OPENAI_BASE_URL": openai_server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "JUDGE_MODEL": "judge-test-2024-01-01",
    }
    argv = ["grade", source, "--rubric", "faithfulness", "-o", out, "--no-cache"]
    argv += ["--price-input", "1", "--price-output", "1", "--summary", summary]
    assert run(*argv, "--limit", "4", env=env) == 0
    first = json.loads(summary.read_text())
    assert first["run"]["sent"] == 4 and first["run"]["tokens"] == first["tokens"]
    capsys.readouterr()
    assert run(*argv, env=env) == 0  # resumes: sends the 2 left
    second = json.loads(summary.read_text())
    assert second["run"]["kept"] == 4 and second["run"]["graded"] == 2
    assert second["run"]["sent"] == 2 == openai_server.stats.requests - 4
    whole, this_run = second["tokens"], second["run"]["tokens"]
    assert 0 < this_run["prompt"] < whole["prompt"]
    assert whole["prompt"] == first["tokens"]["prompt"] + this_run["prompt"]
    assert second["run"]["estimated_cost_usd"] < second["estimated_cost_usd"]
    said = capsys.readouterr().out
    assert "resumed: kept 4 finished record(s)" in said and "sent 2 request(s)" in said
    capsys.readouterr()
    assert run(*argv, env=env) == 0  # a rerun that sends nothing bills nothing
    third = json.loads(summary.read_text())["run"]
    assert third["sent"] == 0 and third["tokens"] == {"prompt": 0, "completion": 0}
    assert third["estimated_cost_usd"] == 0.0
