"""Issue 45 item 14: a JSON integer longer than Python converts (4,300 digits by default) in
a cases or labels file is one line naming the file and line, exit 2, in every command that
reads one (`grade`, `calibrate`, `grade --human-labels`, `view --labels`); before, the
parser's own ValueError was a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from calibration.io.jsontext import JsonLimitError, loads_bounded
from judge.cli import main
from tests.helpers import REPO, case, write_jsonl

LIMIT = sys.get_int_max_str_digits()
DIGITS = [LIMIT + 1, 12_345]


def refusal(path: Path, line: int, digits: int) -> str:
    return f"{path.name}:{line}: a number of {digits} digits, over Python's {LIMIT}-digit limit"


def long_number(digits: int) -> str:
    return "7" * digits


@pytest.fixture
def graded(tmp_path: Path) -> Path:
    """A records file of three cases c0..c2 (the offline rules judge)."""
    cases = write_jsonl(tmp_path / "cases.jsonl", [case(f"c{i}") for i in range(3)])
    out = tmp_path / "graded.jsonl"
    assert main(["grade", str(cases), "--rubric", "faithfulness", "-o", str(out)], env={}) == 0
    return out


def labels_with_a_long_number(path: Path, digits: int) -> Path:
    """Labels of c0..c2; line 3's label is a long number."""
    rows = [json.dumps({"id": f"c{i}", "label": "faithful"}) for i in range(2)]
    rows.append(f'{{"id": "c2", "label": {long_number(digits)}}}')
    path.write_text("\n".join(rows) + "\n", "utf-8")
    return path


def test_the_shared_reader_refuses_only_the_digit_limit() -> None:
    with pytest.raises(JsonLimitError, match=f"a number of {LIMIT + 1} digits"):
        loads_bounded(f"[-{long_number(LIMIT + 1)}]")
    assert loads_bounded(f"[{long_number(LIMIT)}]") == [int(long_number(LIMIT))]
    assert loads_bounded(f"[{long_number(LIMIT)}.5, 1e999]")[1] == float("inf")
    with pytest.raises(UnicodeDecodeError):  # not mistaken for a long number
        loads_bounded(b'["\xff"]')


@pytest.mark.parametrize("digits", DIGITS)
def test_grade_names_each_case_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], digits: int
) -> None:
    good = json.dumps(case("a"))
    in_metadata = good[:-1] + f', "metadata": {{"n": {long_number(digits)}}}}}'
    as_the_id = json.dumps(case("b")).replace('"b"', f"-{long_number(digits)}", 1)
    source = tmp_path / "cases.jsonl"
    source.write_text(f"{good}\n{in_metadata}\n\n{as_the_id}\n", "utf-8")
    out = tmp_path / "o.jsonl"
    assert main(["grade", str(source), "--rubric", "faithfulness", "-o", str(out)], env={}) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert refusal(source, 2, digits) in err and refusal(source, 4, digits) in err
    assert not out.exists()


@pytest.mark.parametrize("digits", DIGITS)
def test_calibrate_names_the_label_line(
    tmp_path: Path, graded: Path, capsys: pytest.CaptureFixture[str], digits: int
) -> None:
    labels = labels_with_a_long_number(tmp_path / "people.jsonl", digits)
    argv = ["calibrate", str(graded), str(labels), "-o", str(tmp_path / "report")]
    assert main(argv, env={}) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and refusal(labels, 3, digits) in err


@pytest.mark.parametrize("digits", DIGITS)
def test_grade_with_human_labels_names_the_label_line(
    tmp_path: Path, graded: Path, capsys: pytest.CaptureFixture[str], digits: int
) -> None:
    labels = labels_with_a_long_number(tmp_path / "people.jsonl", digits)
    cases = tmp_path / "cases.jsonl"
    argv = ["grade", str(cases), "--rubric", "faithfulness", "-o", str(tmp_path / "again.jsonl")]
    assert main([*argv, "--human-labels", str(labels)], env={}) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and refusal(labels, 3, digits) in err


def test_view_labels_is_refused_before_serving(tmp_path: Path, graded: Path) -> None:
    """In a process of its own, bounded in time: a regression would serve, not return."""
    labels = labels_with_a_long_number(tmp_path / "people.jsonl", 9_999)
    done = subprocess.run(
        [sys.executable, "-m", "judge.cli", "view", str(graded), "--labels", str(labels)],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"error: --labels {labels}:3: a number of 9999 digits" in done.stderr
