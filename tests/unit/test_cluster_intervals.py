"""Intervals on clustered cases: the turn pass rate with conversations as clusters, the
cluster bootstrap's resamples, and the mean score's bounded interval (each against
statsmodels or scipy where they have one)."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from calibration.inference.clusters import ClusterMoments, cluster_bootstrap_indices
from judge.evaluation import mean_figures


def _moments(rows) -> ClusterMoments:
    moments = ClusterMoments()
    for passed, units in rows:
        moments.add(passed, units)
    return moments


def test_one_unit_clusters_give_clopper_pearson_near_the_pooled_count() -> None:
    """Clusters of one unit are independent units: with many of them the effective size
    is about their number, and the interval Clopper-Pearson's on the pooled count."""
    rng = np.random.default_rng(0)
    units = rng.random(4000) < 0.8
    got = _moments([(float(u), 1.0) for u in units]).interval()
    low, high = proportion_confint(int(units.sum()), len(units), method="beta")
    assert got == pytest.approx((low, high), abs=2e-3)


def test_turns_that_pass_or_fail_together_count_as_one_conversation_each() -> None:
    """Ten conversations of six turns each, every turn of a conversation alike: six turns
    say no more than one, so the interval is about that of ten units, far wider than
    sixty independent turns'."""
    rows = [(6.0, 6.0)] * 8 + [(0.0, 6.0)] * 2
    got = _moments(rows).interval()
    assert got is not None
    pooled = proportion_confint(48, 60, method="beta")
    ten = proportion_confint(8, 10, method="beta")
    assert got[1] - got[0] > 1.5 * (pooled[1] - pooled[0])
    assert got[0] <= ten[0] + 0.02 and got[1] >= ten[1] - 0.02


def test_every_turn_passing_does_not_collapse_the_interval() -> None:
    got = _moments([(5.0, 5.0)] * 10).interval()
    assert got is not None and got[1] == 1.0 and got[0] < 0.99
    assert _moments([(3.0, 4.0)]).interval() is None  # one conversation: no interval


def test_a_cluster_bootstrap_resample_holds_whole_groups() -> None:
    groups = ["a", "a", "b", "c", "c", "c", "d"]
    for resample in cluster_bootstrap_indices(groups, 50, seed=1):
        drawn = [groups[i] for i in resample]
        for name in set(drawn):  # each drawn group comes whole, as often as it was drawn
            assert drawn.count(name) % groups.count(name) == 0
        starts = [i for i in range(len(drawn)) if i == 0 or resample[i] != resample[i - 1] + 1]
        assert len(starts) <= 4  # four groups drawn, each a run of consecutive positions


def test_the_mean_scores_interval_is_wilsons_for_zero_one_scores_and_stays_on_the_scale() -> None:
    scores = [1.0] * 8 + [0.0] * 2
    got = mean_figures(scores)
    low, high = proportion_confint(8, 10, method="wilson")
    assert (got["ci95_low"], got["ci95_high"]) == pytest.approx((low, high))
    all_one = mean_figures([1.0] * 10)
    assert all_one["ci95_high"] == 1.0 and all_one["ci95_low"] == pytest.approx(0.722, abs=1e-3)


def test_calibrate_with_groups_widens_kappa_ac1_and_the_rates_to_the_cluster_bootstrap() -> None:
    """Thirty dialogues of four turns each, a dialogue's turns labelled alike: 120 pairs
    that say what 30 say. Resampling dialogues, the intervals are about twice as wide as
    resampling turns; the report says which it widened."""
    from calibration.pairs.analysis import AnalysisOptions, analyse

    rng = np.random.default_rng(3)
    human = np.repeat(rng.random(30) < 0.6, 4)
    judge = np.where(np.repeat(rng.random(30) < 0.2, 4), ~human, human)
    h = ["pass" if v else "fail" for v in human]
    j = ["pass" if v else "fail" for v in judge]
    ids = [str(i) for i in range(120)]
    groups = [f"d{i // 4}" for i in range(120)]
    options = AnalysisOptions(n_bootstrap=1000)
    plain = analyse(ids, h, j, options=options)
    grouped = analyse(ids, h, j, options=options, groups=groups)
    for key in ("kappa_ci95", "ac1_ci95"):
        assert np.ptp(grouped[key]) > 1.5 * np.ptp(plain[key])
    for key in ("tpr_ci95", "human_pass_rate_ci95"):
        assert np.ptp(grouped["binary"][key]) > 1.5 * np.ptp(plain["binary"][key])
    note = grouped["grouped_intervals"]
    assert note["groups"] == 30 and {"kappa", "ac1", "tpr"} <= set(note["widened"])
    assert "cluster bootstrap" in grouped["kappa_ci95_method"]
    assert "grouped_intervals" not in plain
