"""Gates on calibrate: ``--require-ready`` and ``--fail-if`` exit 3; a bad condition exits 2
before any work (issue 15 item 5, issue 16 item 8); the parser itself is generic."""

from __future__ import annotations

import json

import pytest

from calibration.decisions.figures import METRIC_NAMES, gate_metrics
from calibration.decisions.gates import GateError, evaluate, parse_condition, parse_conditions
from tests.calibration_sets import faithbench, llmbar
from tests.unit.test_calibration_inputs import exit_code

NAMES = ("kappa", "kappa_ci95_low", "flip_rate")


@pytest.mark.parametrize(
    ("text", "op", "threshold"),
    [
        ("kappa_ci95_low < 0.6", "<", 0.6),
        ("kappa<=0.6", "<=", 0.6),
        ("  flip_rate >= 1e-2 ", ">=", 0.01),
        ("kappa == -0.5", "==", -0.5),
        ("kappa != .5", "!=", 0.5),
        ("kappa > 0", ">", 0.0),
    ],
)
def test_conditions_parse(text, op, threshold):
    condition = parse_condition(text, NAMES)
    assert (condition.op, condition.threshold) == (op, threshold)
    assert condition.text == text.strip()


@pytest.mark.parametrize("text", ["kappa", "kappa < ", "kappa ~ 0.6", "< 0.6", "kappa < 0.6x"])
def test_malformed_conditions_say_the_form(text):
    with pytest.raises(GateError, match="expected METRIC OP NUMBER"):
        parse_condition(text, NAMES)


def test_unknown_metric_lists_the_valid_names():
    with pytest.raises(GateError, match="no metric 'kapa'; valid names: flip_rate, kappa, kap"):
        parse_conditions(["kappa > 0", "kapa < 0.6"], NAMES)


def test_evaluate_fails_what_holds_and_what_is_undefined():
    conditions = parse_conditions(["kappa < 0.6", "kappa_ci95_low < 0.4", "flip_rate > 0"], NAMES)
    checks = evaluate(conditions, {"kappa": 0.5, "kappa_ci95_low": 0.45, "flip_rate": None})
    assert [c.status for c in checks] == ["failed", "ok", "undefined"]
    assert [c.fails for c in checks] == [True, False, True]
    lenient = evaluate(conditions, {"kappa": 0.7, "kappa_ci95_low": 0.5, "flip_rate": float("nan")})
    assert [c.fails for c in lenient] == [False, False, True]
    # One rule for every command: undefined fails, with a reason; so does a missing name.
    assert "undefined (fails: the result has no value for it)" in checks[2].describe()
    missing = evaluate(conditions[:1], {}, reasons={})[0]
    assert missing.fails and missing.outcome() == "undefined (fails: not in this result)"
    why = evaluate(conditions[2:], {"flip_rate": None}, reasons={"flip_rate": "no pairs"})[0]
    assert why.describe() == "flip_rate > 0: flip_rate = undefined -> undefined (fails: no pairs)"


def test_every_metric_name_resolves_on_a_binary_result(tmp_path):
    fb = faithbench()
    assert exit_code(fb.judge_file, fb.human_file, "-o", tmp_path, "--bootstrap", "50") == 0
    result = json.loads((tmp_path / "calibration.json").read_text())
    figures = gate_metrics(result)
    assert set(figures) == set(METRIC_NAMES)
    assert figures["kappa_ci95_low"] == result["kappa_ci95"][0]
    assert figures["tnr"] == pytest.approx(80 / 501)
    assert figures["mae"] is None  # categorical labels: no MAE


def test_require_ready_exits_3_on_faithbench_gpt4o(tmp_path, capsys):
    fb = faithbench()
    argv = [fb.judge_file, fb.human_file, "-o", tmp_path, "--bootstrap", "200"]
    assert exit_code(*argv, "--require-ready") == 3
    out = capsys.readouterr().out
    assert "gate: FAILED (exit 3)" in out and "readiness is not_ready -> failed" in out
    assert json.loads((tmp_path / "calibration.json").read_text())["gate"]["failed"] is True
    assert "## Gate: FAILED" in (tmp_path / "report.md").read_text()


def test_fail_if_exits_3_when_a_condition_holds_and_0_otherwise(tmp_path, capsys):
    fb, lb = faithbench(), llmbar()
    gate = ["--fail-if", "kappa_ci95_low < 0.6", "--fail-if", "tnr < 0.5"]
    assert exit_code(fb.judge_file, fb.human_file, "-o", tmp_path / "fb", *gate) == 3
    out = capsys.readouterr().out
    assert "kappa_ci95_low < 0.6: kappa_ci95_low = 0.05" in out and "tnr = 0.1597" in out
    argv = [lb.judge_file, lb.human_file, "-o", tmp_path / "lb", *gate, "--require-ready"]
    assert exit_code(*argv) == 0
    assert "gate: passed" in capsys.readouterr().out


def test_a_gate_on_an_undefined_figure_fails(tmp_path, capsys):
    lb = llmbar()
    argv = [lb.judge_file, lb.human_file, "-o", tmp_path, "--fail-if", "mae > 1"]
    assert exit_code(*argv) == 3
    assert "mae = undefined -> undefined" in capsys.readouterr().out


def test_a_bad_condition_exits_2_before_any_work(tmp_path, capsys):
    missing = tmp_path / "not-there.csv"
    out = tmp_path / "report"
    assert exit_code(missing, missing, "-o", out, "--fail-if", "kapa < 0.6") == 2
    err = capsys.readouterr().err
    assert "no metric 'kapa'; valid names:" in err and "kappa_ci95_low" in err
    assert "no such file" not in err and not out.exists()
