"""``--explain`` over many covariates (issue 19 item 7): significance after Holm's
correction over the model's Wald tests, checked against statsmodels; with disagreement
unrelated to anything it seldom names a cause; a slice's reference cases are named."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from calibration.pairs.explain import errors_by_covariate
from calibration.report._markdown import _explained


def _permuted(seed: int, n: int = 300):
    """Answer length, contexts and nine overlapping slices: eleven covariates; the 90
    disagreements are placed at random, associated with none of them."""
    rng = np.random.default_rng(seed)
    words, contexts = rng.integers(20, 400, n), rng.integers(1, 5, n)
    member = rng.random((n, 9)) < 0.3
    cases = {
        f"c{i}": {
            "answer": " ".join(["w"] * int(words[i])),
            "contexts": ["x"] * int(contexts[i]),
            "slices": [f"s{k}" for k in range(9) if member[i, k]],
        }
        for i in range(n)
    }
    disagree = rng.permutation(np.arange(n) < 90)
    return list(cases), ["pass"] * n, ["fail" if d else "pass" for d in disagree], cases


@pytest.mark.parametrize("seed", range(3))
def test_significance_is_holm_over_the_models_tests(seed: int) -> None:
    section = errors_by_covariate(*_permuted(seed))
    rows = section["covariates"]
    assert len(rows) == 11 and section["correction"] == "holm"
    reject, adjusted, _, _ = multipletests([r["p_value"] for r in rows], 0.05, method="holm")
    assert [r["p_adjusted"] for r in rows] == pytest.approx(list(adjusted), abs=1e-12)
    assert [r["significant"] for r in rows] == list(reject)


def test_permuted_disagreement_seldom_names_a_cause() -> None:
    raw = named = 0
    for seed in range(100):
        rows = errors_by_covariate(*_permuted(seed))["covariates"]
        raw += any(r["p_value"] < 0.05 for r in rows)
        named += any(r["significant"] for r in rows)
    # Eleven uncorrected tests at 5% name something in about 40 of 100 null runs; Holm
    # keeps the family-wise rate at 5% (binomial 95% range for 100 runs: up to 10).
    assert raw >= 20
    assert named <= 10


def test_slice_rows_and_the_report_name_the_reference_cases() -> None:
    ids, human, judge, cases = _permuted(0)
    section = errors_by_covariate(ids, human, judge, cases)
    names = ", ".join(f"'s{k}'" for k in range(9))
    reference = f"the cases in none of the slices {names}"
    assert section["reference"] == reference
    slices = [r for r in section["covariates"] if r["name"].startswith("slice:")]
    assert slices and all(r["reference"] == reference for r in slices)
    assert all(r["reference"] is None for r in section["covariates"] if r not in slices)
    text = "\n".join(_explained({"errors_by_covariate": section}))
    assert "p (Holm)" in text and f"A slice's odds ratio is against {reference}." in text
