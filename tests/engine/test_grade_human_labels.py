"""`judge grade --human-labels` (issue 15 item 3): the wiring of the prediction-powered
estimates through the engine, shared by the CLI, the Python API and service jobs.

The statistics are calibration's (tests/unit/test_calibration_ppi*.py check them against
ppi-python and for coverage); here the summary's figures must equal calling calibration
directly on the same files, and bad label files must stop the run before anything is sent.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import httpx
import pytest

from calibration.decisions.gates import flatten_numbers as flatten
from calibration.estimates.prediction_powered import prediction_powered_files
from judge import Judge, JudgeConfig
from judge.cli import main
from judge.engine.measure.estimates import estimate_metric_names
from judge.rubric import load_rubric
from judge.service.config import ServiceConfig
from tests.helpers import REPO
from tests.test_service_support import InProcessService, wait_for_job

EXAMPLES = REPO / "examples"
CASES = EXAMPLES / "cases.jsonl"
SCORES = {"faithful": 1.0, "unfaithful": 0.0}


def _human_rows(name: str = "human_labels.csv") -> list[dict[str, str]]:
    with (EXAMPLES / name).open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.fixture
def some(tmp_path: Path) -> Path:
    """Every other example label (22 of 43), as the README's awk line picks them."""
    rows = _human_rows()[::2]
    return _write_csv(tmp_path / "some.csv", [{"id": r["id"], "label": r["label"]} for r in rows])


def _grade(tmp_path: Path, *extra: str, labels: Path | None = None) -> tuple[int, Path, Path]:
    out, summary = tmp_path / "graded.jsonl", tmp_path / "summary.json"
    argv = ["grade", str(CASES), "--rubric", "faithfulness", "-o", str(out)]
    argv += ["--summary", str(summary), "--offline", "--no-cache", *extra]
    if labels is not None:
        argv += ["--human-labels", str(labels)]
    return main(argv, env={}), out, summary


