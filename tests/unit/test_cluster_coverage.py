"""Coverage by simulation, in settings apart from those the intervals were chosen on (a
reduced `benchmarks/cluster_intervals.py` and `benchmarks/n_eff_coverage.py`): the mean
score and the turn pass rate at 10 conversations, kappa with `--group-field` at 30
dialogues whose agreement clusters, the jury's n_eff at 10-30 cases. Minutes: slow."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.cluster_intervals import kappa_row, setting_row
from benchmarks.n_eff_coverage import cell, hard_cases
from calibration.agreement.effective_votes import kish_n_eff, mean_pairwise_correlation

pytestmark = pytest.mark.slow


def test_the_mean_score_and_the_turn_pass_rate_cover_at_ten_conversations() -> None:
    row = setting_row(np.random.default_rng(531), 400, 10, 3.0, 0.5)
    # 0.93 less two binomial standard errors at 400 samples (0.026)
    assert row["bounded"] >= 0.93 - 0.026
    assert row["clustered"] >= 0.93 - 0.026


def test_kappa_with_groups_covers_at_thirty_dialogues() -> None:
    row = kappa_row(np.random.default_rng(532), 100, 30, 1.5, 8.0)
    assert row["groups"] >= 0.93 - 2 * np.sqrt(0.93 * 0.07 / 100)


@pytest.mark.parametrize(("k", "n"), [(3, 10), (3, 30), (5, 10), (5, 30)])
def test_n_eff_covers_at_10_to_30_cases_when_errors_share_hard_cases(k: int, n: int) -> None:
    rng = np.random.default_rng([533, k, n])
    model = hard_cases(0.25, 0.5, 0.06)
    target = kish_n_eff(k, mean_pairwise_correlation(model(rng, 200_000, k)))
    coverage, _, _ = cell(rng, model, k, n, 150, target)
    assert coverage >= 0.93 - 2 * np.sqrt(0.93 * 0.07 / 150)
