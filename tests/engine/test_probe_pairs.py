"""The position probe's statistics over pairs, not verdicts (issue 19 item 6): a pair's two
orders are one observation. The sign test over the inconsistent pairs, checked against
statsmodels; the pair (cluster) bootstrap on LLMBar's recorded GPT-4 verdicts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.descriptivestats import sign_test

from calibration.estimates.probe_stats import pair_rate_interval
from calibration.inference.intervals import wilson_interval
from judge.probes.position import (
    PairVerdicts,
    position_result,
    position_stats,
    read_recorded_verdicts,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "calibration"


def test_a_fully_inconsistent_judge_is_tested_with_the_sign_test_over_its_pairs() -> None:
    # 100 pairs, every one inconsistent: the first-shown answer won both orders 58 times,
    # the second-shown 42 times. Counting the 200 verdicts as independent says p = 0.028.
    pairs = [PairVerdicts(f"f{i}", "A", "A") for i in range(58)]
    pairs += [PairVerdicts(f"s{i}", "B", "B") for i in range(42)]
    report = position_stats(pairs)
    assert report["inconsistent_pairs"] == 100 and report["first_position_win_rate"] == 0.58
    leaning = np.array([1] * 58 + [-1] * 42)
    expected = sign_test(leaning, mu0=0)[1]
    assert report["first_position_p_value"] == pytest.approx(expected, abs=1e-12)
    assert report["first_position_p_value"] == pytest.approx(0.133, abs=5e-4)
    assert (report["first_position_pairs_up"], report["first_position_pairs_down"]) == (58, 42)


def test_consistent_pairs_and_ties_lean_as_their_verdicts_say() -> None:
    pairs = [
        PairVerdicts("same", "A", "B"),  # consistent: one win each slot, no lean
        PairVerdicts("tietie", "tie", "tie"),
        PairVerdicts("first", "A", "A"),  # +2
        PairVerdicts("halftie", "tie", "A"),  # slot A won its one decisive verdict: +1
        PairVerdicts("halftie_b", "B", "tie"),  # -1
    ]
    report = position_stats(pairs)
    assert report["first_position_pairs_up"] == 2 and report["first_position_pairs_down"] == 1
    assert report["first_position_p_value"] == pytest.approx(sign_test([1, 1, -1])[1])


def test_the_win_rate_interval_resamples_pairs_on_llmbar_gpt4() -> None:
    pairs = read_recorded_verdicts(DATA / "llmbar-natural-gpt4" / "verdicts.jsonl")
    report = position_stats(pairs)
    lo, hi = report["first_position_win_rate_ci95"]
    w_lo, w_hi = wilson_interval(report["first_position_wins"], report["decisive_verdicts"])
    # 97 of the 100 pairs are consistent: each gives slot A exactly one of its two verdicts,
    # so the rate varies far less than 200 independent verdicts would.
    assert lo < report["first_position_win_rate"] < hi
    assert (w_hi - w_lo) > 3 * (hi - lo)
    # A hand-rolled cluster bootstrap (whole pairs drawn with replacement) agrees.
    wins = np.array([(p.ab == "A") + (p.ba == "A") for p in pairs])
    trials = np.array([(p.ab != "tie") + (p.ba != "tie") for p in pairs])
    idx = np.random.default_rng(1).integers(0, len(pairs), size=(4000, len(pairs)))
    rates = wins[idx].sum(axis=1) / trials[idx].sum(axis=1)
    assert (lo, hi) == pytest.approx(tuple(np.quantile(rates, [0.025, 0.975])), abs=0.011)


def test_the_gate_check_uses_the_pair_interval_at_its_confidence() -> None:
    pairs = read_recorded_verdicts(DATA / "llmbar-natural-chatgpt" / "verdicts.jsonl")
    result = position_result(pairs, {})
    check = next(c for c in result.checks if c.name == "first_position_win_rate")
    wins = [(p.ab == "A") + (p.ba == "A") for p in pairs]
    trials = [(p.ab != "tie") + (p.ba != "tie") for p in pairs]
    for confidence in (0.9, 0.99):
        evaluated = check.evaluate(tolerance=0.0, confidence=confidence)
        expected = pair_rate_interval(wins, trials, confidence=confidence)
        assert evaluated["interval"] == list(expected)
    assert check.evaluate(tolerance=0.05, confidence=0.95)["status"] == "biased"


def test_a_consistent_judges_win_rate_interval_is_not_a_point() -> None:
    pairs = [PairVerdicts(f"p{i}", "A", "B") for i in range(20)]
    report = position_stats(pairs)
    lo, hi = report["first_position_win_rate_ci95"]
    assert report["first_position_win_rate"] == 0.5 and lo < 0.5 < hi
    assert report["first_position_p_value"] == 1.0
