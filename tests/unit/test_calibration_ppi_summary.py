"""The prediction-powered summary of a graded set (issue 15 item 3): judge-only, human-only,
PPI++ and corrected figures, overall and per slice, labelled cases told apart by id."""

from __future__ import annotations

import csv
import json

import numpy as np
import ppi_py
import pytest

from calibration import CalibrationInputError, calibrate
from calibration.estimates.prediction_powered import (
    prediction_powered_files,
    prediction_powered_summary,
)
from tests.calibration_sets import EXAMPLES, grade_examples_offline

LABELLED = 22  # of the 43 example cases


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return grade_examples_offline(tmp_path_factory.mktemp("ppi") / "records.jsonl")


@pytest.fixture(scope="module")
def record_rows(records):
    return [json.loads(line) for line in records.read_text().splitlines()]


def _human_rows(path=EXAMPLES / "human_labels.csv"):
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def some_labels(tmp_path_factory):
    """Human labels of a seeded subset of the example cases."""
    rows = _human_rows()
    keep = sorted(np.random.default_rng(4).choice(len(rows), LABELLED, replace=False))
    path = tmp_path_factory.mktemp("labels") / "some.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "label", "score"])
        writer.writeheader()
        for i in keep:
            score = {"faithful": 1.0, "unfaithful": 0.0}.get(rows[i]["label"], "")
            writer.writerow({"id": rows[i]["id"], "label": rows[i]["label"], "score": score})
    return path


def _arrays(record_rows, human_file, positive="faithful", classes=("faithful", "unfaithful")):
    human = {r["id"]: r["label"] for r in _human_rows(human_file)}
    judged = [r for r in record_rows if r["status"] == "ok"]
    labelled = [r for r in judged if r["id"] in human and human[r["id"]] in classes]
    rest = [r for r in judged if r["id"] not in human]
    y = np.array([human[r["id"]] == positive for r in labelled], dtype=float)
    f = np.array([r["label"] == positive for r in labelled], dtype=float)
    fu = np.array([r["label"] == positive for r in rest], dtype=float)
    return y, f, fu


def test_pass_rate_estimates_tell_labelled_cases_apart_by_id(records, record_rows, some_labels):
    out = prediction_powered_files(records, some_labels)
    assert out["counts"]["labelled"] == LABELLED
    assert out["counts"]["unlabelled"] == 43 - LABELLED
    rate = out["overall"]["pass_rate"]
    y, f, fu = _arrays(record_rows, some_labels)
    assert (rate["n_labelled"], rate["n_unlabelled"]) == (len(y), len(fu))
    assert rate["ppi"]["estimate"] == pytest.approx(
        float(ppi_py.ppi_mean_pointestimate(y, f, fu)[0]), abs=1e-9
    )
    assert rate["human_only"]["estimate"] == pytest.approx(y.mean())
    assert rate["judge_only"]["estimate"] == pytest.approx(np.concatenate([f, fu]).mean())
    assert rate["judge_only"]["n"] == len(f) + len(fu)
    assert 0 <= rate["ppi"]["ci95"][0] < rate["ppi"]["estimate"] < rate["ppi"]["ci95"][1] <= 1
    # The corrected rate is calibration's own, from the same two files.
    binary = calibrate(records, some_labels, n_bootstrap=0)["binary"]
    assert rate["corrected"]["estimate"] == pytest.approx(binary["corrected_pass_rate"])
    assert rate["corrected"]["ci95"] == pytest.approx(binary["corrected_pass_rate_ci95"])
    assert out["positive_label"] == "faithful"


def test_rows_and_files_give_the_same_summary(records, record_rows, some_labels):
    from_rows = prediction_powered_summary(record_rows, _human_rows(some_labels))
    assert from_rows["overall"] == prediction_powered_files(records, some_labels)["overall"]


