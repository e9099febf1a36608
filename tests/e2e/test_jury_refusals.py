"""Where a jury is not supported yet, the command says so in one line and exits 2, before
anything is sent: `--batch-api` with `judge grade --jury` (its export and import:
tests/e2e/test_jury_batch.py; `judge probe --jury`: tests/e2e/test_jury_probe.py; a jury
in `judge serve`: tests/e2e/test_jury_service.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.cli import main
from judge.testing.jurors import planted_truth, write_cases


@pytest.fixture
def jury(tmp_path: Path) -> Path:
    path = tmp_path / "jury.yaml"
    path.write_text("jurors: [{name: a, model: m1}, {name: b, model: m2}]\n", "utf-8")
    return path


def test_grade_refuses_the_batch_api_with_a_jury(
    tmp_path: Path, jury: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", planted_truth(3))
    args = ["grade", str(cases), "--rubric", "policy", "--jury", str(jury)]
    assert main([*args, "--batch-api", "-o", str(tmp_path / "out")], env={}) == 2
    err = capsys.readouterr().err
    assert "--jury does not combine with --batch-api" in err and "--export-batch DIR" in err
    assert not (tmp_path / "out").exists()
