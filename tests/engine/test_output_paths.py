"""Issue 12 item 6: output paths the fuzz left out because they crashed are refused with
exit 2 before any file is read: `calibrate -o` naming a file (FileExistsError before) or a
folder under a file, and `--html` naming a folder on calibrate, grade and probe
(IsADirectoryError after the whole run before). `--bootstrap 0` and negative counts are
covered too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.cli import main
from tests.helpers import REPO

EXAMPLES = REPO / "examples"
HUMAN = EXAMPLES / "human_labels.csv"


def run(*argv: object) -> int:
    try:
        return main([*map(str, argv)], env={})
    except SystemExit as stop:  # argparse's refusals
        return int(stop.code or 0)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("graded") / "faithfulness.jsonl"
    assert run("grade", EXAMPLES / "cases.jsonl", "--rubric", "faithfulness", "-o", out) == 0
    return out


def test_calibrate_report_folder_that_is_a_file_is_refused_first(
    graded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = tmp_path / "notes.txt"
    existing.write_text("somebody's notes\n")
    missing = tmp_path / "not-there.csv"
    assert run("calibrate", missing, missing, "-o", existing) == 2
    err = capsys.readouterr().err
    assert f"-o {existing} exists and is not a folder" in err and "no such file" not in err
    assert existing.read_text() == "somebody's notes\n"
    assert run("calibrate", graded, HUMAN, "-o", existing / "report", "--bootstrap", "0") == 2
    assert f"{existing} is a file, not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--bootstrap", "--seed"])
def test_negative_counts_are_usage_errors(graded: Path, tmp_path: Path, flag: str) -> None:
    assert run("calibrate", graded, HUMAN, "-o", tmp_path / "r", flag, "-1") == 2
    assert not (tmp_path / "r").exists()


def test_bootstrap_0_writes_a_report_without_intervals(graded: Path, tmp_path: Path) -> None:
    argv = ["calibrate", graded, HUMAN, "-o", tmp_path / "r", "--bootstrap", "0"]
    assert run(*argv, "--fail-if", "kappa_ci95_low < 0.4") == 3  # undefined: fails, says why
    result = json.loads((tmp_path / "r" / "calibration.json").read_text())
    assert result["kappa_ci95"] is None and result["kappa"] is not None
    assert "undefined (fails: no interval (--bootstrap 0))" in result["gate"]["checks"][0]


@pytest.mark.parametrize(
    "command",
    [
        ["calibrate", "{graded}", str(HUMAN), "--bootstrap", "0", "-o", "{tmp}/r"],
        ["grade", str(EXAMPLES / "cases.jsonl"), "--rubric", "relevance", "-o", "{tmp}/g.jsonl"],
        ["probe", "repeat", str(EXAMPLES / "cases.jsonl"), "--rubric", "relevance",
         "--repeats", "2", "-o", "{tmp}/p.json"],
    ],
)  # fmt: skip
def test_html_naming_a_folder_is_refused_before_the_run(
    graded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    folder = tmp_path / "report.html"
    folder.mkdir()
    argv = [a.format(graded=graded, tmp=tmp_path) for a in command]
    assert run(*argv, "--html", folder) == 2
    assert f"--html {folder} is a folder; give a file name" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]  # nothing written
