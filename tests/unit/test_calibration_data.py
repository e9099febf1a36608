"""Figures reproduced on real judge-vs-human label sets (tests/data/calibration, see SOURCE.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from calibration import calibrate, cohen_kappa, read_labels

DATA = Path(__file__).resolve().parents[1] / "data" / "calibration"
FAST = {"n_bootstrap": 200, "seed": 0}


@pytest.fixture(scope="module")
def figures() -> dict:
    return json.loads((DATA / "figures.json").read_text())


def test_llmbar_natural_gpt4_order1_vs_gold(figures):
    folder = DATA / "llmbar-natural-gpt4"
    r = calibrate(folder / "judge_order1.csv", folder / "gold.csv", **FAST)
    assert r["n"] == 100
    assert r["confusion_matrix"] == {"labels": ["A", "B"], "matrix": [[39, 3], [5, 53]]}
    assert r["kappa"] == pytest.approx(0.8369, abs=5e-5)
    assert r["kappa"] == pytest.approx(figures["llmbar-natural-gpt4"]["kappa_order1_vs_gold"])


def test_llmbar_natural_chatgpt_order1_vs_gold(figures):
    folder = DATA / "llmbar-natural-chatgpt"
    r = calibrate(folder / "judge_order1.csv", folder / "gold.csv", **FAST)
    assert r["kappa"] == pytest.approx(figures["llmbar-natural-chatgpt"]["kappa_order1_vs_gold"])


def test_faithbench_gpt4o_is_not_ready_and_misses_hallucinations(figures):
    folder = DATA / "faithbench-gpt4o"
    r = calibrate(folder / "judge.csv", folder / "human.csv", **FAST)
    expected = figures["faithbench-gpt4o"]
    assert r["confusion_matrix"]["labels"] == ["hallucinated", "consistent"]
    assert r["confusion_matrix"]["matrix"] == [[80, 421], [9, 240]] == expected["confusion"]
    assert r["kappa"] == pytest.approx(0.0872, abs=5e-5)
    assert r["balanced_accuracy"] == pytest.approx(0.5618, abs=5e-5)
    assert r["readiness"] == "not_ready"
    reasons = " ".join(r["readiness_reasons"])
    assert "agreement above chance but the judge misses most of class 'hallucinated'" in reasons
    binary = r["binary"]
    assert binary["positive_label"] == "consistent"
    assert binary["judge_pass_rate"] == pytest.approx(661 / 750)
    assert binary["human_pass_rate"] == pytest.approx(249 / 750)
    lo, hi = binary["corrected_pass_rate_ci95"]
    assert lo < binary["human_pass_rate"] < hi < binary["judge_pass_rate"]


def test_topicalchat_coherence_correlations(figures):
    folder = DATA / "topicalchat-coherence"
    r = calibrate(
        folder / "judge.csv",
        folder / "human.csv",
        judge_field="score",
        human_field="score",
        group_field="dialogue",
        **FAST,
    )
    assert r["n"] == 359
    assert r["scale"] == "continuous"
    assert r["kappa"] is None or r["kappa"] != r["kappa"]
    assert r["correlation"]["pearson"] == pytest.approx(0.468, abs=5e-4)
    by_group = r["correlation_by_group"]
    assert by_group["kendall"] == pytest.approx(0.391, abs=5e-4)
    assert by_group["pearson"] == pytest.approx(0.498, abs=5e-4)
    assert by_group["groups_used"] + by_group["groups_skipped"] == 60


@pytest.mark.parametrize(
    ("weights", "expected"), [(None, 0.0761), ("linear", 0.1057), ("quadratic", 0.1555)]
)
def test_hanna_relevance_rater1_vs_rater2(weights, expected):
    folder = DATA / "hanna-relevance"
    r = calibrate(folder / "rater2.csv", folder / "rater1.csv", weights=weights, **FAST)
    value = r["weighted_kappa"] if weights else r["kappa"]
    assert value == pytest.approx(expected, abs=5e-5)
    one = {x.id: x.value for x in read_labels(folder / "rater1.csv").records}
    two = {x.id: x.value for x in read_labels(folder / "rater2.csv").records}
    ids = sorted(one)
    human, judge = [int(one[i]) for i in ids], [int(two[i]) for i in ids]
    assert (
        abs(
            cohen_kappa(human, judge, weights=weights)
            - cohen_kappa_score(human, judge, weights=weights)
        )
        < 1e-12
    )


def test_hanna_three_raters_give_the_ceiling_and_keep_every_item():
    folder = DATA / "hanna-relevance"
    r = calibrate(folder / "rater1.csv", folder / "humans_long.csv", **FAST)
    inter = r["inter_annotator"]
    assert inter["annotators"] == ["rater1", "rater2", "rater3"]
    assert inter["method"] == "fleiss_kappa"
    assert inter["pairwise"]["rater1 vs rater2"]["kappa"] == pytest.approx(0.0761, abs=5e-5)
    # Every item kept: three ratings always have a median on the 1-5 scale.
    assert r["n"] == 1056 and r["excluded"]["human"] == {} and inter["adjudicated"] == {}
    assert inter["consolidation"] == "median rating; between two levels, the lower"
    assert r["unmatched"]["judge_only"] == 0
