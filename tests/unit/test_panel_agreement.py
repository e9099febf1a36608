"""Agreement among a panel's jurors, checked against the libraries and formulas it cites:
Krippendorff's alpha against the krippendorff package, the kappa matrix against
scikit-learn, and Kish's n_eff against the formula computed here from numpy."""

from __future__ import annotations

import itertools
import random

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from calibration.agreement.panel import kish_n_eff, mean_pairwise_correlation, panel_agreement

NAMES = ["a", "b", "c"]
SCORE = {"compliant": 1.0, "minor_issue": 0.5, "violation": 0.0}


def ratings(seed: int = 3, n: int = 80) -> list[list[str | None]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        truth = rng.choice(list(SCORE))
        row: list[str | None] = [
            truth if rng.random() < 0.8 else rng.choice(list(SCORE)) for _ in NAMES
        ]
        if rng.random() < 0.1:
            row[2] = None
        rows.append(row)
    return rows


def test_alpha_equals_the_krippendorff_library() -> None:
    table = ratings()
    codes = {label: i for i, label in enumerate(SCORE)}
    data = np.array([[np.nan if v is None else codes[v] for v in row] for row in table]).T
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    scores = [[None if v is None else SCORE[v] for v in row] for row in table]
    result = panel_agreement(table, scores, NAMES, n_boot=200)
    assert result["krippendorff_alpha"] == pytest.approx(expected, abs=1e-6)
    lo, hi = result["krippendorff_alpha_ci95"]
    assert lo < result["krippendorff_alpha"] < hi


def test_the_kappa_matrix_equals_sklearn_on_the_cases_both_labelled() -> None:
    table = ratings()
    scores = [[None if v is None else SCORE[v] for v in row] for row in table]
    matrix = panel_agreement(table, scores, NAMES, n_boot=0)["pairwise_kappa"]
    for (i, x), (j, y) in itertools.combinations(enumerate(NAMES), 2):
        both = [(r[i], r[j]) for r in table if r[i] is not None and r[j] is not None]
        expected = cohen_kappa_score([p for p, _ in both], [q for _, q in both])
        assert matrix[x][y] == pytest.approx(expected, abs=1e-6) == matrix[y][x]
    assert all(matrix[n][n] == 1.0 for n in NAMES)


def test_n_eff_is_kish_formula_from_the_mean_pairwise_correlation() -> None:
    table = ratings()
    scores = [[None if v is None else SCORE[v] for v in row] for row in table]
    result = panel_agreement(table, scores, NAMES, n_boot=0)
    arr = np.array([[np.nan if v is None else v for v in row] for row in scores])
    rhos = []
    for i, j in itertools.combinations(range(3), 2):
        keep = ~np.isnan(arr[:, i]) & ~np.isnan(arr[:, j])
        rhos.append(np.corrcoef(arr[keep, i], arr[keep, j])[0, 1])
    rho = float(np.mean(rhos))
    assert result["mean_pairwise_correlation"] == pytest.approx(rho, abs=1e-6)
    assert result["n_eff"] == pytest.approx(3 / (1 + 2 * rho), abs=1e-6)
    complete = [r for r in table if None not in r]
    assert result["unanimous_share"] == pytest.approx(
        sum(len(set(r)) == 1 for r in complete) / len(complete), abs=1e-6
    )


def test_n_eff_reads_k_for_independent_jurors_and_one_for_copies() -> None:
    assert kish_n_eff(9, 0.0) == 9
    assert kish_n_eff(9, 1.0) == 1
    assert kish_n_eff(9, 0.5) == pytest.approx(9 / 5)
    copies = [[s, s, s] for s in (0.0, 1.0, 0.5, 1.0)]
    assert kish_n_eff(3, mean_pairwise_correlation(copies)) == pytest.approx(1.0)
    assert np.isnan(mean_pairwise_correlation([[1.0, 1.0], [1.0, 1.0]]))


def test_no_case_leaves_every_figure_undefined() -> None:
    result = panel_agreement([], [], NAMES, n_boot=10)
    assert result["cases"] == 0 and result["krippendorff_alpha"] is None
    assert result["n_eff"] is None and result["unanimous_share"] is None
    assert result["pairwise_kappa"][NAMES[0]][NAMES[0]] == 1.0


def test_a_unanimous_handful_never_gets_an_interval_of_width_zero() -> None:
    """Before: four unanimous cases gave alpha 1.0 with the interval [1.0, 1.0] (every
    resample agrees), and one case gave none; a gate on ci95_low passed on no evidence."""
    from calibration.agreement.multirater import category_counts
    from calibration.agreement.small_sample import EXACT_AGREEMENT, alpha_interval

    table = [["pass"] * 3, ["fail"] * 3, ["pass"] * 3, ["fail"] * 3]
    scores = [[1.0] * 3, [0.0] * 3, [1.0] * 3, [0.0] * 3]
    result = panel_agreement(table, scores, NAMES, n_boot=200)
    assert result["krippendorff_alpha"] == 1.0
    lo, hi = result["krippendorff_alpha_ci95"]
    assert hi == 1.0 and lo < 0.5  # 4 of 4 agreeing is weak evidence
    assert result["krippendorff_alpha_ci95_method"] == EXACT_AGREEMENT
    assert "width 0" in result["krippendorff_alpha_ci95_reason"]
    one = panel_agreement(table[:2], scores[:2], NAMES, n_boot=200)
    assert one["krippendorff_alpha_ci95"] is not None
    assert one["krippendorff_alpha_ci95"][0] < one["krippendorff_alpha_ci95"][1]
    # the exact interval holds the point on any table where it is asked for
    rows = ratings()
    exact = alpha_interval(None, category_counts(rows, None))
    point = panel_agreement(rows, [[0.0] * 3] * len(rows), NAMES, n_boot=0)["krippendorff_alpha"]
    assert exact.ci is not None and exact.ci[0] <= point <= exact.ci[1]
