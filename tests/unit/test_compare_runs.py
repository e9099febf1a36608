"""The statistics of `judge compare` (calibration/compare/runs.py): Holm's correction and
the sign test against statsmodels, a hand-worked example, and seeded simulations where a
planted difference is flagged and a planted null one is not."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.descriptivestats import sign_test
from statsmodels.stats.multitest import multipletests

from calibration.compare.runs import compare_metrics, compare_paired, holm_adjust, sign_test_p


@pytest.mark.parametrize("seed", range(8))
def test_holm_equals_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.2, size=int(rng.integers(1, 15)))
    p[: len(p) // 3] = p[0]  # ties
    expected = multipletests(p, alpha=0.05, method="holm")[1]
    assert holm_adjust(p.tolist()) == pytest.approx(expected.tolist(), abs=1e-12)


def test_holm_leaves_undefined_tests_out_of_the_family() -> None:
    adjusted = holm_adjust([0.01, float("nan"), 0.04])
    expected = multipletests([0.01, 0.04], method="holm")[1]
    assert adjusted[0] == pytest.approx(expected[0]) and adjusted[2] == pytest.approx(expected[1])
    assert math.isnan(adjusted[1])
    assert holm_adjust([]) == []


@pytest.mark.parametrize(
    "diffs", [[1, 1, 1, 1, 1, -1, 0, 0], [0.2] * 9 + [-0.1] * 2, [-1, 1, -1, 1], [1] * 12]
)
def test_sign_test_equals_statsmodels(diffs: list[float]) -> None:
    d = np.array(diffs, dtype=float)
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    assert sign_test_p(wins, losses) == pytest.approx(sign_test(d, mu0=0)[1], abs=1e-12)


def test_sign_test_with_only_ties_is_one() -> None:
    assert sign_test_p(0, 0) == 1.0
    with pytest.raises(ValueError):
        sign_test_p(-1, 2)


def test_a_hand_worked_paired_comparison() -> None:
    a = [0.0, 0.5, 1.0, 1.0, 0.25]
    b = [1.0, 0.5, 1.0, 0.0, 0.75]
    out = compare_paired(a, b)
    assert (out["n"], out["wins"], out["ties"], out["losses"]) == (5, 2, 2, 1)
    assert out["a"] == pytest.approx(0.55) and out["b"] == pytest.approx(0.65)
    assert out["diff"] == pytest.approx(0.1)
    assert out["p_value"] == pytest.approx(1.0)  # 2 wins, 1 loss: P = 1 under the null
    low, high = out["ci95"]
    assert low <= out["diff"] <= high


def test_no_case_gives_undefined_figures() -> None:
    out = compare_paired([], [])
    assert out["n"] == 0 and math.isnan(out["diff"]) and math.isnan(out["p_value"])
    result = compare_metrics({"x": ([], []), "y": ([0.0] * 10, [1.0] * 10)})
    assert result["x"]["significant"] is False and math.isnan(result["x"]["p_adjusted"])
    assert result["y"]["p_adjusted"] == pytest.approx(2 * 0.5**10)  # m = 1: the one defined


def _systems(rng: np.random.Generator, n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """Scores on 0..1 of two systems on the same n cases: a shared difficulty per case, each
    system's own noise, and B shifted by `shift`."""
    difficulty = rng.uniform(0.2, 0.8, n)
    a = np.clip(difficulty + rng.normal(0, 0.15, n), 0, 1)
    b = np.clip(difficulty + shift + rng.normal(0, 0.15, n), 0, 1)
    return a, b


def test_simulation_flags_a_planted_difference_and_not_the_null_ones() -> None:
    """Seeded: 30 experiments of 200 cases and six metrics, one with B better by 0.1 and
    five with no difference. The planted one is flagged in every experiment, in the right
    direction with an interval that excludes 0; Holm keeps the experiments where any null
    metric is flagged to its family-wise 5%. (Over 100 such experiments: power 1.0, a null
    flagged in 4.)"""
    experiments, flagged_planted, flagged_null = 30, 0, 0
    for seed in range(experiments):
        rng = np.random.default_rng(1000 + seed)
        metrics = {"planted": _systems(rng, 200, 0.1)}
        metrics |= {f"null{i}": _systems(rng, 200, 0.0) for i in range(5)}
        result = compare_metrics(metrics, n_resamples=400, seed=seed)
        planted = result["planted"]
        if planted["significant"]:
            flagged_planted += 1
            assert planted["diff"] > 0 and planted["ci95"][0] > 0
        flagged_null += any(result[f"null{i}"]["significant"] for i in range(5))
    assert flagged_planted == experiments
    assert flagged_null <= 0.05 * experiments


def test_without_correction_the_null_metrics_would_be_flagged_more_often() -> None:
    """Why Holm: across many null metrics, raw p < 0.05 flags some; adjusted ones do not."""
    rng = np.random.default_rng(7)
    metrics = {f"null{i}": _systems(rng, 80, 0.0) for i in range(40)}
    result = compare_metrics(metrics, n_resamples=100)
    raw = sum(entry["p_value"] < 0.05 for entry in result.values())
    assert raw >= 1
    assert not any(entry["significant"] for entry in result.values())
