"""Issue 12 item 6: the intervals and tests the probes use come from scipy, in calibration.

Each is checked against the hand formula it replaced (to 1e-12) and against the scipy or
statsmodels call that does the same job; the documented edge cases (below two values,
no spread, nothing observed) are kept. A scan of the source keeps every Wilson, t and
normal interval in one place.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from calibration.estimates.probe_stats import (
    binomial_p,
    difference_fields,
    paired_change,
    rate_fields,
)
from calibration.inference.intervals import normal_interval, normal_quantile, wilson_interval
from calibration.inference.means import (
    mean_interval,
    welch_interval,
    welch_p_value,
    wilcoxon_p_value,
)
from tests.helpers import REPO

SAMPLES = [
    [0.2, 0.5, 0.9],
    [1.0, 0.0, 1.0, 1.0, 0.5, 0.25],
    list(np.random.default_rng(7).normal(0.3, 0.2, 40)),
]


def hand_t(values: list[float], confidence: float) -> tuple[float, float]:
    """The formula `judge/probes/_common.py` computed before: mean ± t·s/√n."""
    x = np.asarray(values, dtype=float)
    half = stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
    return (x.mean() - half, x.mean() + half)


def hand_welch(a: list[float], b: list[float], confidence: float) -> tuple[float, float]:
    """The formula `judge/probes/self_preference.py` computed before."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    va, vb = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    df = (va + vb) ** 2 / (va**2 / (len(x) - 1) + vb**2 / (len(y) - 1))
    half = stats.t.ppf(0.5 + confidence / 2, df) * math.sqrt(va + vb)
    return (x.mean() - y.mean() - half, x.mean() - y.mean() + half)


