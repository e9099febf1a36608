"""Agreement metrics against the reference's worked example, scikit-learn, scipy, the
published tables scikit-learn tests against, and other published figures."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm

from calibration import (
    balanced_accuracy,
    binomial_test_p,
    bootstrap_ci,
    cohen_kappa,
    confusion,
    correlations,
    expected_agreement,
    fleiss_kappa,
    fleiss_kappa_from_counts,
    grouped_correlations,
    kappa_from_confusion,
    krippendorff_alpha,
    mean_absolute_error,
    observed_agreement,
    per_class_scores,
    rogan_gladen,
    rogan_gladen_interval,
    wilson_interval,
)
from calibration.agreement.metrics import adjacent_agreement

HUMAN_EX6 = [1, 1, 0, 1, 0, 0, 1, 1, 0, 1]
JUDGE_EX6 = [1, 1, 0, 1, 0, 1, 1, 0, 0, 1]


def test_reference_example_6():
    assert observed_agreement(HUMAN_EX6, JUDGE_EX6) == pytest.approx(0.8)
    assert expected_agreement(HUMAN_EX6, JUDGE_EX6) == pytest.approx(0.52)
    assert cohen_kappa(HUMAN_EX6, JUDGE_EX6) == pytest.approx(0.5833, abs=5e-5)
    assert cohen_kappa(HUMAN_EX6, JUDGE_EX6) == pytest.approx((0.8 - 0.52) / (1 - 0.52))


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", range(8))
def test_kappa_equals_sklearn_on_random_labels(weights, seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 7))
    n = int(rng.integers(5, 400))
    human = rng.integers(0, k, n)
    # A judge that copies the human some of the time, so kappa spans a useful range.
    judge = np.where(rng.random(n) < rng.random(), human, rng.integers(0, k, n))
    ours = cohen_kappa(human, judge, weights=weights)
    theirs = skm.cohen_kappa_score(human, judge, weights=weights)
    assert abs(ours - theirs) < 1e-12


def test_kappa_equals_sklearn_with_string_labels_and_explicit_order():
    rng = np.random.default_rng(42)
    order = ["low", "mid", "high"]
    human = rng.choice(order, 200)
    judge = np.where(rng.random(200) < 0.6, human, rng.choice(order, 200))
    for weights in (None, "linear", "quadratic"):
        ours = cohen_kappa(human, judge, labels=order, weights=weights)
        theirs = skm.cohen_kappa_score(human, judge, labels=order, weights=weights)
        assert abs(ours - theirs) < 1e-12


# Artstein and Poesio (2008), as rebuilt in scikit-learn's test_cohen_kappa
# (sklearn/metrics/tests/test_classification.py).
def test_artstein_poesio_table_1():
    human = np.array([0] * 40 + [1] * 60)
    judge = np.array([0] * 20 + [1] * 20 + [0] * 10 + [1] * 50)
    assert confusion(human, judge).tolist() == [[20, 20], [10, 50]]
    assert cohen_kappa(human, judge) == pytest.approx(0.348, abs=5e-4)
    assert cohen_kappa(judge, human) == cohen_kappa(human, judge)
    spurious_h, spurious_j = np.append(human, [2] * 4), np.append(judge, [2] * 4)
    assert cohen_kappa(spurious_h, spurious_j, labels=[0, 1]) == cohen_kappa(human, judge)
    assert cohen_kappa(human, human) == pytest.approx(1.0)


def test_artstein_poesio_table_4_multiclass():
    human = np.array([0] * 46 + [1] * 44 + [2] * 10)
    judge = np.array([0] * 52 + [1] * 32 + [2] * 16)
    assert cohen_kappa(human, judge) == pytest.approx(0.8013, abs=5e-5)


def test_artstein_poesio_weighted():
    human = np.array([0] * 46 + [1] * 44 + [2] * 10)
    judge = np.array([0] * 50 + [1] * 40 + [2] * 10)
    assert cohen_kappa(human, judge) == pytest.approx(0.9315, abs=5e-5)
    assert cohen_kappa(human, judge, weights="linear") == pytest.approx(0.9412, abs=5e-5)
    assert cohen_kappa(human, judge, weights="quadratic") == pytest.approx(0.9541, abs=5e-5)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_undefined_when_labels_do_not_vary_is_nan_not_zero(weights):
    assert math.isnan(cohen_kappa(["pass"] * 10, ["pass"] * 10, weights=weights))
    assert math.isnan(kappa_from_confusion(np.zeros((2, 2))))


def test_kappa_defined_when_only_one_side_varies():
    # The human says pass throughout; a judge that varies agrees no better than chance.
    assert cohen_kappa(["p"] * 6, ["p", "p", "p", "f", "f", "p"]) == pytest.approx(0.0)


def test_confusion_keeps_classes_absent_on_one_side_in_stated_order():
    human = ["a", "b", "b", "c"]
    judge = ["a", "b", "a", "a"]
    order = ["c", "b", "a", "d"]
    ours = confusion(human, judge, labels=order)
    assert ours.tolist() == skm.confusion_matrix(human, judge, labels=order).tolist()
    assert ours.tolist() == [[0, 0, 1, 0], [0, 1, 1, 0], [0, 0, 1, 0], [0, 0, 0, 0]]


def test_per_class_scores_and_balanced_accuracy_match_sklearn():
    rng = np.random.default_rng(3)
    human = rng.integers(0, 4, 300)
    copy = (rng.random(300) < 0.5) & (human != 3)
    judge = np.where(copy, human, rng.integers(0, 3, 300))  # never says 3
    scores = per_class_scores(human, judge, labels=[0, 1, 2, 3])
    p, r, f, s = skm.precision_recall_fscore_support(
        human, judge, labels=[0, 1, 2, 3], zero_division=np.nan
    )
    for i in range(4):
        got = scores[i]
        np.testing.assert_allclose(
            [got["precision"], got["recall"], got["f1"]], [p[i], r[i], f[i]], equal_nan=True
        )
        assert got["support"] == s[i]
    assert math.isnan(scores[3]["precision"])  # the judge never said 3
    assert balanced_accuracy(human, judge) == pytest.approx(
        skm.balanced_accuracy_score(human, judge), abs=1e-12
    )


def test_balanced_accuracy_of_a_majority_judge_is_one_over_k():
    assert balanced_accuracy([0] * 90 + [1] * 10, [0] * 100) == pytest.approx(0.5)


def test_mae_and_adjacent_agreement():
    human = [1, 2, 3, 4, 5]
    judge = [1, 3, 5, 4, 1]
    assert mean_absolute_error(human, judge) == pytest.approx(skm.mean_absolute_error(human, judge))
    assert adjacent_agreement(human, judge) == pytest.approx(3 / 5)


def test_correlations_match_scipy_and_are_nan_for_constant_input():
    rng = np.random.default_rng(5)
    x = rng.normal(size=80)
    y = x + rng.normal(size=80)
    c = correlations(x, y)
    assert c["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert c["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert c["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert all(math.isnan(v) for v in correlations([1, 1, 1], [1, 2, 3]).values())


def test_grouped_correlations_skip_and_count_constant_groups():
    human = [1, 2, 3, 1, 2, 3, 2, 2]
    judge = [1, 2, 3, 3, 2, 1, 1, 3]
    groups = ["g1"] * 3 + ["g2"] * 3 + ["g3"] * 2  # g3: human constant
    result = grouped_correlations(human, judge, groups=groups)
    assert result["groups_used"] == 2
    assert result["groups_skipped"] == 1
    assert result["pearson"] == pytest.approx(0.0)  # (1 + -1) / 2
    assert result["kendall"] == pytest.approx(0.0)


def test_fleiss_kappa_reproduces_fleiss_1971_worked_table():
    # The 10 subjects x 5 categories, 14 raters table of the standard worked example
    # (Fleiss 1971 style, as tabulated on Wikipedia's "Fleiss' kappa" page): kappa 0.210.
    counts = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    assert fleiss_kappa_from_counts(counts) == pytest.approx(0.210, abs=5e-4)


def test_fleiss_kappa_for_two_raters_is_scotts_pi():
    a = np.array([0, 0, 1, 1, 1, 0, 1, 1])
    b = np.array([0, 1, 1, 1, 0, 0, 1, 1])
    pooled = np.concatenate([a, b]).mean()
    p_e = pooled**2 + (1 - pooled) ** 2
    scott = ((a == b).mean() - p_e) / (1 - p_e)
    assert fleiss_kappa(np.column_stack([a, b])) == pytest.approx(scott)
    with pytest.raises(ValueError):
        fleiss_kappa(np.array([[0, 1], [1, None]], dtype=object))


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_matches_the_krippendorff_package(level):
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(11)
    truth = rng.integers(1, 6, 60)
    ratings = np.array(
        [np.clip(truth + rng.integers(-1, 2, 60), 1, 5) for _ in range(4)], dtype=float
    ).T
    ratings[rng.random(ratings.shape) < 0.15] = np.nan
    table = np.array([[None if np.isnan(v) else int(v) for v in row] for row in ratings])
    ours = krippendorff_alpha(table, level=level)
    theirs = krippendorff.alpha(reliability_data=ratings.T, level_of_measurement=level)
    assert ours == pytest.approx(theirs, abs=1e-10)


def test_wilson_interval_reproduces_newcombe_1998():
    # Newcombe (1998), Stat. Med. 17, Table I, method 3 (score interval without correction).
    assert wilson_interval(81, 263) == pytest.approx((0.2553, 0.3662), abs=5e-5)
    assert wilson_interval(15, 148) == pytest.approx((0.0624, 0.1605), abs=5e-5)
    assert wilson_interval(0, 20) == pytest.approx((0.0, 0.1611), abs=5e-5)
    assert wilson_interval(1, 29) == pytest.approx((0.0061, 0.1718), abs=5e-5)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_binomial_test_p_is_two_sided_exact():
    assert binomial_test_p(9, 10) == pytest.approx(22 / 1024)
    assert binomial_test_p(5, 10) == pytest.approx(1.0)
    assert math.isnan(binomial_test_p(0, 0))


def test_bootstrap_ci_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(0)
    human = rng.integers(0, 2, 200)
    judge = np.where(rng.random(200) < 0.8, human, 1 - human)
    first = bootstrap_ci(human, judge, cohen_kappa, n_resamples=300, seed=7)
    again = bootstrap_ci(human, judge, cohen_kappa, n_resamples=300, seed=7)
    other = bootstrap_ci(human, judge, cohen_kappa, n_resamples=300, seed=8)
    assert first == again
    assert first != other
    assert first[0] < cohen_kappa(human, judge) < first[1]
    assert 0.1 < first[1] - first[0] < 0.4


def test_bootstrap_ci_is_nan_when_the_statistic_is_mostly_undefined():
    lo, hi = bootstrap_ci(["a"] * 20, ["a"] * 20, cohen_kappa, n_resamples=50)
    assert math.isnan(lo) and math.isnan(hi)


def test_rogan_gladen_corrects_an_over_generous_judge():
    # True pass rate 0.3; a judge with Se 0.9 and Sp 0.7 passes 0.9*0.3 + 0.3*0.7 = 0.48.
    assert rogan_gladen(0.48, 0.9, 0.7) == pytest.approx(0.3)
    assert math.isnan(rogan_gladen(0.5, 0.5, 0.5))  # a coin: no information
    assert rogan_gladen(0.99, 0.9, 0.9) == 1.0  # clipped


def test_rogan_gladen_interval_carries_the_calibration_uncertainty():
    # 1000 judged cases, 100 of them labelled; then 100000 judged, 10000 labelled. The
    # labelled cases are among the judged ones (issue 15: not two separate samples).
    small = rogan_gladen_interval(480, 1000, tp=27, fn=3, tn=49, fp=21)
    large = rogan_gladen_interval(48000, 100000, tp=2700, fn=300, tn=4900, fp=2100)
    naive = wilson_interval(480, 1000)
    assert small[0] < 0.3 < small[1]
    assert large[0] < 0.3 < large[1]
    assert small[1] - small[0] > naive[1] - naive[0] > large[1] - large[0]
