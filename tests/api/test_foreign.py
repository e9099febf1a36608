"""`judge calibrate` and `judge compare` on other tools' judge output (issue 23 item 5), on
files the tools wrote themselves (tests/data/foreign/SOURCE.md): promptfoo 0.123.1's results
JSON, DeepEval 4.3.1's test runs, Inspect 0.3.285's eval logs (.eval and .json) and Ragas
0.4.3's result CSV, each over the 37 labelled cases of examples/.

Each calibrates to the same figures as a plain label file holding the same verdicts, built
here from what the tool gave besides the file the reader reads: promptfoo's CSV of the same
run, or the verdicts the tool's Python API returned (each folder's equivalent.csv, written
by its script from DeepEval's EvaluationResult, Inspect's EvalLog, Ragas' result.scores)."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from calibration.foreign import ForeignFormatError, detect_format, read_foreign
from judge.cli import main
from tests.helpers import REPO

DATA = REPO / "tests" / "data" / "foreign" / "real"
PROMPTFOO = DATA / "promptfoo" / "results.json"
FAST = ["--bootstrap", "200"]
NAMES = {"pass": "faithful", "fail": "unfaithful"}  # --pass-labels faithful,unfaithful


def table(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def write_labels(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def human_labels() -> dict[str, str]:
    """examples/human_labels.csv's faithful and unfaithful cases: the 37 the tools graded."""
    rows = table(REPO / "examples" / "human_labels.csv")
    return {r["id"]: r["label"] for r in rows if r["label"] in ("faithful", "unfaithful")}


@pytest.fixture
def human(tmp_path: Path) -> Path:
    rows = [{"id": i, "label": label} for i, label in human_labels().items()]
    return write_labels(tmp_path / "human.csv", rows)


def calibration(out: Path) -> dict[str, Any]:
    data = json.loads((out / "calibration.json").read_text())
    data["settings"].pop("judge_file")
    return data


# The equivalent label files, from the tools' other outputs (never through a reader).


def promptfoo_equivalent(metric: str | None) -> list[dict[str, Any]]:
    """From promptfoo's CSV of the same run: `Status` PASS/FAIL for the whole test; for one
    assertion's metric its `Metric: NAME` column, 1.00 exactly when promptfoo_grader.py
    passed it (the grader passes a case when all of its claims are supported)."""
    rows = table(DATA / "promptfoo" / "results.csv")
    if metric is None:
        return [{"id": r["id"], "label": NAMES[r["Status"].lower()]} for r in rows]
    column = f"Metric: {metric}"
    return [
        {"id": r["id"], "label": NAMES["pass" if float(r[column]) == 1 else "fail"]} for r in rows
    ]


def deepeval_equivalent(metric: str) -> list[dict[str, Any]]:
    rows = table(DATA / "deepeval" / "equivalent.csv")
    return [{"id": r["id"], "label": NAMES[r["label"]]} for r in rows if r["metric"] == metric]


def inspect_equivalent() -> list[dict[str, Any]]:
    """Inspect's CORRECT ("C") is a pass, INCORRECT ("I") a fail."""
    letters = {"C": "faithful", "I": "unfaithful"}
    return [{"id": r["id"], "label": letters[r["value"]]} for r in table(DATA / "inspect" / "equivalent.csv")]  # fmt: skip


