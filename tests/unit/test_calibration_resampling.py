"""Bootstraps at any n (issue 19 item 10): memory that does not grow with cases times
resamples, the same intervals to the seed where the draw is unchanged, and the confusion
table's multinomial resampling agreeing with case resampling within Monte-Carlo error."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from calibration.agreement.metrics import kappa_from_confusion
from calibration.compare.runs import compare_paired
from calibration.inference.intervals import bootstrap_ci, bootstrap_indices_ci
from calibration.pairs.analysis import AnalysisOptions, analyse

MIB = 1 << 20


def _one_matrix_interval(n: int, statistic, n_resamples: int, seed: int) -> tuple[float, float]:
    """The method before issue 19: one (n_resamples, n) index matrix drawn at once."""
    draws = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    values = np.array([statistic(idx) for idx in draws], dtype=float)
    alpha = (1 - 0.95) / 2
    lo, hi = np.quantile(values[np.isfinite(values)], [alpha, 1 - alpha])
    return float(lo), float(hi)


def _peak_bytes(call) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("n", [7, 1000, (1 << 22) // 3 + 1])
def test_blocked_draw_resamples_the_one_matrix_indices_to_the_seed(n: int) -> None:
    resamples = 40 if n > 1000 else 500
    seen: list[np.ndarray] = []

    def first_and_last(idx: np.ndarray) -> float:
        seen.append(idx[[0, -1]].copy())
        return float(idx[0])

    expected = _one_matrix_interval(n, lambda idx: float(idx[0]), resamples, seed=3)
    assert bootstrap_indices_ci(n, first_and_last, n_resamples=resamples, seed=3) == expected
    one_matrix = np.random.default_rng(3).integers(0, n, size=(resamples, n))[:, [0, -1]]
    assert np.array_equal(np.array(seen), one_matrix)


def test_index_bootstrap_memory_does_not_grow_with_n_times_resamples() -> None:
    # 300 resamples x 200,000 cases is 480 MB of indices drawn at once; blocks hold 32 MiB.
    n = 200_000
    peak = _peak_bytes(lambda: bootstrap_indices_ci(n, lambda idx: float(idx[0]), n_resamples=300))
    assert peak < 80 * MIB


@pytest.mark.slow  # 100k pairs under tracemalloc: .ci/slow
def test_calibrate_statistics_on_100k_pairs_stay_in_constant_memory() -> None:
    rng = np.random.default_rng(0)
    n = 100_000
    human = rng.choice(["1", "2", "3"], size=n).tolist()
    judge = [h if rng.random() < 0.7 else "2" for h in human]
    options = AnalysisOptions(weights="quadratic", n_bootstrap=500)
    peak = _peak_bytes(lambda: analyse([str(i) for i in range(n)], human, judge, options=options))
    # Before: three (500, 100,000) index matrices, 400 MB each, plus their gathers.
    assert peak < 150 * MIB


def test_compare_on_100k_cases_stays_in_constant_memory() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=100_000)
    b = a + rng.normal(0.01, 1, size=100_000)
    peak = _peak_bytes(lambda: compare_paired(a, b, n_resamples=500))
    assert peak < 80 * MIB


def test_table_bootstrap_is_independent_of_n() -> None:
    from calibration.inference.intervals import bootstrap_table_ci

    # A billion cases: a case-resampling bootstrap could not hold one resample.
    table = np.array([[400_000_000, 100_000_000], [50_000_000, 450_000_000]])
    lo, hi = bootstrap_table_ci(table, kappa_from_confusion, n_resamples=200)
    kappa = kappa_from_confusion(table)
    assert lo < kappa < hi and hi - lo < 1e-3


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_table_bootstrap_agrees_with_case_bootstrap_within_monte_carlo_error(weights) -> None:
    from calibration.inference.intervals import bootstrap_table_ci

    rng = np.random.default_rng(5)
    n, k = 400, 3
    h = rng.integers(0, k, size=n)
    j = np.where(rng.random(n) < 0.6, h, rng.integers(0, k, size=n))

    def of_matrix(m: np.ndarray) -> float:
        return kappa_from_confusion(m, weights=weights)

    def of_cases(hs: np.ndarray, js: np.ndarray) -> float:
        return of_matrix(np.bincount(hs * k + js, minlength=k * k).reshape(k, k))

    matrix = np.bincount(h * k + j, minlength=k * k).reshape(k, k)
    by_cases = bootstrap_ci(h, j, of_cases, n_resamples=4000, seed=1)
    by_table = bootstrap_table_ci(matrix, of_matrix, n_resamples=4000, seed=1)
    # Both estimate the same quantiles; a 2.5% quantile of 4000 resamples has a Monte-Carlo
    # standard error near 0.1 x the bootstrap standard error (about 0.035 here).
    se = np.std([of_matrix(m.reshape(k, k)) for m in rng.multinomial(n, matrix.ravel() / n, 2000)])
    assert by_table == pytest.approx(by_cases, abs=0.25 * se)


def test_table_bootstrap_refuses_what_is_not_a_table_of_counts() -> None:
    from calibration.inference.intervals import bootstrap_table_ci

    with pytest.raises(ValueError, match="whole numbers"):
        bootstrap_table_ci(np.array([[1.5, 2]]), kappa_from_confusion)
    assert all(np.isnan(bootstrap_table_ci(np.zeros((2, 2)), kappa_from_confusion)))


@pytest.mark.slow  # 200k label pairs written and read under tracemalloc: minutes; .ci/slow
def test_reading_200k_label_pairs_holds_no_per_row_copies(tmp_path) -> None:
    # Calibrate on 1M pairs peaks under 1 GB (benchmarks/bootstrap_scale.md); here the
    # files' rows: one shared empty fields dict and one copy of each label text.
    from calibration.pairs.prepare import Settings, prepare

    rng = np.random.default_rng(0)
    n = 200_000
    for name in ("judge", "human"):
        labels = np.where(rng.random(n) < 0.5, "pass", "fail")
        text = "id,label\n" + "".join(f"c{i},{x}\n" for i, x in enumerate(labels))
        (tmp_path / f"{name}.csv").write_text(text, encoding="utf-8")
    peak = _peak_bytes(
        lambda: prepare(tmp_path / "judge.csv", tmp_path / "human.csv", Settings(n_bootstrap=0))
    )
    assert peak < 110 * MIB  # before: 155 MiB (an empty dict and a label string per row)