def _close(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """One flat estimate (estimate, ci95_low, ci95_high) against calibration's (estimate,
    ci95 list or None)."""
    ci = theirs["ci95"] or [None, None]
    got_all = [ours["estimate"], ours["ci95_low"], ours["ci95_high"]]
    # undefined (nan) figures are null in a summary
    for got, want in zip(got_all, [theirs["estimate"], *ci], strict=True):
        undefined = want is None or math.isnan(want)
        assert got == (None if undefined else pytest.approx(want, abs=1e-12))


def _same(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Our flat block against calibration's nested one: every point and bound equal."""
    _close(ours, theirs["ppi"])
    assert ours["lambda"] == pytest.approx(theirs["ppi"]["lambda"], abs=1e-12)
    for side in ("judge_only", "human_only"):
        _close(ours[side], theirs[side])
    if "corrected" in theirs:
        _close(ours["corrected"], theirs["corrected"])


# ---- the CLI, end to end, offline ------------------------------------------------------


def test_cli_summary_equals_calibration_on_the_same_files(tmp_path: Path, some: Path) -> None:
    code, out, summary_path = _grade(tmp_path, labels=some)
    assert code == 0
    summary = json.loads(summary_path.read_text())
    direct = prediction_powered_files(out, some)
    ppi = summary["ppi"]
    assert ppi["positive_label"] == direct["positive_label"] == "faithful"
    assert ppi["counts"]["labelled"] == direct["counts"]["labelled"] == 22
    assert ppi["counts"]["unlabelled"] == 21
    _same(ppi["pass_rate"], direct["overall"]["pass_rate"])
    assert set(direct["by_slice"]) == {n for n, s in summary["by_slice"].items() if "ppi" in s}
    for name, block in direct["by_slice"].items():
        _same(summary["by_slice"][name]["ppi"]["pass_rate"], block["pass_rate"])
    # the corrected pass rate uses the judge-only cases, so it is not the human rate
    assert ppi["pass_rate"]["corrected"]["estimate"] != ppi["pass_rate"]["human_only"]["estimate"]


def test_mean_score_takes_the_rubrics_score_of_each_label(tmp_path: Path, some: Path) -> None:
    """Without a score column a human label stands for its rubric score (faithful 1,
    unfaithful 0): the same figures as a file that writes those scores out."""
    rows = list(csv.DictReader(some.open(encoding="utf-8")))
    scored = _write_csv(
        tmp_path / "scored.csv", [{**r, "score": SCORES.get(r["label"], "")} for r in rows]
    )
    code, out, summary_path = _grade(tmp_path, labels=some)
    assert code == 0
    mean = json.loads(summary_path.read_text())["ppi"]["mean_score"]
    _same(mean, prediction_powered_files(out, scored)["overall"]["mean_score"])
    assert mean["judge_only"]["estimate"] == pytest.approx(
        json.loads(summary_path.read_text())["mean_score"], abs=1e-6
    )


def test_inclusion_probabilities_reweight(tmp_path: Path) -> None:
    """A stratified sample (every unanswerable case, one in three of the rest) as `judge
    label export` writes it: the column is used without being asked for."""
    rows = _human_rows()
    chosen = [
        {"id": r["id"], "label": r["label"], "inclusion_probability": p}
        for i, r in enumerate(rows)
        for p in [1.0 if r["id"].startswith("unanswerable") else 1 / 3]
        if p == 1.0 or i % 3 == 0
    ]
    labels = _write_csv(tmp_path / "export.csv", chosen)
    code, out, summary_path = _grade(tmp_path, labels=labels)
    assert code == 0
    ppi = json.loads(summary_path.read_text())["ppi"]
    assert ppi["weighted"] is True
    weights = {r["id"]: 1 / r["inclusion_probability"] for r in chosen}
    direct = prediction_powered_files(out, labels, weights=weights)
    _same(ppi["pass_rate"], direct["overall"]["pass_rate"])
    plain = prediction_powered_files(out, labels)
    assert ppi["pass_rate"]["estimate"] != pytest.approx(
        plain["overall"]["pass_rate"]["ppi"]["estimate"]
    )


def test_relevance_gets_the_mean_label(tmp_path: Path) -> None:
    rows = _human_rows("human_relevance.csv")[::2]
    labels = _write_csv(tmp_path / "rel.csv", [{"id": r["id"], "label": r["label"]} for r in rows])
    out = tmp_path / "rel.jsonl"
    argv = ["grade", str(CASES), "--rubric", "relevance", "-o", str(out), "--offline"]
    argv += ["--no-cache", "--summary", str(tmp_path / "s.json"), "--human-labels", str(labels)]
    assert main(argv, env={}) == 0
    ppi = json.loads((tmp_path / "s.json").read_text())["ppi"]
    assert "pass_rate" not in ppi  # five labels: no pass/fail
    direct = prediction_powered_files(out, labels)
    _same(ppi["mean_label"], direct["overall"]["mean_label"])


def test_the_table_prints_under_the_summary(
    tmp_path: Path, some: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _grade(tmp_path, labels=some)[0] == 0
    printed = capsys.readouterr().out
    assert "human labels (" in printed and "22 of 43 graded cases labelled" in printed
    pass_rate = json.loads((tmp_path / "summary.json").read_text())["ppi"]["pass_rate"]
    low, high = pass_rate["ci95_low"], pass_rate["ci95_high"]
    assert f"{pass_rate['estimate']:.2f} [{low:.2f},{high:.2f}]" in printed


# ---- gates -------------------------------------------------------------------------------


def test_fail_if_names_the_estimates(tmp_path: Path, some: Path) -> None:
    code, _, summary_path = _grade(tmp_path, "--fail-if", "ppi.pass_rate.ci95_low > 0", labels=some)
    assert code == 3
    low = json.loads(summary_path.read_text())["ppi"]["pass_rate"]["ci95_low"]
    assert low > 0
    code, _, _ = _grade(
        tmp_path, "--overwrite", "--fail-if", "ppi.pass_rate.ci95_low < 0", labels=some
    )
    assert code == 0


def test_fail_if_on_an_estimate_without_labels_or_misspelt_is_usage(
    tmp_path: Path, some: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _grade(tmp_path, "--fail-if", "ppi.pass_rate.ci95_low < 0.8")
    assert code == 2 and not out.exists()
    code, out, _ = _grade(tmp_path, "--fail-if", "ppi.pass_rate.low < 0.8", labels=some)
    assert code == 2 and not out.exists()
    assert "ppi.pass_rate.ci95_low" in capsys.readouterr().err  # the valid names are listed


@pytest.mark.parametrize("rubric", ["faithfulness", "relevance", "pairwise"])
def test_every_summary_name_is_one_fail_if_accepts(tmp_path: Path, rubric: str) -> None:
    source = EXAMPLES / ("pairs.jsonl" if rubric == "pairwise" else "cases.jsonl")
    human = {"faithfulness": "human_labels.csv", "relevance": "human_relevance.csv"}
    rows = _human_rows(human.get(rubric, "human_pairs.csv"))[::2]
    labels = [{"id": r["id"], "label": r["label"]} for r in rows]
    summary = Judge(JudgeConfig(use_cache=False)).grade_file(
        source, tmp_path / "out.jsonl", rubric, human_labels=labels
    )
    produced = {f"ppi.{name}" for name in flatten(summary["ppi"])}
    assert produced == estimate_metric_names(load_rubric(rubric))


def test_no_labelled_case_graded_gives_a_reason_and_the_gate_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = _write_csv(tmp_path / "l.csv", [{"id": "unanswerable-008", "label": "abstained"}])
    code, _, summary_path = _grade(
        tmp_path, "--limit", "3", "--fail-if", "ppi.pass_rate.estimate < 0.5", labels=labels
    )
    assert code == 3
    assert "no id in common" in json.loads(summary_path.read_text())["ppi"]["reason"]
    assert "undefined (fails:" in capsys.readouterr().err


# ---- bad label files: exit 2 before the first request, every problem listed ----------------


def _refused(tmp_path: Path, labels: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, summary = _grade(tmp_path, labels=labels)
    assert code == 2
    assert not out.exists() and not summary.exists()
    return capsys.readouterr().err


def test_a_file_that_is_not_a_label_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(tmp_path, CASES, capsys)
    assert "cases.jsonl:1 (id 'returns-001'): no label field" in err
    assert "cases.jsonl:2 (id 'returns-002'): no label field" in err


def test_graded_records_given_as_labels(
    tmp_path: Path, some: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _grade(tmp_path, labels=some)[0] == 0
    records = tmp_path / "records.jsonl"
    records.write_bytes((tmp_path / "graded.jsonl").read_bytes())
    again = tmp_path / "again"
    again.mkdir()
    err = _refused(again, records, capsys)
    assert "records.jsonl:1 (id 'returns-001'): this is a judge's graded record" in err


def test_labels_of_another_rubric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(tmp_path, EXAMPLES / "human_relevance.csv", capsys)
    assert "share nothing with rubric faithfulness@1's labels" in err


def test_unknown_labels_are_all_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"id": "returns-001", "label": "faithful"},
        {"id": "returns-002", "label": "faithfull"},
        {"id": "nowhere-1", "label": "faithful"},
        {"id": "nowhere-2", "label": "unfaithful"},
        {"id": "returns-003", "label": "mostly fine"},
    ]
    err = _refused(tmp_path, _write_csv(tmp_path / "bad.csv", rows), capsys)
    assert "bad.csv:3 (id 'returns-002'): label 'faithfull' is not one of" in err
    assert "bad.csv:6 (id 'returns-003'): label 'mostly fine' is not one of" in err
    # ids outside the input are no problem: ignored and counted, as --limit's (issue 37)
    assert "nowhere" not in err


def test_bad_inclusion_probabilities(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"id": "returns-001", "label": "faithful", "inclusion_probability": "0.5"},
        {"id": "returns-002", "label": "unfaithful", "inclusion_probability": "1.5"},
        {"id": "returns-003", "label": "faithful", "inclusion_probability": ""},
    ]
    err = _refused(tmp_path, _write_csv(tmp_path / "p.csv", rows), capsys)
    assert "p.csv:3 (id 'returns-002'): inclusion_probability must be a number in (0, 1]" in err
    assert "p.csv:4 (id 'returns-003'): no inclusion_probability, though other rows have one" in err


def test_missing_or_empty_label_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "no such file" in _refused(tmp_path, tmp_path / "absent.csv", capsys)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert "no labels" in _refused(tmp_path, empty, capsys)


def test_batch_flags_refuse_human_labels(tmp_path: Path, some: Path) -> None:
    code, out, _ = _grade(tmp_path, "--export-batch", str(tmp_path / "req.jsonl"), labels=some)
    assert code == 2 and not (tmp_path / "req.jsonl").exists()


# ---- the Python API and a service job share the path -------------------------------------


def test_python_api_equals_the_cli(tmp_path: Path, some: Path) -> None:
    assert _grade(tmp_path, labels=some)[0] == 0
    cli = json.loads((tmp_path / "summary.json").read_text())
    api = Judge(JudgeConfig(use_cache=False)).grade_file(
        CASES, tmp_path / "api.jsonl", "faithfulness", human_labels=some
    )
    assert api["ppi"]["pass_rate"] == cli["ppi"]["pass_rate"]
    assert api["by_slice"]["billing"]["ppi"] == cli["by_slice"]["billing"]["ppi"]


def _job(api: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    response = api.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    return wait_for_job(api, response.json()["id"])


def test_service_job_with_human_labels_equals_the_cli(tmp_path: Path, some: Path) -> None:
    assert _grade(tmp_path, labels=some)[0] == 0
    cli = json.loads((tmp_path / "summary.json").read_text())
    cases = [json.loads(line) for line in CASES.read_text().splitlines()]
    rows = list(csv.DictReader(some.open(encoding="utf-8")))
    config = ServiceConfig(data_dir=tmp_path / "data", use_cache=False)
    with InProcessService(config) as service, httpx.Client(base_url=service.base_url) as api:
        as_rows = _job(api, {"rubric": "faithfulness", "cases": cases, "human_labels": rows})
        as_file = _job(
            api, {"rubric": "faithfulness", "cases": cases, "human_labels": some.read_text()}
        )
        not_labels = api.post(
            "/v1/jobs",
            json={"rubric": "faithfulness", "cases": cases, "human_labels": [{"id": "a"}]},
        )
        unknown = api.post(
            "/v1/jobs",
            json={
                "rubric": "faithfulness",
                "cases": cases,
                "human_labels": "id,label\nreturns-001,yes\nnowhere,faithful\n",
            },
        )
    for job in (as_rows, as_file):
        assert job["status"] == "done", job
        ppi = job["summary"]["ppi"]
        assert ppi["labels"] == "human_labels"
        assert ppi["pass_rate"] == cli["ppi"]["pass_rate"]
        assert ppi["mean_score"] == cli["ppi"]["mean_score"]
        assert job["summary"]["by_slice"]["returns"]["ppi"] == cli["by_slice"]["returns"]["ppi"]
    for response in (not_labels, unknown):
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["type"] == "invalid_labels" and error["field"] == "human_labels"
    assert not_labels.json()["error"]["problems"] == [
        "human_labels[0] (id 'a'): no label field (fields: id)"
    ]
    assert unknown.json()["error"]["problems"] == [
        "human_labels line 2 (id 'returns-001'): label 'yes' is not one of rubric "
        "faithfulness@1's labels (faithful, unfaithful, abstained)",
    ]  # the id outside the job's cases is ignored and counted (issue 37)
