"""Issue 20: the outputs of every command go through the one output check, `judge align`'s
and `judge rubrics new|lock`'s too (before, each had checks of its own: a symbolic link was
written through, and a second run on the same file was not refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.cli import main
from judge.engine.outlock import OutputLock
from tests.helpers import REPO

EXAMPLES = REPO / "examples"


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("graded") / "graded.jsonl"
    argv = ["grade", str(EXAMPLES / "cases.jsonl"), "--rubric", "faithfulness", "-o", str(path)]
    assert main(argv, env={}) == 0
    return path


def align(records: Path, test_labels: Path, folder: Path, *extra: str) -> int:
    argv = ["align", "--rubric", "faithfulness", "--labels", str(EXAMPLES / "human_labels.csv")]
    argv += ["--records", str(records), "--cases", str(EXAMPLES / "cases.jsonl")]
    argv += ["--split", "test=0.3", "--rubrics-dir", str(folder), "--test-labels", str(test_labels)]
    return main([*argv, *extra], env={})


def test_align_writes_no_test_labels_through_a_link(
    records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    link = tmp_path / "test.jsonl"
    link.symlink_to(target)
    assert align(records, link, tmp_path / "mine", "--overwrite") == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert target.read_text() == "keep me\n"
    assert not list((tmp_path / "mine").glob("*/v*.yaml"))


def test_align_is_refused_while_another_run_writes_its_test_labels(
    records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test_labels = tmp_path / "test.jsonl"
    with OutputLock(test_labels, "--test-labels"):
        assert align(records, test_labels, tmp_path / "mine") == 2
    assert "is being written by another judge run" in capsys.readouterr().err
    assert not test_labels.exists()


def test_rubrics_lock_writes_no_lock_through_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mine"
    assert main(["rubrics", "new", "tone", "--kind", "scale", "--rubrics-dir", str(folder)]) == 0
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    (folder / "rubrics.lock").symlink_to(target)
    assert main(["rubrics", "lock", "--rubrics-dir", str(folder)], env={}) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert target.read_text() == "keep me\n"


def test_rubrics_lock_replaces_its_own_lock_but_not_another_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mine"
    assert main(["rubrics", "new", "tone", "--kind", "scale", "--rubrics-dir", str(folder)]) == 0
    assert main(["rubrics", "lock", "--rubrics-dir", str(folder)], env={}) == 0
    assert main(["rubrics", "lock", "--rubrics-dir", str(folder)], env={}) == 0  # ours: relocked
    (folder / "rubrics.lock").write_text("my notes\n")
    assert main(["rubrics", "lock", "--rubrics-dir", str(folder)], env={}) == 2
    assert "is not a rubric lock" in capsys.readouterr().err
    assert (folder / "rubrics.lock").read_text() == "my notes\n"
