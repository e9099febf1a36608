"""Issue 16 item 9: no output path can clobber an input, another output, a link's target or
a file that is not ours (without --overwrite). Each case below was reproduced on main."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from judge.cli import main
from tests.helpers import REPO, case, read_jsonl, write_jsonl

EXAMPLES = REPO / "examples" / "cases.jsonl"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return Path(shutil.copy(EXAMPLES, tmp_path / "cases.jsonl"))


def grade(source: Path, *extra: str) -> int:
    return main(["grade", str(source), "--rubric", "faithfulness", *extra], env={})


def test_summary_equal_to_the_input_is_refused(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the summary JSON replaced the cases file."""
    before = source.read_bytes()
    assert grade(source, "-o", str(tmp_path / "o.jsonl"), "--summary", str(source)) == 2
    assert source.read_bytes() == before and not (tmp_path / "o.jsonl").exists()
    assert "--summary" in capsys.readouterr().err


def test_a_hard_link_to_the_input_is_the_input(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the input grew from 43 to 86 lines."""
    link = tmp_path / "graded.jsonl"
    os.link(source, link)
    assert grade(source, "-o", str(link)) == 2
    assert len(source.read_text().splitlines()) == 43
    assert "would overwrite the input" in capsys.readouterr().err


def test_a_symlinked_output_is_refused_and_its_target_kept(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a notes file lost a line and gained 43 records."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\nsecond line\n")
    link = tmp_path / "graded.jsonl"
    link.symlink_to(notes)
    assert grade(source, "-o", str(link)) == 2
    assert grade(source, "-o", str(link), "--overwrite") == 2  # never through a link
    assert notes.read_text() == "my notes\nsecond line\n"
    assert "symbolic link" in capsys.readouterr().err


def test_an_existing_file_that_is_not_records_needs_overwrite(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    precious = tmp_path / "precious.jsonl"
    precious.write_text('{"note": "not a graded record"}\n')
    before = precious.read_bytes()
    assert grade(source, "-o", str(precious)) == 2
    assert precious.read_bytes() == before
    assert "is not a records file" in capsys.readouterr().err
    assert grade(source, "-o", str(precious), "--overwrite") == 0
    assert len(read_jsonl(precious)) == 43


def test_summary_must_be_a_summary_or_new_and_not_the_records(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, summary = tmp_path / "o.jsonl", tmp_path / "s.json"
    assert grade(source, "-o", str(out), "--summary", str(out)) == 2
    summary.write_text("my own notes\n")
    assert grade(source, "-o", str(out), "--summary", str(summary)) == 2
    assert summary.read_text() == "my own notes\n" and not out.exists()
    summary.unlink()
    assert grade(source, "-o", str(out), "--summary", str(summary)) == 0
    assert grade(source, "-o", str(out), "--summary", str(summary)) == 0  # ours: replaced
    assert json.loads(summary.read_text())["cases"] == 43


def test_export_batch_cannot_clobber_the_input_or_a_stranger(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = source.read_bytes()
    model = ("--model", "gpt-4o-2024-08-06", "--no-cache")
    assert grade(source, *model, "--export-batch", str(source)) == 2
    assert source.read_bytes() == before
    other = tmp_path / "notes.jsonl"
    other.write_text("notes\n")
    assert grade(source, *model, "--export-batch", str(other)) == 2
    assert other.read_text() == "notes\n"
    assert "is not a batch request file" in capsys.readouterr().err


def test_probe_outputs_are_checked_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case(f"c{i}") for i in range(3)])
    before = source.read_bytes()
    probe = ["probe", "repeat", str(source), "--rubric", "relevance", "--repeats", "2"]
    assert main([*probe, "-o", str(source)], env={}) == 2
    assert source.read_bytes() == before
    report = tmp_path / "report.json"
    report.write_text("[1, 2, 3]\n")  # somebody else's JSON
    assert main([*probe, "-o", str(report)], env={}) == 2
    assert report.read_text() == "[1, 2, 3]\n"
    assert main([*probe, "-o", str(report), "--overwrite"], env={}) == 0
    assert main([*probe, "-o", str(report)], env={}) == 0  # our own report: replaced
    assert json.loads(report.read_text())["probe"] == "repeat"


@pytest.mark.parametrize("command", ["grade", "probe", "calibrate"])
def test_html_reports_are_outputs_like_any_other(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Seen in review: --html was written after the work, wherever it pointed: over the
    input, through a link, over a user's file."""
    graded = tmp_path / "graded.jsonl"
    assert grade(source, "-o", str(graded)) == 0
    human = tmp_path / "human.csv"
    human.write_text("id,label\n" + "".join(f"{r['id']},faithful\n" for r in read_jsonl(graded)))
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    link = tmp_path / "report.html"
    link.symlink_to(notes)
    argv = {
        "grade": [
            "grade",
            str(source),
            "--rubric",
            "faithfulness",
            "-o",
            str(tmp_path / "g2.jsonl"),
        ],
        "probe": [
            "probe",
            "repeat",
            str(source),
            "--rubric",
            "faithfulness",
            "-o",
            str(tmp_path / "p.json"),
        ],
        "calibrate": ["calibrate", str(graded), str(human), "-o", str(tmp_path / "report")],
    }[command]
    before = {p: p.read_bytes() for p in (source, notes, graded, human)}
    first_input = {"grade": source, "probe": source, "calibrate": graded}[command]
    for html in (first_input, link, notes):
        assert main([*argv, "--html", str(html)], env={}) == 2, html
    assert all(p.read_bytes() == data for p, data in before.items())
    assert main([*argv, "--html", str(tmp_path / "fine.html")], env={}) == 0
    assert (tmp_path / "fine.html").read_text("utf-8").startswith("<!doctype html>")
    assert main([*argv, "--html", str(tmp_path / "fine.html")], env={}) == 0  # ours: replaced
