"""Prediction-powered estimates (issue 15 item 3): PPI++ points equal ppi-python's, the
intervals differ only by the ddof of the variances, and they cover at the nominal rate."""

from __future__ import annotations

import math

import numpy as np
import ppi_py
import pytest

from calibration.estimates.ppi import classical_mean, power_tuned_lambda, ppi_mean, ppi_mean_sampled
from tests.calibration_sets import examples, faithbench, grade_examples_offline, llmbar

SPLITS = 40  # seeded labelled subsets per data set


@pytest.fixture(scope="module")
def data_sets(tmp_path_factory):
    records = grade_examples_offline(tmp_path_factory.mktemp("ppi") / "records.jsonl")
    # (set, labelled cases): the subset sizes, 150 of 750, 30 of 100, 18 of 37.
    return [(faithbench(), 150), (llmbar(), 30), (examples(records), 18)]


def _splits(labelled_set, n):
    rng = np.random.default_rng(15)
    for _ in range(SPLITS):
        order = rng.permutation(len(labelled_set.ids))
        lab, rest = order[:n], order[n:]
        human, judge = labelled_set.human.astype(float), labelled_set.judge.astype(float)
        yield human[lab], judge[lab], judge[rest]


def _ppi_py(y, f, fu, **kw):
    point = float(ppi_py.ppi_mean_pointestimate(y, f, fu, **kw)[0])
    lo, hi = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05, **kw)
    return point, (float(lo[0]), float(hi[0]))


def test_ppi_plus_plus_equals_ppi_python_on_the_three_data_sets(data_sets):
    checked = 0
    for labelled_set, n in data_sets:
        for y, f, fu in _splits(labelled_set, n):
            point, (lo, hi) = _ppi_py(y, f, fu)
            ours = ppi_mean(y, f, fu)
            assert ours.estimate == pytest.approx(point, abs=1e-9)
            # ddof 0 (numpy's default, which ppi-python uses): the same interval.
            same = ppi_mean(y, f, fu, ddof=0)
            assert same.ci == pytest.approx((lo, hi), abs=1e-9)
            # ddof 1: wider by a factor between sqrt(N/(N-1)) and sqrt(n/(n-1)).
            ratio = (ours.ci[1] - ours.ci[0]) / (hi - lo)
            big_n = len(fu)
            assert math.sqrt(big_n / (big_n - 1)) - 1e-12 <= ratio
            assert ratio <= math.sqrt(n / (n - 1)) + 1e-12
            checked += 1
    assert checked == 3 * SPLITS


def test_reweighted_estimate_equals_ppi_python_with_weights(data_sets):
    labelled_set, n = data_sets[0]
    rng = np.random.default_rng(7)
    human, judge = labelled_set.human.astype(float), labelled_set.judge.astype(float)
    for _ in range(10):
        # A stratified sample: people labelled 40% of the judge's fails, 10% of its passes.
        pi = np.where(judge == 0, 0.4, 0.1)
        chosen = rng.random(len(judge)) < pi
        y, f, d = human[chosen], judge[chosen], 1 / pi[chosen]
        point, ci = _ppi_py(y, f, judge, w=d)
        ours = ppi_mean_sampled(y, f, judge, d, ddof=0)
        assert ours.estimate == pytest.approx(point, abs=1e-9)
        assert ours.ci == pytest.approx(ci, abs=1e-9)
        # Only the ratios of the weights matter.
        assert ppi_mean_sampled(y, f, judge, 7 * d).estimate == pytest.approx(
            ppi_mean_sampled(y, f, judge, d).estimate, abs=1e-12
        )


def test_stratified_weights_give_horvitz_thompson_exactly():
    rng = np.random.default_rng(3)
    strata = np.repeat([0, 1], [800, 200])
    f = rng.random(1000)
    y = np.clip(f + rng.normal(0, 0.2, 1000) + 0.1 * strata, 0, 1)
    take = np.concatenate(
        [rng.choice(800, 40, replace=False), 800 + rng.choice(200, 50, replace=False)]
    )
    pi = np.where(strata[take] == 0, 40 / 800, 50 / 200)
    est = ppi_mean_sampled(y[take], f[take], f, 1 / pi)
    lam = est.lam
    horvitz_thompson = lam * f.mean() + np.sum((y[take] - lam * f[take]) / pi) / 1000
    assert est.estimate == pytest.approx(horvitz_thompson, abs=1e-12)