def hand_wilson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """Wilson (1927): (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    z, p = stats.norm.ppf(0.5 + confidence / 2), k / n
    centre, root = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return ((centre - root) / (1 + z * z / n), (centre + root) / (1 + z * z / n))


@pytest.mark.parametrize("values", SAMPLES)
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_mean_interval_is_the_t_interval(values, confidence):
    got = mean_interval(values, confidence=confidence)
    assert got == pytest.approx(hand_t(values, confidence), abs=1e-12)
    scipy_ci = stats.ttest_1samp(values, 0).confidence_interval(confidence)
    assert got == pytest.approx((scipy_ci.low, scipy_ci.high), abs=1e-12)


def test_mean_interval_edge_cases():
    assert all(math.isnan(v) for v in mean_interval([]))
    assert all(math.isnan(v) for v in mean_interval([0.4]))
    assert mean_interval([0.5, 0.5, 0.5]) == (0.5, 0.5)  # no spread: zero width, no warning
    assert all(math.isnan(v) for v in mean_interval([0.1, float("nan")]))


@pytest.mark.parametrize(("a", "b"), [(SAMPLES[0], SAMPLES[1]), (SAMPLES[2], SAMPLES[0])])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_welch_interval_and_test(a, b, confidence):
    got = welch_interval(a, b, confidence=confidence)
    assert got == pytest.approx(hand_welch(a, b, confidence), abs=1e-12)
    result = stats.ttest_ind(a, b, equal_var=False)
    ci = result.confidence_interval(confidence)
    assert got == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert welch_p_value(a, b) == pytest.approx(result.pvalue, abs=1e-12)


def test_welch_edge_cases():
    assert all(math.isnan(v) for v in welch_interval([1.0], [0.0, 1.0]))
    assert welch_interval([1.0, 1.0], [0.25, 0.25]) == (0.75, 0.75)  # standard error 0
    assert math.isnan(welch_p_value([0.5, 0.5], [0.5, 0.5]))  # nothing varies
    assert math.isnan(welch_p_value([0.5], [0.5, 0.7]))
    # one side constant, the other not: an interval and a test as usual
    one = welch_interval([1.0, 1.0, 1.0], [0.0, 0.5])
    assert one == pytest.approx(hand_welch([1.0, 1.0, 1.0], [0.0, 0.5], 0.95), abs=1e-12)


def test_wilcoxon_p_value_matches_scipy_and_is_nan_without_change():
    diffs = [0.25, 0.5, -0.25, 0.75, 0.0, 0.5]
    want = stats.wilcoxon(diffs, zero_method="wilcox").pvalue
    assert wilcoxon_p_value(diffs) == pytest.approx(want, abs=1e-12)
    assert math.isnan(wilcoxon_p_value([0.0, 1e-15, 0.0]))


@pytest.mark.parametrize(("k", "n"), [(0, 20), (1, 29), (15, 148), (81, 263), (20, 20)])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_wilson_interval_is_the_formula_and_statsmodels(k, n, confidence):
    got = wilson_interval(k, n, confidence=confidence)
    assert got == pytest.approx(hand_wilson(k, n, confidence), abs=1e-12)
    want = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    assert got == pytest.approx(want, abs=1e-12)
    assert (got[0] == 0.0) == (k == 0) and (got[1] == 1.0) == (k == n)  # exact ends


def test_normal_interval_is_estimate_plus_minus_z_se():
    assert normal_quantile(0.95) == pytest.approx(1.959963984540054, abs=1e-12)
    for estimate, se, confidence in [(0.3, 0.05, 0.95), (-1.5, 2.0, 0.9), (10.0, 1e-3, 0.99)]:
        z = stats.norm.ppf(0.5 + confidence / 2)
        got = normal_interval(estimate, se, confidence=confidence)
        assert got == pytest.approx((estimate - z * se, estimate + z * se), abs=1e-12)
    assert normal_interval(0.4, 0.0) == (0.4, 0.4)
    assert all(math.isnan(v) for v in normal_interval(0.4, float("nan")))


def test_probe_fields_are_null_when_nothing_was_observed():
    assert rate_fields("flip_rate", 0, 0) == {"flip_rate": None, "flip_rate_ci95": None}
    fields = rate_fields("flip_rate", 3, 10)
    assert fields["flip_rate"] == 0.3 and fields["flip_rate_ci95"] == list(wilson_interval(3, 10))
    assert binomial_p(3, 0) is None and binomial_p(9, 10) == pytest.approx(22 / 1024)
    gap = difference_fields("gap", [1.0], [])
    assert gap == {"gap": None, "gap_ci95": None, "gap_p_value": None}


def test_paired_change_counts_moves_and_keeps_the_t_interval():
    before, after = [0.5, 0.5, 1.0, 0.0, 0.25], [0.75, 0.5, 0.5, 0.5, 0.25]
    out = paired_change(before, after)
    diffs = np.subtract(after, before)
    assert (out["raised"], out["lowered"], out["unchanged"]) == (2, 1, 2)
    assert out["mean_score_change"] == pytest.approx(diffs.mean(), abs=1e-12)
    assert out["mean_score_change_ci95"] == pytest.approx(hand_t(list(diffs), 0.95), abs=1e-12)
    assert out["share_raised_ci95"] == list(wilson_interval(2, 5))
    assert out["wilcoxon_p_value"] == pytest.approx(stats.wilcoxon(diffs).pvalue, abs=1e-12)
    same = paired_change([0.5], [0.5])
    assert same["mean_score_change_ci95"] is None and same["wilcoxon_p_value"] is None


# Each statistic has one home: the scipy calls that make an interval or a test appear in
# calibration/inference/intervals.py and calibration/inference/means.py only.
HOMES = {"calibration/inference/intervals.py", "calibration/inference/means.py"}
CALLS = re.compile(
    r"binomtest\(|proportion_ci\(|\.ppf\(|norm\.interval\(|ttest_(1samp|ind|rel)\(|wilcoxon\("
)


def test_every_interval_is_computed_in_one_place():
    found = set()
    for package in ("judge", "calibration"):
        for path in Path(REPO, package).rglob("*.py"):
            code = "\n".join(
                line for line in path.read_text("utf-8").splitlines() if "``" not in line
            )
            if CALLS.search(code):
                found.add(path.relative_to(REPO).as_posix())
    assert found <= HOMES, found - HOMES