CASES = {  # test id: (file, tool, --metric, equivalent rows)
    "promptfoo": (PROMPTFOO, "promptfoo", None, lambda: promptfoo_equivalent(None)),
    "promptfoo-metric": (
        PROMPTFOO, "promptfoo", "faithfulness", lambda: promptfoo_equivalent("faithfulness")
    ),
    "deepeval-results-folder": (
        DATA / "deepeval" / "test_run.json", "deepeval", "Faithfulness",
        lambda: deepeval_equivalent("Faithfulness"),
    ),
    "deepeval-latest": (
        DATA / "deepeval" / "latest_test_run.json", "deepeval", "answer relevancy",
        lambda: deepeval_equivalent("Answer Relevancy"),
    ),
    "inspect-eval": (DATA / "inspect" / "faithfulness.eval", "inspect", None, inspect_equivalent),
    "inspect-json": (DATA / "inspect" / "faithfulness.json", "inspect", None, inspect_equivalent),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
# the detected form repeats the whole calibration; detection itself is checked below, so
# it runs with the slow set (.ci/slow)
@pytest.mark.parametrize(
    "say_from",
    [pytest.param(True, id="--from"), pytest.param(False, id="detected", marks=pytest.mark.slow)],
)
def test_a_tools_real_output_calibrates_as_its_equivalent_label_file(
    case: str, say_from: bool, human: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, tool, metric, equivalent = CASES[case]
    args = ["calibrate", str(path), str(human), "-o", str(tmp_path / "a"), *FAST]
    args += ["--pass-labels", "faithful,unfaithful"]
    args += ["--from", tool] if say_from else []
    args += ["--metric", metric] if metric else []
    assert main(args, env={}) == 0
    err = capsys.readouterr().err
    assert f"{tool} output" in err and "unmapped:" in err
    labels = write_labels(tmp_path / "equivalent.csv", equivalent())
    reference = ["calibrate", str(labels), str(human), "-o", str(tmp_path / "b"), *FAST]
    assert main(reference, env={}) == 0
    ours = calibration(tmp_path / "a")
    assert ours == calibration(tmp_path / "b")
    assert ours["n"] == 37 and ours["excluded"]["judge"] == {}
    # the tools' verdicts are not all one class, and not all the humans'
    assert 0 < ours["observed_agreement"] < 1


def test_ragas_scores_calibrate_as_the_equivalent_score_file(tmp_path: Path) -> None:
    """Ragas has no pass field: its metric column is the score, cut at --threshold; its CSV
    has no id column, so the rows are row-1, row-2, ... (as `judge grade` numbers them)."""
    rows = table(DATA / "ragas" / "equivalent.csv")  # id, row, faithfulness (result.scores)
    labels = human_labels()
    human = write_labels(
        tmp_path / "human-rows.csv", [{"id": f"row-{r['row']}", "label": labels[r["id"]]} for r in rows]
    )  # fmt: skip
    same = write_labels(
        tmp_path / "equivalent.csv",
        [{"id": f"row-{r['row']}", "score": float(r["faithfulness"])} for r in rows],
    )
    common = [str(human), "--threshold", "0.75", "--positive-label", "faithful", *FAST]
    ragas = DATA / "ragas" / "result.csv"
    assert detect_format(ragas) == "ragas"
    assert main(["calibrate", str(ragas), *common, "-o", str(tmp_path / "a")], env={}) == 0
    reference = ["calibrate", str(same), *common, "--judge-field", "score"]
    assert main([*reference, "-o", str(tmp_path / "b")], env={}) == 0
    ours = calibration(tmp_path / "a")
    assert ours == calibration(tmp_path / "b")
    assert ours["n"] == 37 and 0 < ours["observed_agreement"] < 1


def test_a_case_the_tool_failed_on_is_excluded_and_counted(
    human: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """promptfoo's errors (`failureReason` 2: here the grader failed on 2 of 4 cases) are no
    verdict; its failed assertions (`failureReason` 1, with the reason in `error`) are."""
    path = DATA / "promptfoo" / "with_errors.json"
    rows = read_foreign(path).rows
    assert [r.get("status") for r in rows] == [None, "error", "error", None]
    assert [r.get("label") for r in rows] == ["pass", None, None, "fail"]
    args = ["calibrate", str(path), str(human), "-o", str(tmp_path / "a"), *FAST]
    assert main([*args, "--pass-labels", "faithful,unfaithful"], env={}) == 0
    assert "excluded from the judge file: 2 (status error)" in capsys.readouterr().out
    result = calibration(tmp_path / "a")
    assert result["n"] == 2
    assert result["excluded"]["judge_ids"] == {"status error": ["returns-002", "returns-003"]}


@pytest.mark.parametrize(
    ("path", "tool"),
    [
        (PROMPTFOO, "promptfoo"),
        (DATA / "promptfoo" / "with_errors.json", "promptfoo"),
        (DATA / "deepeval" / "test_run.json", "deepeval"),
        (DATA / "deepeval" / "latest_test_run.json", "deepeval"),
        (DATA / "inspect" / "faithfulness.eval", "inspect"),
        (DATA / "inspect" / "faithfulness.json", "inspect"),
        (DATA / "ragas" / "result.csv", "ragas"),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else v,
)
def test_detection_names_the_tool_that_wrote_each_real_file(path: Path, tool: str) -> None:
    assert detect_format(path) == tool


def test_label_files_records_and_promptfoos_csv_are_not_taken_for_a_tool() -> None:
    """promptfoo's CSV has `question` and `answer` columns here (the tests' variables), as
    Ragas' 0.1 CSVs had: it is not taken for Ragas output."""
    assert detect_format(DATA / "promptfoo" / "results.csv") is None
    for name in ("deepeval", "inspect", "ragas"):
        assert detect_format(DATA / name / "equivalent.csv") is None
    assert detect_format(REPO / "examples" / "human_labels.csv") is None
    assert detect_format(REPO / "examples" / "cases.jsonl") is None


@pytest.mark.parametrize(
    ("path", "metric", "message"),
    [
        (DATA / "deepeval" / "test_run.json", None, "2 metrics (Answer Relevancy, Faithfulness)"),
        (DATA / "deepeval" / "test_run.json", "Toxicity", "no DeepEval metric 'Toxicity'"),
        (PROMPTFOO, "toxicity", "no promptfoo metric 'toxicity'; it has brevity, faithfulness"),
    ],
)
def test_a_metric_must_be_named_when_there_are_several(
    path: Path, metric: str | None, message: str, human: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    args = ["calibrate", str(path), str(human), "-o", str(tmp_path / "a")]
    args += ["--metric", metric] if metric else []
    assert main(args, env={}) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["calibrate", "compare"])
def test_promptfoo_results_of_two_providers_are_refused_clearly(
    command: str, human: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each test is graded once per prompt x provider: two judges in one file. Before,
    calibrate said only that an id appears twice."""
    path = DATA / "promptfoo" / "two_providers.json"
    assert detect_format(path) == "promptfoo"
    second = str(human) if command == "calibrate" else str(PROMPTFOO)
    args = [command, str(path), second] + (["-o", str(tmp_path / "a")] * (command == "calibrate"))
    assert main(args, env={}) == 2
    err = capsys.readouterr().err
    assert "2 prompt x provider pairs (echo-a on '{{answer}}', echo-b on '{{answer}}')" in err
    assert "--filter-providers" in err and "Traceback" not in err


def test_the_wrong_tool_is_a_clear_error(
    human: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["calibrate", str(PROMPTFOO), str(human), "--from", "deepeval"]
    assert main([*args, "-o", str(tmp_path / "a")], env={}) == 2
    assert "not a DeepEval test run" in capsys.readouterr().err


def test_each_reader_names_what_it_maps_and_what_it_leaves() -> None:
    rows = read_foreign(PROMPTFOO)
    assert rows.mapped == {"id": "testCase.vars.id", "label": "success", "score": "score"}
    assert {"latencyMs", "response", "namedScores (brevity, faithfulness)"} <= set(rows.unmapped)
    rows = read_foreign(DATA / "deepeval" / "test_run.json", metric="faithfulness")
    assert rows.metric == "Faithfulness" and "metricsData (Answer Relevancy)" in rows.unmapped
    assert {"actualOutput", "retrievalContext", "metricsData.reason"} <= set(rows.unmapped)
    rows = read_foreign(DATA / "inspect" / "faithfulness.eval")
    assert rows.metric == "model_graded_qa"
    assert {"messages", "output", "scores.explanation"} <= set(rows.unmapped)
    rows = read_foreign(DATA / "ragas" / "result.csv")
    assert rows.mapped == {"id": "row number", "score": "faithfulness"}
    assert rows.unmapped == ["user_input", "retrieved_contexts", "response"]
    with pytest.raises(ForeignFormatError, match="not promptfoo, DeepEval, Inspect or Ragas"):
        read_foreign(REPO / "examples" / "human_labels.csv")


def test_inspects_eval_and_json_logs_give_the_same_rows() -> None:
    """The .eval log (zstd-compressed members) and `inspect log convert --to json` of it."""
    from_zip = read_foreign(DATA / "inspect" / "faithfulness.eval").rows
    from_json = read_foreign(DATA / "inspect" / "faithfulness.json").rows
    assert from_zip == from_json and len(from_zip) == 37


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="Python 3.14's zipfile reads zstd")
def test_an_eval_log_without_zstandard_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, human: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard fails
    path = DATA / "inspect" / "faithfulness.eval"
    assert main(["calibrate", str(path), str(human), "-o", str(tmp_path / "a")], env={}) == 2
    assert "pip install 'llm-judge[inspect]'" in capsys.readouterr().err


def test_judge_compare_reads_a_tools_output_as_a_run(tmp_path: Path) -> None:
    """Two promptfoo runs (B scores half a point more where it can): each metric is
    compared as METRIC.score, the overall score as promptfoo.score."""
    data = json.loads(PROMPTFOO.read_text())
    before = {r["testCase"]["vars"]["id"]: r["score"] for r in data["results"]["results"]}
    for result in data["results"]["results"]:
        result["score"] = min(1.0, result["score"] + 0.5)
    later = tmp_path / "later.json"
    later.write_text(json.dumps(data))
    out = tmp_path / "compare.json"
    args = ["compare", str(PROMPTFOO), str(later), "--resamples", "200"]
    assert main([*args, "--json", str(out)], env={}) == 0
    (comparison,) = json.loads(out.read_text())["comparisons"]
    by_metric = comparison["metrics"]
    assert set(by_metric) == {"promptfoo.score", "faithfulness.score", "brevity.score"}
    assert by_metric["promptfoo.score"]["n"] == 37
    shift = sum(min(1.0, s + 0.5) - s for s in before.values()) / len(before)
    assert by_metric["promptfoo.score"]["diff"] == pytest.approx(shift)
    assert by_metric["faithfulness.score"]["diff"] == 0


def test_judge_compare_over_deepevals_two_files_of_one_run(tmp_path: Path) -> None:
    """The results-folder file and .latest_test_run.json hold the same run: every metric
    (named as Ragas names it) differs by nothing."""
    out = tmp_path / "compare.json"
    a, b = DATA / "deepeval" / "test_run.json", DATA / "deepeval" / "latest_test_run.json"
    assert main(["compare", str(a), str(b), "--resamples", "200", "--json", str(out)]) == 0
    (comparison,) = json.loads(out.read_text())["comparisons"]
    by_metric = comparison["metrics"]
    assert set(by_metric) == {"faithfulness.score", "answer_relevancy.score"}
    assert all(m["n"] == 37 and m["diff"] == 0 for m in by_metric.values())


def test_judge_compare_names_deepeval_metrics_as_ragas_does() -> None:
    from judge.report.foreign_runs import foreign_run

    run = foreign_run(DATA / "deepeval" / "test_run.json", "deepeval")
    assert set(run.rubrics) == {"faithfulness", "answer_relevancy"}
    assert set(foreign_run(DATA / "ragas" / "result.csv", "ragas").rubrics) == {"faithfulness"}


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("j.csv", b"group,id,label,score\r\ng0,c0,faithful,0.0\r\ncaf\xe9\n"),  # not UTF-8
        ("j.json", b"{not json"),
        ("j.eval", b"PK\x03\x04 not a zip"),
        ("j.csv", b'"unterminated'),
    ],
)
def test_detection_never_fails_on_a_file_that_is_no_tools(
    name: str, content: bytes, tmp_path: Path
) -> None:
    """Found by tests/engine/test_cli_fuzz.py: a label file that is not UTF-8 raised from
    the detection; the ordinary reader is the one to say what is wrong with it."""
    path = tmp_path / name
    path.write_bytes(content)
    assert detect_format(path) is None


def test_a_broken_eval_member_is_the_readers_error(tmp_path: Path) -> None:
    """A truncated .eval log: detected (its header is there), then refused clearly."""
    path = tmp_path / "cut.eval"
    shutil.copy(DATA / "inspect" / "faithfulness.eval", path)
    data = bytearray(path.read_bytes())
    start = data.index(b"samples/")  # the first member's name in its local header
    data[start + 200 : start + 400] = bytes(200)  # its compressed bytes, zeroed
    path.write_bytes(bytes(data))
    assert detect_format(path) == "inspect"
    with pytest.raises(ForeignFormatError, match="cut.eval"):
        read_foreign(path)


def test_a_judge_file_that_is_not_utf8_is_the_label_readers_error(
    human: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "j.csv"
    path.write_bytes(b"id,label\nc0,faithful\ncaf\xe9,unfaithful\n")
    assert main(["calibrate", str(path), str(human), "-o", str(tmp_path / "r")], env={}) == 2
    assert "error:" in capsys.readouterr().err