def test_every_slice_of_the_records_gets_its_estimates(records, some_labels):
    out = prediction_powered_files(records, some_labels)
    assert set(out["by_slice"]) == {"account", "billing", "returns", "shipping", "unanswerable"}
    billing = out["by_slice"]["billing"]
    cases = [json.loads(line) for line in (EXAMPLES / "cases.jsonl").read_text().splitlines()]
    assert billing["judged"] == sum("billing" in c["slices"] for c in cases)
    assert {"judge_only", "human_only", "ppi", "corrected"} <= set(billing["pass_rate"])


def test_mean_score_against_human_scores(records, record_rows, some_labels):
    score = prediction_powered_files(records, some_labels)["overall"]["mean_score"]
    human = {r["id"]: r["score"] for r in _human_rows(some_labels) if r["score"]}
    judged = [r for r in record_rows if r["score"] is not None]
    y = np.array([float(human[r["id"]]) for r in judged if r["id"] in human])
    f = np.array([r["score"] for r in judged if r["id"] in human])
    fu = np.array([r["score"] for r in judged if r["id"] not in human])
    assert score["ppi"]["estimate"] == pytest.approx(
        float(ppi_py.ppi_mean_pointestimate(y, f, fu)[0]), abs=1e-9
    )
    assert score["human_only"]["estimate"] == pytest.approx(y.mean())


def test_numeric_labels_give_a_mean_label(tmp_path):
    from judge import Judge, JudgeConfig

    cases = [json.loads(line) for line in (EXAMPLES / "cases.jsonl").read_text().splitlines()]
    graded = Judge(JudgeConfig(use_cache=False)).grade_many(cases, "relevance")
    rows = [r.model_dump() for r in graded]
    human = _human_rows(EXAMPLES / "human_relevance.csv")[:20]
    out = prediction_powered_summary(rows, human)
    assert out["positive_label"] is None and "pass_rate" not in out["overall"]
    block = out["overall"]["mean_label"]
    assert block["n_labelled"] == 20
    assert 1 <= block["ppi"]["estimate"] <= 5


def test_weights_reweight_the_labelled_cases(records, record_rows, some_labels):
    ids = [r["id"] for r in _human_rows(some_labels)]
    weights = {i: (4.0 if i.startswith("billing") else 1.0) for i in ids}
    out = prediction_powered_files(records, some_labels, weights=weights)
    assert out["weighted"] and "Horvitz-Thompson" in out["method"]
    y, f, _ = _arrays(record_rows, some_labels)
    judged = [r for r in record_rows if r["status"] == "ok"]
    f_all = np.array([r["label"] == "faithful" for r in judged], dtype=float)
    labelled = [r["id"] for r in judged if r["id"] in weights]
    human = {r["id"]: r["label"] for r in _human_rows(some_labels)}
    d = np.array([weights[i] for i in labelled if human[i] in ("faithful", "unfaithful")])
    expected = float(ppi_py.ppi_mean_pointestimate(y, f, f_all, w=d)[0])
    assert out["overall"]["pass_rate"]["ppi"]["estimate"] == pytest.approx(expected, abs=1e-9)
    missing = dict(list(weights.items())[1:])
    with pytest.raises(CalibrationInputError, match="no positive weight"):
        prediction_powered_files(records, some_labels, weights=missing)


def test_unusable_input_is_refused(records, tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("id,label\nnowhere-1,faithful\n")
    with pytest.raises(CalibrationInputError, match="no id in common"):
        prediction_powered_files(records, other)
    with pytest.raises(CalibrationInputError, match="graded records"):
        prediction_powered_files(records, records)
    with pytest.raises(CalibrationInputError, match="is not one of"):
        prediction_powered_files(records, EXAMPLES / "human_labels.csv", positive_label="yes")


def test_every_case_labelled_gives_the_human_rate(records):
    out = prediction_powered_files(records, EXAMPLES / "human_labels.csv")
    rate = out["overall"]["pass_rate"]
    assert rate["n_unlabelled"] == 0 and rate["ppi"]["n_unlabelled"] == 0
    assert rate["ppi"]["estimate"] == pytest.approx(rate["human_only"]["estimate"])
