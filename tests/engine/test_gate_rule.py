"""Issue 12 item 6: one gate parser and evaluator (calibration.decisions.gates) for calibrate, gate,
grade and probe, with one rule: a metric that is undefined fails the gate and says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.cli import main
from tests.helpers import REPO, case, write_jsonl

EXAMPLES = REPO / "examples"


def test_grade_says_why_an_undefined_gate_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [case(f"a{i}", answer="I don't know.") for i in range(3)]  # every case abstains
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    args = ["grade", str(source), "--rubric", "faithfulness", "-o", str(tmp_path / "o.jsonl")]
    assert main([*args, "--fail-if", "mean_score < 0.5"], env={}) == 3
    err = capsys.readouterr().err
    assert "gate: mean_score < 0.5: undefined -> undefined (fails: no case of this run was " in err


def test_probe_gate_on_a_status_no_verdict_had_counts_zero(tmp_path: Path) -> None:
    """Before: `status.api_error` was accepted up front, then, with no api_error in the
    report, a usage error (exit 2) after every verdict had been paid for."""
    out = tmp_path / "r.json"
    args = ["probe", "repeat", str(EXAMPLES / "cases.jsonl"), "--rubric", "relevance"]
    args += ["--repeats", "2", "-o", str(out), "--fail-if", "status.api_error > 0"]
    assert main(args, env={}) == 0
    check = json.loads(out.read_text())["gate"]["checks"][0]
    assert check == {
        "condition": "status.api_error > 0",
        "value": 0.0,
        "status": "ok",
        "fails": False,
        "reason": None,
    }


def test_probe_undefined_bias_check_fails_the_gate(tmp_path: Path) -> None:
    """Changed: a bias check that cannot be computed used to pass `--fail-if-biased`."""
    rows = [case(f"c{i}", metadata={"generator": "gpt-4o"}) for i in range(3)]
    source = write_jsonl(tmp_path / "in.jsonl", rows)  # own-family answers only: no gap
    out = tmp_path / "r.json"
    args = ["probe", "self-preference", str(source), "--rubric", "relevance", "-o", str(out)]
    assert main([*args, "--judge-family", "openai", "--fail-if-biased"], env={}) == 3
    gate = json.loads(out.read_text())["gate"]
    assert gate["failed"] and gate["checks"][0]["status"] == "undefined"
    assert "undefined (fails: too few verdicts" in (tmp_path / "r.md").read_text()
