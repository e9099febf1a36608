"""Why the judge errs (issue 15 item 7): a logistic regression of disagreement on case
features with robust errors, equal to statsmodels; separation gives a note, not a crash;
``judge calibrate --cases CASES --explain`` adds the section and a one-line summary."""

from __future__ import annotations

import json

import numpy as np
import pytest
import statsmodels.api as sm

from calibration.inference.logistic import fit_logit, independent_columns
from calibration.pairs.covariates import build_design, read_cases
from calibration.pairs.explain import errors_by_covariate
from tests.calibration_sets import EXAMPLES, grade_examples_offline
from tests.unit.test_calibration_inputs import exit_code


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(n), rng.normal(size=n), rng.random(n) < 0.3, rng.poisson(3, n)])
    eta = -1 + 0.8 * x[:, 1] + 0.5 * x[:, 2] - 0.2 * x[:, 3]
    return x, (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_coefficients_and_robust_errors_equal_statsmodels(seed):
    x, y = _data(seed)
    ours = fit_logit(x, y, cov_type="HC0")
    theirs = sm.Logit(y, x).fit(disp=0, cov_type="HC0")
    assert ours.coef == pytest.approx(theirs.params, abs=1e-6)
    assert ours.se == pytest.approx(theirs.bse, abs=1e-6)
    assert ours.p_values() == pytest.approx(theirs.pvalues, abs=1e-6)
    low, high = ours.odds_ratio_ci()
    assert np.log(low) == pytest.approx(theirs.conf_int()[:, 0], abs=1e-6)
    assert np.log(high) == pytest.approx(theirs.conf_int()[:, 1], abs=1e-6)
    # HC1 = HC0 * n/(n-k). statsmodels' Logit returns HC0 under every HC name, so HC1 is
    # checked against its HC0 scaled by hand.
    hc1 = fit_logit(x, y, cov_type="HC1")
    n, k = x.shape
    assert hc1.se == pytest.approx(theirs.bse * np.sqrt(n / (n - k)), abs=1e-6)


def test_separation_is_flagged_not_estimated():
    x = np.column_stack([np.ones(20), np.arange(20)])
    y = (np.arange(20) >= 10).astype(float)  # x > 9.5 predicts y perfectly
    fit = fit_logit(x, y)
    assert fit.separated and np.isnan(fit.se).all()


def _cases(n, seed, length_effect=0.0, slice_effect=0.0):
    """Cases with answer length, contexts and two slices, and the judge's disagreements."""
    rng = np.random.default_rng(seed)
    words = rng.integers(20, 400, n)
    risky = rng.random(n) < 0.3
    contexts = rng.integers(1, 5, n)
    eta = -2 + length_effect * words / 100 + slice_effect * risky
    disagree = rng.random(n) < 1 / (1 + np.exp(-eta))
    cases = {
        f"c{i}": {
            "answer": " ".join(["word"] * int(words[i])),
            "contexts": ["ctx"] * int(contexts[i]),
            "slices": ["risky" if risky[i] else "routine"],
        }
        for i in range(n)
    }
    ids = list(cases)
    human = ["pass"] * n
    judge = ["fail" if d else "pass" for d in disagree]
    return ids, human, judge, cases


def test_a_planted_length_bias_is_named():
    ids, human, judge, cases = _cases(400, 5, length_effect=0.6)
    section = errors_by_covariate(ids, human, judge, cases)
    length = next(r for r in section["covariates"] if r["name"] == "answer_words")
    assert length["unit"] == "100 words" and length["significant"]
    assert 1.3 < length["odds_ratio"] < 2.8
    assert section["summary"].startswith("disagreement rises with answer length: OR ")
    assert "per 100 words [" in section["summary"]
    # The same rows through statsmodels give the same odds ratios and intervals.
    design, y = build_design(ids, [h != j for h, j in zip(human, judge, strict=True)], cases)
    x = design.x[:, independent_columns(design.x)]  # 'routine' = 1 - 'risky': left out
    theirs = sm.Logit(y, x).fit(disp=0, cov_type="HC0")
    n, k = x.shape
    ours = [r["se"] for r in section["covariates"]]
    assert ours == pytest.approx(list(theirs.bse[1:] * np.sqrt(n / (n - k))), abs=1e-6)


def test_a_planted_slice_is_named():
    ids, human, judge, cases = _cases(400, 6, slice_effect=1.5)
    section = errors_by_covariate(ids, human, judge, cases)
    assert section["summary"].startswith(
        "disagreement is higher in slice 'risky' than in slice 'routine': OR "
    )
    row = next(r for r in section["covariates"] if r["name"] == "slice:risky")
    assert row["reference"] == section["reference"] == "slice 'routine'"


def test_no_planted_effect_says_so():
    ids, human, judge, cases = _cases(300, 8)
    section = errors_by_covariate(ids, human, judge, cases)
    assert section["summary"].startswith("no covariate is significantly linked")


def test_degenerate_designs_give_notes():
    ids, human, _, cases = _cases(50, 9)
    section = errors_by_covariate(ids, human, human, cases)  # the judge never errs
    assert section["covariates"] is None and "too few of one kind" in section["notes"][-1]
    assert section["summary"].startswith("not estimated: ")
    # A slice where the judge is always right cannot carry an odds ratio: left out.
    ids, human, judge, cases = _cases(200, 10, length_effect=0.3)
    judge = [
        "pass" if cases[i]["slices"] == ["risky"] else j for i, j in zip(ids, judge, strict=True)
    ]
    section = errors_by_covariate(ids, human, judge, cases)
    assert any("slice 'risky'" in note and "separation" in note for note in section["notes"])
    assert all(r["name"] != "slice:risky" for r in section["covariates"])


def test_a_separating_covariate_is_left_out_and_the_model_refitted():
    ids, human, _, cases = _cases(200, 11)
    # The judge errs exactly on the cases with three contexts or more: complete separation.
    judge = ["fail" if len(cases[i]["contexts"]) >= 3 else "pass" for i in ids]
    section = errors_by_covariate(ids, human, judge, cases)
    assert any(n.startswith("the number of contexts separates") for n in section["notes"])
    assert [r["name"] for r in section["covariates"]] == ["answer_words", "slice:risky"]


def test_pairwise_cases_use_the_length_difference_and_the_order():
    rng = np.random.default_rng(12)
    n = 120
    cases = {
        f"p{i}": {"answer_a": "a " * int(rng.integers(5, 80)), "answer_b": "b " * 30}
        for i in range(n)
    }
    ids = list(cases)
    order = [{"order": "ba" if i % 2 else "ab"} for i in range(n)]
    human = ["A"] * n
    judge = ["B" if (i % 2 and rng.random() < 0.6) or rng.random() < 0.1 else "A" for i in range(n)]
    section = errors_by_covariate(ids, human, judge, cases, extra=order)
    names = {r["name"]: r for r in section["covariates"]}
    assert names["answer_words"]["description"] == "answer A minus answer B length"
    assert names["b_shown_first"]["odds_ratio"] > 1 and names["b_shown_first"]["significant"]
    assert section["summary"].startswith("disagreement is higher when answer B is shown first")


def test_cases_file_aliases_and_csv_cells(tmp_path):
    path = tmp_path / "cases.csv"
    path.write_text(
        'id,response,retrieved_contexts,slices\nx,"two words","[""a"", ""b""]",billing|refunds\n'
    )
    assert read_cases(path) == {
        "x": {"answer": "two words", "contexts": ["a", "b"], "slices": ["billing", "refunds"]}
    }


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return grade_examples_offline(tmp_path_factory.mktemp("explain") / "records.jsonl")


def test_calibrate_explain_adds_the_section(records, tmp_path, capsys):
    argv = [records, EXAMPLES / "human_labels.csv", "-o", tmp_path, "--bootstrap", "50"]
    assert exit_code(*argv, "--cases", EXAMPLES / "cases.jsonl", "--explain") == 0
    out = capsys.readouterr().out
    result = json.loads((tmp_path / "calibration.json").read_text())
    section = result["errors_by_covariate"]
    assert section["n"] == 43 and section["disagreements"] == sum(
        1 for d in result["disagreements"]
    )
    assert f"why the judge errs: {section['summary']}" in out
    report = (tmp_path / "report.md").read_text()
    assert "## Why the judge errs" in report and "answer length (per 10 words)" in report


def test_calibrate_explain_refusals(records, tmp_path, capsys):
    argv = [records, EXAMPLES / "human_labels.csv", "-o", tmp_path / "o", "--bootstrap", "0"]
    assert exit_code(*argv, "--explain") == 2
    assert "--explain needs --cases" in capsys.readouterr().err
    elsewhere = tmp_path / "cases.jsonl"
    elsewhere.write_text('{"id": "nowhere", "answer": "x"}\n')
    assert exit_code(*argv, "--cases", elsewhere, "--explain") == 2
    assert "none of the 43 labelled ids is in the cases file" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
