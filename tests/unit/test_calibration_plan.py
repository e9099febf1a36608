"""The label budget plans from both raters' pass rates (issue 15 item 2)."""

from __future__ import annotations

import numpy as np
import pytest

from calibration import calibrate, cohen_kappa
from calibration.agreement.metrics import kappa_from_confusion
from calibration.decisions.plan import plan_sample_size, predicted_width, simulate_interval_width
from calibration.inference.intervals import bootstrap_table_ci
from judge.cli import main
from tests.calibration_sets import examples, faithbench, grade_examples_offline


def test_plan_on_faithbench_marginals_is_within_15_percent_of_the_bootstrap():
    fb = faithbench()
    kappa = cohen_kappa(fb.human, fb.judge)
    # The case bootstrap drawn through the confusion matrix: the same distribution as
    # resampling the 750 cases, in milliseconds (calibration.inference.intervals).
    h, j = np.asarray(fb.human, dtype=int), np.asarray(fb.judge, dtype=int)
    matrix = np.bincount(2 * h + j, minlength=4).reshape(2, 2)
    lo, hi = bootstrap_table_ci(matrix, kappa_from_confusion, n_resamples=2000, seed=0)
    boot = hi - lo
    planned = predicted_width(
        len(fb.ids), kappa, human_rate=fb.human.mean(), judge_rate=fb.judge.mean()
    )
    assert planned == pytest.approx(boot, rel=0.15)
    # The old plan assumed both raters pass at the people's rate: over twice as wide.
    shared = predicted_width(
        len(fb.ids), kappa, human_rate=fb.human.mean(), judge_rate=fb.human.mean()
    )
    assert shared > 2 * boot


@pytest.mark.parametrize(("kappa", "human", "judge"), [(0.1, 0.33, 0.88), (0.5, 0.3, 0.45)])
def test_plan_agrees_with_simulation_at_unequal_rates(kappa, human, judge):
    plan = plan_sample_size(kappa, 0.2, human_rate=human, judge_rate=judge)
    simulated = simulate_interval_width(
        plan.n, kappa, prevalence=human, judge_rate=judge, n_simulations=1500, seed=3
    )
    assert simulated == pytest.approx(0.2, rel=0.12)


def test_impossible_kappa_for_the_rates_is_refused():
    with pytest.raises(ValueError, match="it lies between"):
        plan_sample_size(0.9, 0.2, human_rate=0.33, judge_rate=0.88)


def test_cli_plan_reads_rates_and_kappa_from_the_files(capsys):
    fb = faithbench()
    observed = calibrate(fb.judge_file, fb.human_file, n_bootstrap=0)
    expected = plan_sample_size(
        observed["kappa"], 0.2, human_rate=fb.human.mean(), judge_rate=fb.judge.mean()
    )
    assert main(["calibrate", "--plan", str(fb.judge_file), str(fb.human_file)]) == 0
    out = capsys.readouterr().out
    assert f"{expected.n} labelled cases" in out
    assert "judge 0.881" in out and "people passing 0.332" in out
    assert "The 750 labelled cases you have give an interval about 0.059 wide." in out
    assert expected.n < 100  # the shared-rate plan asked for 397


def test_cli_plan_from_given_rates(capsys):
    argv = ["calibrate", "--plan", "--kappa", "0.1", "--judge-rate", "0.88", "--human-rate", "0.33"]
    assert main(argv) == 0
    expected = plan_sample_size(0.1, 0.2, human_rate=0.33, judge_rate=0.88).n
    assert f"{expected} labelled cases" in capsys.readouterr().out
    assert main([*argv[:3], "0.9", *argv[4:]]) == 2
    assert "impossible" in capsys.readouterr().err


def test_bootstrap_width_needs_no_shared_rate_assumption():
    # A sanity check of the check: at equal rates both plans agree.
    rng = np.random.default_rng(0)
    human = rng.integers(0, 2, 400)
    judge = np.where(rng.random(400) < 0.8, human, 1 - human)
    matrix = np.bincount(2 * human + judge, minlength=4).reshape(2, 2)
    lo, hi = bootstrap_table_ci(matrix, kappa_from_confusion, n_resamples=1000, seed=1)
    planned = predicted_width(
        400, cohen_kappa(human, judge), human_rate=human.mean(), judge_rate=judge.mean()
    )
    assert planned == pytest.approx(hi - lo, rel=0.15)


def test_cli_plan_leaves_abstentions_aside(tmp_path, capsys):
    # examples/: 43 labels of which 6 abstained; kappa and rates come from the 37 pass/fail
    # pairs alike (a three-class kappa with two-class rates was "impossible").
    records = grade_examples_offline(tmp_path / "faithfulness.jsonl")
    labelled = examples(records)
    kappa = cohen_kappa(labelled.human, labelled.judge)
    assert main(["calibrate", "--plan", str(records), str(labelled.human_file)]) == 0
    out = capsys.readouterr().out
    assert f"around kappa {kappa:.3g}" in out and "The 37 labelled cases" in out
