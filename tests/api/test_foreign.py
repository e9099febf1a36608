"""`judge calibrate` on another tool's judge output (issue 23 item 5): promptfoo results
JSON, DeepEval test-run JSON, Inspect eval logs (.json and .eval) and Ragas result CSV give
the same calibration as the equivalent plain label file; the mapping and the unmapped
fields are said. The samples are vendored (tests/data/foreign/SOURCE.md)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from calibration.foreign import ForeignFormatError, detect_format, read_foreign
from judge.cli import main
from tests.helpers import REPO

DATA = REPO / "tests" / "data" / "foreign"
EQUIVALENT = DATA / "equivalent_labels.csv"
SAMPLES = {  # file: (tool, --metric)
    "promptfoo_results.json": ("promptfoo", None),
    "deepeval_test_run.json": ("deepeval", "Faithfulness"),
    "inspect_log.json": ("inspect", None),
    "inspect_log.eval": ("inspect", None),
}
FAST = ["--bootstrap", "200"]


def equivalent_ids() -> list[str]:
    with EQUIVALENT.open(newline="") as handle:
        return [row["id"] for row in csv.DictReader(handle)]


@pytest.fixture
def human(tmp_path: Path) -> Path:
    """The human labels of the samples' cases (examples/human_labels.csv's rows)."""
    wanted = set(equivalent_ids())
    out = tmp_path / "human.csv"
    with (REPO / "examples" / "human_labels.csv").open(newline="") as src, out.open("w") as dst:
        reader = csv.DictReader(src)
        writer = csv.DictWriter(dst, fieldnames=["id", "label"])
        writer.writeheader()
        writer.writerows({"id": r["id"], "label": r["label"]} for r in reader if r["id"] in wanted)
    return out


def calibration(out: Path) -> dict[str, Any]:
    data = json.loads((out / "calibration.json").read_text())
    data["settings"].pop("judge_file")
    return data


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("say_from", [True, False], ids=["--from", "detected"])
def test_a_tools_output_calibrates_as_its_equivalent_label_file(
    name: str, say_from: bool, human: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool, metric = SAMPLES[name]
    args = ["calibrate", str(DATA / name), str(human), "-o", str(tmp_path / "a"), *FAST]
    args += ["--pass-labels", "faithful,unfaithful"]
    args += ["--from", tool] if say_from else []
    args += ["--metric", metric] if metric else []
    assert main(args, env={}) == 0
    err = capsys.readouterr().err
    assert f"{tool} output" in err and "unmapped:" in err
    reference = ["calibrate", str(EQUIVALENT), str(human), "-o", str(tmp_path / "b"), *FAST]
    assert main(reference, env={}) == 0
    assert calibration(tmp_path / "a") == calibration(tmp_path / "b")
    staged = tmp_path / "a" / f"judge-side.{tool}.jsonl"
    assert sorted(json.loads(line)["id"] for line in staged.read_text().splitlines()) == sorted(
        equivalent_ids()
    )


def test_ragas_scores_calibrate_as_the_equivalent_score_file(tmp_path: Path, human: Path) -> None:
    """Ragas has no pass field: its metric column is the score; ids are row numbers, as
    `judge grade` gives the same file."""
    order = equivalent_ids()
    labels = {r["id"]: r["label"] for r in csv.DictReader(human.open())}
    by_row = tmp_path / "human-rows.csv"
    by_row.write_text(
        "id,label\n" + "".join(f"row-{i},{labels[c]}\n" for i, c in enumerate(order, 1))
    )
    scores = {r["id"]: r["score"] for r in csv.DictReader(EQUIVALENT.open())}
    same = tmp_path / "equivalent-rows.csv"
    same.write_text(
        "id,score\n" + "".join(f"row-{i},{scores[c]}\n" for i, c in enumerate(order, 1))
    )
    common = [str(by_row), "--threshold", "0.5", "--positive-label", "faithful", *FAST]
    ragas = DATA / "ragas_result.csv"
    args = ["calibrate", str(ragas), *common, "--metric", "faithfulness", "-o", str(tmp_path / "a")]
    assert main(args, env={}) == 0
    reference = [
        "calibrate",
        str(same),
        *common,
        "--judge-field",
        "score",
        "-o",
        str(tmp_path / "b"),
    ]
    assert main(reference, env={}) == 0
    assert calibration(tmp_path / "a") == calibration(tmp_path / "b")


@pytest.mark.parametrize(
    ("name", "metric", "message"),
    [
        ("deepeval_test_run.json", None, "2 metrics (Answer Relevancy, Faithfulness)"),
        ("ragas_result.csv", None, "2 metrics (faithfulness, answer_relevancy)"),
        ("deepeval_test_run.json", "Toxicity", "no DeepEval metric 'Toxicity'"),
    ],
)
def test_a_metric_must_be_named_when_there_are_several(
    name: str, metric: str | None, message: str, human: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    args = ["calibrate", str(DATA / name), str(human), "-o", str(tmp_path / "a")]
    args += ["--metric", metric] if metric else []
    assert main(args, env={}) == 2
    assert message in capsys.readouterr().err


def test_the_wrong_tool_is_a_clear_error(
    human: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["calibrate", str(DATA / "promptfoo_results.json"), str(human), "--from", "deepeval"]
    assert main([*args, "-o", str(tmp_path / "a")], env={}) == 2
    assert "not a DeepEval test run" in capsys.readouterr().err


def test_label_files_and_records_are_not_taken_for_a_tool() -> None:
    assert detect_format(EQUIVALENT) is None
    assert detect_format(REPO / "examples" / "human_labels.csv") is None
    assert detect_format(REPO / "examples" / "cases.jsonl") is None


def test_each_reader_names_what_it_maps_and_what_it_leaves() -> None:
    rows = read_foreign(DATA / "promptfoo_results.json")
    assert rows.mapped == {"id": "testCase.vars.id", "label": "success", "score": "score"}
    assert {"latencyMs", "response", "gradingResult.reason"} <= set(rows.unmapped)
    rows = read_foreign(DATA / "deepeval_test_run.json", metric="faithfulness")
    assert rows.metric == "Faithfulness" and "metricsData (Answer Relevancy)" in rows.unmapped
    from_zip = read_foreign(DATA / "inspect_log.eval").rows
    from_json = read_foreign(DATA / "inspect_log.json").rows
    assert sorted(from_zip, key=lambda r: r["id"]) == sorted(from_json, key=lambda r: r["id"])
    with pytest.raises(ForeignFormatError, match="not promptfoo, DeepEval, Inspect or Ragas"):
        read_foreign(EQUIVALENT)


def test_judge_compare_reads_a_tools_output_as_a_run(tmp_path: Path) -> None:
    """Two promptfoo runs (B scores half a point more where it can): each metric is
    compared as METRIC.score, the overall score as promptfoo.score."""
    data = json.loads((DATA / "promptfoo_results.json").read_text())
    for result in data["results"]["results"]:
        result["score"] = min(1.0, result["score"] + 0.5)
    later = tmp_path / "later.json"
    later.write_text(json.dumps(data))
    out = tmp_path / "compare.json"
    args = ["compare", str(DATA / "promptfoo_results.json"), str(later), "--resamples", "200"]
    assert main([*args, "--json", str(out)], env={}) == 0
    result = json.loads(out.read_text())
    (comparison,) = result["comparisons"]
    by_metric = comparison["metrics"]
    assert set(by_metric) == {"promptfoo.score", "faithfulness.score"}
    assert by_metric["promptfoo.score"]["n"] == 10
    assert by_metric["promptfoo.score"]["diff"] == pytest.approx(0.35)
    assert by_metric["faithfulness.score"]["diff"] == 0


def test_judge_compare_names_deepeval_metrics_as_ragas_does(tmp_path: Path) -> None:
    from judge.report.foreign_runs import foreign_run

    run = foreign_run(DATA / "deepeval_test_run.json", "deepeval")
    assert set(run.rubrics) == {"faithfulness", "answer_relevancy"}
    assert set(foreign_run(DATA / "ragas_result.csv", "ragas").rubrics) == set(run.rubrics)


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


def test_a_judge_file_that_is_not_utf8_is_the_label_readers_error(
    human: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "j.csv"
    path.write_bytes(b"id,label\nc0,faithful\ncaf\xe9,unfaithful\n")
    assert main(["calibrate", str(path), str(human), "-o", str(tmp_path / "r")], env={}) == 2
    assert "error:" in capsys.readouterr().err