def test_lambda_zero_and_no_unlabelled_give_the_classical_mean():
    y = np.array([1.0, 0, 1, 1, 0, 1])
    assert power_tuned_lambda(y, np.ones(6), np.ones(20)) == 0.0  # a constant judge
    classical = classical_mean(y)
    for est in (ppi_mean(y, np.ones(6), np.ones(20)), ppi_mean(y, y, [])):
        assert est.estimate == pytest.approx(classical.estimate)
        assert est.ci == pytest.approx(classical.ci)
    assert ppi_mean(y, y, []).n_unlabelled == 0


def test_a_good_judge_narrows_the_interval():
    rng = np.random.default_rng(0)
    y = rng.binomial(1, 0.3, 1100).astype(float)
    f = np.where(rng.random(1100) < 0.9, y, 1 - y)
    ppi, classical = ppi_mean(y[:100], f[:100], f[100:]), classical_mean(y[:100])
    assert ppi.std_error < 0.8 * classical.std_error
    assert 0.5 < ppi.lam <= 1


def _coverage(draw, truth, draws=1000):
    covered = 0
    for seed in range(draws):
        lo, hi = draw(np.random.default_rng(seed)).ci
        covered += lo <= truth <= hi
    return covered / draws


def test_pass_rate_interval_covers_at_the_nominal_rate():
    # 30% of answers pass; the judge finds 85% of passes and 75% of fails.
    def draw(rng):
        y = rng.binomial(1, 0.3, 1100).astype(float)
        hit = rng.random(1100) < np.where(y == 1, 0.85, 0.75)
        f = np.where(hit, y, 1 - y)
        return ppi_mean(y[:100], f[:100], f[100:])

    coverage = _coverage(draw, 0.3)
    assert coverage >= 0.93, coverage


def test_mean_score_interval_covers_at_the_nominal_rate():
    # Human scores in [0, 1]; the judge's scores track them with a bias and noise.
    def draw(rng):
        y = rng.beta(2, 3, 1050)
        f = np.clip(0.8 * y + 0.15 + rng.normal(0, 0.1, 1050), 0, 1)
        return ppi_mean(y[:50], f[:50], f[50:])

    coverage = _coverage(draw, 2 / 5)
    assert coverage >= 0.93, coverage


def test_reweighted_interval_covers_on_a_stratified_sample():
    # Two strata that pass at different rates; the rare, risky one is labelled 5x as often.
    def draw(rng):
        risky = rng.random(2000) < 0.2
        y = rng.binomial(1, np.where(risky, 0.6, 0.2)).astype(float)
        f = np.where(rng.random(2000) < 0.8, y, 1 - y)
        pi = np.where(risky, 0.25, 0.05)
        chosen = rng.random(2000) < pi
        return ppi_mean_sampled(y[chosen], f[chosen], f, 1 / pi[chosen])

    coverage = _coverage(draw, 0.2 * 0.6 + 0.8 * 0.2)
    assert coverage >= 0.93, coverage


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1.0, 0], [1.0], [0.0]), "equal length"),
        (([], [], [0.0]), "no labelled cases"),
    ],
)
def test_bad_arrays_are_refused(args, message):
    with pytest.raises(ValueError, match=message):
        ppi_mean(*args)


def test_bad_weights_are_refused():
    with pytest.raises(ValueError, match="positive number"):
        ppi_mean_sampled([1.0, 0], [1.0, 0], [1.0, 0, 1], [1.0, 0.0])
    with pytest.raises(ValueError, match="labels are a subset"):
        ppi_mean_sampled([1.0, 0], [1.0, 0], [1.0], [1.0, 1.0])
