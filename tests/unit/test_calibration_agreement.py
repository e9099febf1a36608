"""Agreement beyond kappa (issue 15 item 6): Gwet's AC1 against irrCAC, intervals for
Fleiss' kappa and Krippendorff's alpha, per-class TPR/TNR with Wilson intervals, and the
sentence that says when kappa and AC1 part.

irrCAC's figures are recorded in tests/data/calibration/irrcac-figures.json by
irrcac_figures.py beside it (irrCAC pins scipy 1.12, which this environment does not use).
"""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy import stats

from calibration import calibrate
from calibration.agreement.coefficients import ac1_from_confusion, gwet_ac1
from calibration.decisions.figures import METRIC_NAMES
from tests.calibration_sets import DATA, faithbench, grade_examples_offline, llmbar
from tests.unit.test_calibration_inputs import exit_code

IRRCAC = json.loads((DATA / "irrcac-figures.json").read_text())
FAST = {"n_bootstrap": 200, "seed": 0}


def _matrix_in(order: list[str], result: dict) -> list[list[int]]:
    """The result's confusion matrix with its classes in ``order``."""
    labels = result["confusion_matrix"]["labels"]
    matrix = np.array(result["confusion_matrix"]["matrix"])
    index = [labels.index(label) for label in order]
    return matrix[np.ix_(index, index)].tolist()


@pytest.mark.parametrize(
    ("name", "labelled"), [("faithbench-gpt4o", faithbench), ("llmbar-natural-gpt4", llmbar)]
)
def test_ac1_equals_irrcac_on_the_vendored_sets(name, labelled):
    figures, data = IRRCAC[name], labelled()
    r = calibrate(data.judge_file, data.human_file, **FAST)
    assert _matrix_in(figures["labels"], r) == figures["confusion"]
    assert r["ac1"] == pytest.approx(figures["gwet_ac1"], abs=1e-12)
    assert r["krippendorff_alpha"] == pytest.approx(figures["krippendorff_alpha"], abs=1e-12)
    lo, hi = r["ac1_ci95"]
    assert lo < r["ac1"] < hi


def test_ac1_equals_irrcac_on_the_examples(tmp_path):
    figures = IRRCAC["examples-rules-faithfulness"]
    assert ac1_from_confusion(figures["confusion"]) == pytest.approx(figures["gwet_ac1"], abs=1e-12)
    records = grade_examples_offline(tmp_path / "faithfulness.jsonl")
    r = calibrate(records, Path("examples/human_labels.csv"), **FAST)
    assert r["ac1"] == pytest.approx(ac1_from_confusion(r["confusion_matrix"]["matrix"]), abs=1e-15)
    if _matrix_in(figures["labels"], r) == figures["confusion"]:  # the rules judge as recorded
        assert r["ac1"] == pytest.approx(figures["gwet_ac1"], abs=1e-12)


def test_ac1_from_labels_and_its_limits():
    # 75% agreement, mean class shares 0.625 and 0.375: p_e = 0.46875 (irrCAC: 0.52941).
    assert gwet_ac1(list("xyxx"), list("xyyx")) == pytest.approx((0.75 - 0.46875) / 0.53125)
    assert np.isnan(gwet_ac1([], []))
    assert gwet_ac1(list("aaab"), list("aaab")) == 1.0


def test_faithbench_says_kappa_and_ac1_disagree_on_terminal_and_in_the_report(tmp_path, capsys):
    fb = faithbench()
    assert exit_code(fb.judge_file, fb.human_file, "-o", tmp_path, "--bootstrap", "100") == 0
    sentence = "Kappa and Gwet's AC1 disagree in sign (kappa +0.087, AC1 -0.097, "
    sentence += "Krippendorff's alpha -0.201)"
    assert sentence in capsys.readouterr().out
    assert sentence in (tmp_path / "report.md").read_text()
    lb = llmbar()
    assert calibrate(lb.judge_file, lb.human_file, n_bootstrap=0)["prevalence_note"] is None


def test_per_class_tpr_and_tnr_carry_wilson_intervals():
    fb = faithbench()
    r = calibrate(fb.judge_file, fb.human_file, n_bootstrap=0)
    missed = r["per_class"]["hallucinated"]
    assert missed["tpr"] == pytest.approx(80 / 501) == missed["recall"]
    assert missed["tnr"] == pytest.approx(240 / 249)
    wilson = stats.binomtest(80, 501).proportion_ci(method="wilson")
    assert missed["tpr_ci95"] == pytest.approx((wilson.low, wilson.high), abs=1e-12)
    assert r["binary"]["tnr_ci95"] == missed["tpr_ci95"]  # pass = consistent: its TNR


def test_inter_annotator_points_match_krippendorff_and_irrcac_with_intervals():
    folder = DATA / "hanna-relevance"
    r = calibrate(folder / "rater1.csv", folder / "humans_long.csv", **FAST)
    inter = r["inter_annotator"]
    figures = IRRCAC["hanna-relevance-3-raters"]
    assert inter["fleiss_kappa"] == pytest.approx(figures["fleiss_kappa"], abs=1e-12)
    assert inter["krippendorff_alpha"] == pytest.approx(figures["krippendorff_alpha"], abs=1e-12)
    rows = [line.split(",") for line in (folder / "humans_long.csv").read_text().split()[1:]]
    raters = sorted({a for _, a, _ in rows})
    table = {(i, a): float(v) for i, a, v in rows}
    ids = sorted({i for i, _, _ in rows})
    data = np.array([[table.get((i, a), np.nan) for i in ids] for a in raters])
    theirs = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert inter["krippendorff_alpha"] == pytest.approx(theirs, abs=1e-12)
    for key in ("fleiss_kappa", "krippendorff_alpha"):
        lo, hi = inter[f"{key}_ci95"]
        assert lo < inter[key] < hi and hi - lo < 0.1
    again = calibrate(folder / "rater1.csv", folder / "humans_long.csv", **FAST)
    assert again["inter_annotator"]["fleiss_kappa_ci95"] == inter["fleiss_kappa_ci95"]
    off = calibrate(folder / "rater1.csv", folder / "humans_long.csv", n_bootstrap=0)
    assert off["inter_annotator"]["krippendorff_alpha_ci95"] is None


def test_ac1_is_a_gate_metric(tmp_path):
    assert {"ac1", "ac1_ci95_low", "krippendorff_alpha"} <= set(METRIC_NAMES)
    fb = faithbench()
    argv = [fb.judge_file, fb.human_file, "-o", tmp_path, "--fail-if", "ac1_ci95_low < 0"]
    assert exit_code(*argv) == 3
