"""Held-out agreement (issue 15 item 4): ``--split test=F --seed S`` stratifies by human
label, fits on dev only, judges readiness on test and says so; no split, no change."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from calibration import calibrate, cohen_kappa
from calibration.decisions.figures import gate_metrics
from calibration.pairs.threshold import fit_threshold
from tests.calibration_sets import DESIGN_KEYS, faithbench, read_csv_labels
from tests.unit.test_calibration_inputs import exit_code


@pytest.fixture
def scored(tmp_path) -> tuple[Path, Path]:
    """200 cases: judge scores in 0..1, human pass/fail; the best cut depends on the cases."""
    rng = np.random.default_rng(5)
    human = rng.random(200) < 0.4
    score = np.clip(np.where(human, 0.62, 0.45) + rng.normal(0, 0.15, 200), 0, 1).round(3)
    judge = tmp_path / "judge.csv"
    judge.write_text("id,score\n" + "".join(f"c{i},{s}\n" for i, s in enumerate(score)))
    labels = tmp_path / "human.csv"
    labels.write_text(
        "id,label\n" + "".join(f"c{i},{'pass' if h else 'fail'}\n" for i, h in enumerate(human))
    )
    return judge, labels


def test_without_a_split_the_output_keeps_its_keys():
    fb = faithbench()
    r = calibrate(fb.judge_file, fb.human_file, n_bootstrap=0)
    assert set(r) >= DESIGN_KEYS and "split" not in r
    assert r["n"] == 750


def test_split_is_stratified_disjoint_and_seeded():
    fb = faithbench()
    r = calibrate(fb.judge_file, fb.human_file, n_bootstrap=0, test_fraction=0.3, seed=4)
    split = r["split"]
    dev, test = split["dev_ids"], split["test_ids"]
    assert not set(dev) & set(test) and len(dev) + len(test) == 750
    assert (split["n_dev"], split["n_test"]) == (525, 225) and r["n"] == 225
    human = read_csv_labels(fb.human_file)
    overall, held = Counter(human.values()), Counter(human[i] for i in test)
    for label, count in overall.items():
        assert abs(held[label] - 0.3 * count) <= 1  # stratified by human label
    again = calibrate(fb.judge_file, fb.human_file, n_bootstrap=0, test_fraction=0.3, seed=4)
    assert again["split"]["test_ids"] == test
    other = calibrate(fb.judge_file, fb.human_file, n_bootstrap=0, test_fraction=0.3, seed=5)
    assert other["split"]["test_ids"] != test


def test_top_level_figures_and_readiness_are_the_test_splits():
    fb = faithbench()
    r = calibrate(fb.judge_file, fb.human_file, n_bootstrap=100, test_fraction=0.3, seed=4)
    human, judge = read_csv_labels(fb.human_file), read_csv_labels(fb.judge_file)
    test = r["split"]["test_ids"]
    assert r["kappa"] == pytest.approx(
        cohen_kappa([human[i] for i in test], [judge[i] for i in test])
    )
    dev = r["split"]["dev_ids"]
    assert r["split"]["dev"]["kappa"] == pytest.approx(
        cohen_kappa([human[i] for i in dev], [judge[i] for i in dev])
    )
    assert r["readiness_reasons"][0].startswith("judged on the held-out test split: dev 525")
    assert r["split"]["side_by_side"]["test"] == gate_metrics(r)
    # The corrected pass rate takes Se/Sp from test and the judge's rate over all 750.
    assert r["binary"]["judged"] == {**r["binary"]["judged"], "n": 750, "unlabelled": 525}


def read_csv_labels_field(path: Path, field: str) -> dict[str, str]:
    rows = [line.split(",") for line in path.read_text().splitlines()]
    column = rows[0].index(field)
    return {row[0]: row[column] for row in rows[1:]}


def test_a_fitted_threshold_is_fitted_on_dev_only(scored):
    judge, human = scored
    options = {"judge_field": "score", "fit_threshold": True, "n_bootstrap": 0}
    r = calibrate(judge, human, **options, test_fraction=0.3, seed=2)
    scores = {k: float(v) for k, v in read_csv_labels_field(judge, "score").items()}
    labels = read_csv_labels(human)
    dev = r["split"]["dev_ids"]
    expected, _ = fit_threshold([scores[i] for i in dev], [labels[i] == "pass" for i in dev])
    everyone, _ = fit_threshold(list(scores.values()), [labels[i] == "pass" for i in scores])
    assert expected != everyone  # the data set makes the check meaningful
    assert r["threshold"]["value"] == expected
    assert r["threshold"]["fitted_on"] == "dev split" and r["threshold"]["in_sample"] is False
    test = r["split"]["test_ids"]
    cut = ["pass" if scores[i] >= expected else "fail" for i in test]
    assert r["kappa"] == pytest.approx(cohen_kappa([labels[i] for i in test], cut))
    assert not any("in-sample" in reason for reason in r["readiness_reasons"])
    assert "fitted on dev only" in r["readiness_reasons"][0]


def test_cli_split_prints_dev_and_test_and_gates_on_test(tmp_path, capsys):
    fb = faithbench()
    argv = [fb.judge_file, fb.human_file, "-o", tmp_path, "--bootstrap", "100"]
    argv += ["--split", "test=0.3", "--seed", "4", "--fail-if", "kappa > 0.5"]
    assert exit_code(*argv) == 0
    out = capsys.readouterr().out
    assert "held-out split: dev 525, test 225 labelled cases (seed 4)" in out
    assert "n = 750 matched (225 in the test split)" in out
    data = json.loads((tmp_path / "calibration.json").read_text())
    test_kappa = data["split"]["side_by_side"]["test"]["kappa"]
    assert f"kappa = {test_kappa:.4g}" in data["gate"]["checks"][0]
    assert "## Dev and test" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize("value", ["test=1.5", "train=0.3", "test=", "0.3", "test=0"])
def test_bad_split_values_exit_2(tmp_path, capsys, value):
    fb = faithbench()
    assert exit_code(fb.judge_file, fb.human_file, "-o", tmp_path, "--split", value) == 2
    assert "--split" in capsys.readouterr().err


def test_a_class_too_small_to_split_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "h.csv").write_text(
        "id,label\n" + "".join(f"c{i},pass\n" for i in range(9)) + "c9,fail\n"
    )
    (tmp_path / "j.csv").write_text("id,label\n" + "".join(f"c{i},pass\n" for i in range(10)))
    assert exit_code(tmp_path / "j.csv", tmp_path / "h.csv", "--split", "test=0.3") == 2
    assert "cannot split 10 labelled cases with test=0.3" in capsys.readouterr().err
