"""Weighted kappa weighs the labels' values, not their positions (issue 19 item 5): on a
1-5 scale where nobody used 3 or 4, 2 -> 5 is three points apart, as scikit-learn says
when it is given the full scale."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from calibration.agreement.metrics import cohen_kappa, kappa_from_confusion
from calibration.pairs.analysis import AnalysisOptions, analyse

SCALE = [1, 2, 3, 4, 5]
# Nobody used 3 or 4: the levels seen are 1, 2 and 5.
HUMAN = [1, 1, 1, 2, 2, 2, 2, 5, 5, 5, 5, 5, 1, 2, 5, 5]
JUDGE = [1, 1, 2, 2, 2, 5, 1, 5, 5, 2, 5, 5, 5, 2, 1, 5]


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_with_unused_levels_equals_sklearn_on_the_full_scale(weights) -> None:
    expected = cohen_kappa_score(HUMAN, JUDGE, labels=SCALE, weights=weights)
    positional = cohen_kappa_score(HUMAN, JUDGE, labels=[1, 2, 5], weights=weights)
    assert abs(expected - positional) > 0.02  # the two readings do differ here
    assert cohen_kappa(HUMAN, JUDGE, weights=weights) == pytest.approx(expected, abs=1e-12)
    report = analyse(
        [str(i) for i in range(len(HUMAN))],
        HUMAN,
        JUDGE,
        options=AnalysisOptions(weights=weights, n_bootstrap=200),
    )
    assert report["labels"] == ["1", "2", "5"]
    assert report["weighted_kappa"] == pytest.approx(expected, abs=1e-12)
    lo, hi = report["weighted_kappa_ci95"]
    assert lo <= expected <= hi


@pytest.mark.parametrize("seed", range(4))
def test_values_and_positions_agree_on_an_evenly_spaced_scale(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 9, size=(4, 4))
    for weights in ("linear", "quadratic"):
        by_values = kappa_from_confusion(m, weights=weights, values=[0, 2.5, 5, 7.5])
        assert by_values == pytest.approx(kappa_from_confusion(m, weights=weights), abs=1e-12)


def test_text_labels_keep_their_stated_order() -> None:
    human = ["poor", "fair", "good", "good", "poor", "fair"]
    judge = ["fair", "fair", "good", "poor", "poor", "good"]
    order = ["poor", "fair", "good"]
    expected = cohen_kappa_score(human, judge, labels=order, weights="linear")
    assert cohen_kappa(human, judge, labels=order, weights="linear") == pytest.approx(expected)
