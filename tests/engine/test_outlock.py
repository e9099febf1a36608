"""Issue 20 item 3: the output lock (judge.engine.outlock) between two processes, and the
paths it refuses with one line instead of a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from judge.cli import main
from judge.engine.outlock import OutputLock, OutputLockedError, lock_path
from judge.errors import UsageError
from tests.helpers import REPO

HOLDER = """
import sys
from pathlib import Path
from judge.engine.outlock import OutputLock
with OutputLock(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.read()  # hold it until the test closes our stdin
"""


def test_another_process_holding_the_output_is_named_and_refused(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=REPO,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(OutputLockedError, match=rf"\(pid {holder.pid}\)"):
            OutputLock(out).acquire()
        argv = ["grade", str(REPO / "examples" / "cases.jsonl"), "--rubric", "faithfulness"]
        assert main([*argv, "-o", str(out)], env={}) == 2
        assert not out.exists()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    with OutputLock(out):  # the holder has ended: free again
        assert lock_path(out).exists()
    assert not lock_path(out).exists()


def test_a_lock_left_by_a_killed_run_is_taken_again(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    lock_path(out).write_text("4242\n")  # its process is gone: the OS dropped the lock
    with OutputLock(out):
        assert lock_path(out).read_text() != "4242\n"


def test_folders_made_for_the_lock_go_when_left_empty(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper" / "r.jsonl"
    with OutputLock(out):
        assert out.parent.is_dir()
    assert not (tmp_path / "new").exists()


def test_an_output_under_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    with pytest.raises(UsageError, match="notes.txt is a file, not a folder"):
        OutputLock(tmp_path / "notes.txt" / "r.jsonl").acquire()


GATE = REPO / "tests" / "data" / "calibration"


def gate(*extra: str) -> int:
    argv = ["gate", "--baseline", str(GATE / "llmbar-natural-gpt4" / "judge_order1.csv")]
    argv += ["--candidate", str(GATE / "llmbar-natural-chatgpt" / "judge_order1.csv")]
    argv += ["--labels", str(GATE / "llmbar-natural-gpt4" / "gold.csv")]
    return main([*argv, *extra], env={})


def test_gate_outputs_go_through_the_output_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n")
    assert gate("--markdown", str(notes)) == 2
    assert "is not a gate report" in capsys.readouterr().err
    assert notes.read_text() == "# my notes\n"
    out, md = tmp_path / "gate.json", tmp_path / "gate.md"
    assert gate("--json", str(out), "--markdown", str(md)) == 3  # the candidate is worse
    assert gate("--json", str(out), "--markdown", str(md)) == 3  # ours: replaced
    assert out.is_file() and md.read_text().startswith("# Judge gate: FAILED")
    with OutputLock(out):
        assert gate("--json", str(out)) == 2
    assert "being written by another judge run" in capsys.readouterr().err


def test_a_calibration_report_folder_another_run_writes_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report"
    labels = REPO / "examples" / "human_labels.csv"
    with OutputLock(report):
        assert main(["calibrate", str(labels), str(labels), "-o", str(report)], env={}) == 2
    assert "is being written by another judge run" in capsys.readouterr().err
    assert not report.exists()
