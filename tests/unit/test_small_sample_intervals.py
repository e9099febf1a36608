"""Issue 19: with few labels no interval reads as certainty, and readiness and gates refuse
too little evidence. Each test fails on the code before the fix."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from calibration import calibrate
from calibration.compare.judges import compare_judges
from calibration.decisions.gates import evaluate, parse_condition
from calibration.decisions.plan import plan_sample_size
from calibration.decisions.readiness import GATE_READY, ROUGH_SIGNAL, assess_readiness
from calibration.estimates.prediction_powered import prediction_powered_summary
from calibration.estimates.rates import corrected_pass_rate
from calibration.inference.intervals import wilson_interval
from calibration.pairs.analysis import AnalysisOptions, analyse
from judge.cli import main


def _labels(path: Path, labels: list[str]) -> Path:
    rows = [f"c{i},{label}" for i, label in enumerate(labels)]
    path.write_text("id,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


# ---- item 1: kappa-type intervals ------------------------------------------------------


def test_three_agreeing_labels_are_not_gate_ready_and_fail_the_gate(tmp_path, capsys):
    labels = ["faithful", "faithful", "unfaithful"]
    j, h = _labels(tmp_path / "j.csv", labels), _labels(tmp_path / "h.csv", labels)
    argv = ["calibrate", str(j), str(h), "-o", str(tmp_path / "out"), "--require-ready"]
    code = main([*argv, "--fail-if", "kappa_ci95_low < 0.6"])
    out = capsys.readouterr().out
    assert code == 3
    assert "readiness: gate_ready" not in out
    result = calibrate(j, h)
    low, high = result["kappa_ci95"]
    assert result["kappa"] == 1.0 and high == 1.0
    # 3 of 3 agreeing: exact lower bound 0.025^(1/3) = 0.292 on the agreement scale,
    # mapped through kappa at chance agreement 5/9.
    agreement_low = 0.025 ** (1 / 3)
    assert low == pytest.approx((agreement_low - 5 / 9) / (4 / 9), abs=1e-9)
    assert "Clopper-Pearson" in result["kappa_ci95_method"]
    assert result["kappa_ci95_reason"]
    # How many more labels: 19 perfect labels at these rates give an exact lower bound
    # (0.025^(1/19) - 5/9) / (4/9) = 0.602, just above 0.6.
    assert any("plan asks for 19" in r for r in result["readiness_reasons"])


@pytest.mark.parametrize("n", [3, 5, 10, 20])
def test_perfect_agreement_never_gives_a_zero_width_interval(n):
    labels = ["pass" if i % 2 else "fail" for i in range(n)]
    result = analyse(
        [str(i) for i in range(n)], labels, labels, options=AnalysisOptions(weights="linear")
    )
    for key in ("kappa", "ac1", "weighted_kappa"):
        low, high = result[f"{key}_ci95"]
        assert -1 <= low < high <= 1, key


def test_a_judge_that_always_says_one_label_gets_an_interval_around_zero():
    human = ["pass", "fail", "pass", "pass", "fail"]
    judge = ["pass"] * 5  # kappa 0 in every resample: the bootstrap gives [0, 0]
    result = analyse([str(i) for i in range(5)], human, judge)
    low, high = result["kappa_ci95"]
    assert result["kappa"] == 0.0 and low < 0 < high


def test_the_agreement_interval_holds_the_estimate_and_equals_clopper_pearson():
    from calibration.agreement.small_sample import agreement_coefficient_interval
    from calibration.inference.intervals import clopper_pearson_interval

    matrix = np.array([[3, 1], [2, 4]])
    chance = float((matrix.sum(1) * matrix.sum(0)).sum() / 100)
    low, high = agreement_coefficient_interval(matrix, chance)
    cp = clopper_pearson_interval(7, 10)
    assert low == pytest.approx((cp[0] - chance) / (1 - chance))
    assert high == pytest.approx((cp[1] - chance) / (1 - chance))
    kappa = (0.7 - chance) / (1 - chance)
    assert low < kappa < high


def test_a_non_degenerate_bootstrap_interval_is_kept():
    fb = Path(__file__).resolve().parents[1] / "data" / "calibration" / "faithbench-gpt4o"
    result = calibrate(fb / "judge.csv", fb / "human.csv", n_bootstrap=200)
    assert result["kappa_ci95_reason"] is None
    assert result["kappa_ci95"][0] < result["kappa"] < result["kappa_ci95"][1]


# ---- readiness and plan ----------------------------------------------------------------


def test_gate_ready_needs_the_labels_the_plan_asks_for():
    result = {
        "n": 5,
        "kappa": 0.95,
        "kappa_ci95": (0.9, 1.0),  # an interval narrower than 5 labels can back
        "labels": ["fail", "pass"],
        "confusion_matrix": {"labels": ["fail", "pass"], "matrix": [[2, 0], [0, 3]]},
    }
    verdict, reasons = assess_readiness(result)
    assert verdict == ROUGH_SIGNAL
    assert any("too few labels" in r and "more" in r for r in reasons)
    enough = dict(result, n=200, confusion_matrix={"matrix": [[80, 0], [0, 120]]})
    assert assess_readiness(enough)[0] == GATE_READY


def test_the_plan_never_asks_for_two_labels_near_kappa_one():
    from calibration.decisions.plan import exact_floor
    from calibration.inference.intervals import clopper_pearson_interval

    plan = plan_sample_size(0.99, 0.2)
    assert plan.n >= exact_floor(0.2, 0.5) == 36
    # What the floor promises: perfect agreement on that many labels gives an exact
    # interval no wider than planned.
    low, _ = clopper_pearson_interval(plan.n, plan.n)
    assert (1 - low) / 0.5 <= 0.2
    assert plan_sample_size(0.6, 0.2).n == 246  # away from 1 the formula still decides


# ---- the gate --------------------------------------------------------------------------


def test_gate_on_five_cases_is_not_significantly_worse_from_a_point_interval():
    human = ["pass", "pass", "fail", "fail", "pass"]
    baseline = list(human)  # kappa 1 in every resample
    candidate = ["pass"] * 5  # kappa 0 in every resample: the difference was [-1, -1]
    result = compare_judges(
        [str(i) for i in range(5)], human, baseline, candidate, labels=["fail", "pass"]
    )
    low, high = result["difference"]["kappa_ci95"]
    assert low < 0 < high
    assert result["verdict"] != "worse"


def test_gate_min_kappa_does_not_pass_on_five_perfect_cases(tmp_path, capsys):
    labels = ["pass", "pass", "fail", "fail", "pass"]
    h = _labels(tmp_path / "h.csv", labels)
    b = _labels(tmp_path / "b.csv", ["pass"] * 5)
    c = _labels(tmp_path / "c.csv", labels)
    argv = ["gate", "--baseline", b, "--candidate", c, "--labels", h, "--min-kappa", "0.6"]
    code = main([str(a) for a in argv])
    out = capsys.readouterr().out
    assert code == 3
    assert "too few labels" in out and "more" in out


# ---- item 2: PPI++ and means -----------------------------------------------------------


def _summary(judge: list[str], human: dict[int, str]) -> dict:
    records = [
        {"id": f"c{i}", "label": v, "score": float(v == "faithful")} for i, v in enumerate(judge)
    ]
    rows = [{"id": f"c{i}", "label": v} for i, v in human.items()]
    return prediction_powered_summary(
        records, rows, positive_label="faithful", label_scores={"faithful": 1, "unfaithful": 0}
    )


def test_four_unanimous_labels_give_a_ppi_interval_at_least_as_wide_as_wilson():
    judge = ["unfaithful"] * 4 + ["faithful", "unfaithful"] * 8
    rate = _summary(judge, dict.fromkeys(range(4), "unfaithful"))["overall"]["pass_rate"]
    low, high = rate["ppi"]["ci95"]
    wilson = wilson_interval(0, 4)
    assert low <= wilson[0] and high >= wilson[1] == pytest.approx(0.49, abs=0.01)
    condition = parse_condition("ppi.pass_rate.ci95_high > 0.05", ["ppi.pass_rate.ci95_high"])
    (check,) = evaluate([condition], {"ppi.pass_rate.ci95_high": high})
    assert check.fails
    assert "under 30" in rate["note"]


def test_every_case_labelled_ppi_equals_the_human_only_estimate():
    judge = ["faithful", "unfaithful", "faithful", "faithful", "unfaithful", "faithful"]
    human = dict(
        enumerate(["faithful", "faithful", "unfaithful", "faithful", "faithful", "unfaithful"])
    )
    block = _summary(judge, human)["overall"]
    for quantity in ("pass_rate", "mean_score"):
        q = block[quantity]
        assert q["ppi"]["estimate"] == pytest.approx(q["human_only"]["estimate"])
        assert q["ppi"]["ci95"] == q["human_only"]["ci95"]


def test_mean_score_intervals_stay_on_the_scale():
    judge = ["faithful"] * 9 + ["unfaithful"]
    records = [{"id": f"c{i}", "label": v, "score": 1.0} for i, v in enumerate(judge)]
    rows = [{"id": f"c{i}", "label": "faithful", "score": s} for i, s in enumerate([1, 1, 1, 0.2])]
    out = prediction_powered_summary(records, rows, positive_label="faithful")["overall"]
    for side in ("judge_only", "human_only", "ppi"):
        low, high = out["mean_score"][side]["ci95"]
        assert 0 <= low < high <= 1, side


def test_bounded_mean_interval_is_wilson_for_zero_one_values():
    from calibration.agreement.small_sample import bounded_mean_interval

    assert bounded_mean_interval(0.0, 4, 0, 1) == pytest.approx(wilson_interval(0, 4))
    assert bounded_mean_interval(0.75, 4, 0, 1) == pytest.approx(wilson_interval(3, 4))
    low, high = bounded_mean_interval(3.0, 4, 1, 5)  # four 3s on a 1-5 scale
    assert 1 < low < 3 < high < 5


# ---- item 3: Rogan-Gladen --------------------------------------------------------------


def test_rogan_gladen_never_collapses_to_a_point_when_no_rate_fits():
    # 50 labels with Se = 1 (21 of 21) and Sp = 0.034 (1 of 29); the judge passes 88% of 750.
    out = corrected_pass_rate(660, 750, tp=21, fn=0, tn=1, fp=28)
    assert out.ci95 is None or out.ci95[1] - out.ci95[0] > 0
    assert math.isnan(out.rate) and "no rate in [0, 1] fits" in (out.reason or "")
    assert "0.420" in out.reason  # the labelled cases' own rate is said


def test_every_case_labelled_gives_the_human_rate_even_when_se_plus_sp_is_one():
    out = corrected_pass_rate(2, 4, tp=1, fn=1, tn=1, fp=1)  # Se + Sp = 1
    assert out.rate == 0.5 and out.ci95 == wilson_interval(2, 4) and out.reason is None
    one_class = corrected_pass_rate(0, 4, tp=0, fn=0, tn=4, fp=0)
    assert one_class.rate == 0.0 and one_class.ci95 == wilson_interval(0, 4)


# ---- item 9: gates on unrounded values -------------------------------------------------


def test_gates_compare_the_unrounded_figure_not_the_six_decimals_shown():
    import json

    from judge.engine.measure.run_gates import grade_metrics
    from judge.kinds._base import ratio

    summary = {
        "cases": 10_000_000,
        "status": {"ok": 10_000_000},
        "pass_rate": ratio(7_999_996, 10_000_000),
    }
    assert json.loads(json.dumps(summary))["pass_rate"] == 0.8  # what summary.json shows
    condition = parse_condition("pass_rate < 0.8", ["pass_rate"])
    (check,) = evaluate([condition], grade_metrics(summary))
    assert check.fails and check.value == pytest.approx(0.7999996, abs=1e-12)


def test_plan_from_three_agreeing_labels_plans_more_than_it_has(tmp_path, capsys):
    labels = ["faithful", "faithful", "unfaithful"]
    j, h = _labels(tmp_path / "j.csv", labels), _labels(tmp_path / "h.csv", labels)
    assert main(["calibrate", "--plan", str(j), str(h)]) == 0
    out = capsys.readouterr().out
    planned = int(out.split(" labelled cases give")[0])
    assert planned == 40  # ln(0.025) / ln(1 - 0.2 (1 - 5/9)), rounded up
    assert "about 0.000 wide" not in out  # 3 labels are not promised certainty
