"""Other tools' files that are malformed or hostile (issue 33 points 4 and 5): each is one
line on stderr naming the file, the record and what is wrong, exit 2, never a traceback.
Built from the real files under tests/data/foreign/real, one field broken at a time."""

from __future__ import annotations

import copy
import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from tests.helpers import REPO

DATA = REPO / "tests" / "data" / "foreign" / "real"
PROMPTFOO = json.loads((DATA / "promptfoo" / "results.json").read_text())
DEEPEVAL = json.loads((DATA / "deepeval" / "test_run.json").read_text())
INSPECT = json.loads((DATA / "inspect" / "faithfulness.json").read_text())


@pytest.fixture
def human(tmp_path: Path) -> Path:
    path = tmp_path / "human.csv"
    path.write_text("id,label\nreturns-001,faithful\nreturns-002,unfaithful\n")
    return path


def calibrate_error(
    judge: Path, human: Path, capsys: pytest.CaptureFixture[str], *options: str
) -> str:
    """The one line `judge calibrate` prints for `judge` (exit 2, no traceback)."""
    args = ["calibrate", str(judge), str(human), "-o", str(human.parent / "report"), *options]
    assert main(args, env={}) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith("error: ") and str(judge) in line
    return line


DEEP = "nested 5,000 deep"  # a value that json.dumps cannot write: put in the text after


def broken(data: dict[str, Any], change: Callable[[dict[str, Any]], None], path: Path) -> Path:
    data = copy.deepcopy(data)
    change(data)
    path.write_text(json.dumps(data).replace(json.dumps(DEEP), "[" * 5000 + "]" * 5000))
    return path


def first_result(data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = data["results"]["results"][0]
    return result


PROMPTFOO_CASES: dict[str, tuple[Callable[[dict[str, Any]], None], str | None, str]] = {
    "namedScores a number": (
        lambda d: first_result(d).update(namedScores=0.5),
        None, "results.results[0] (test returns-001): namedScores is a number, not an object",
    ),
    "namedScores a list, --metric": (
        lambda d: first_result(d).update(namedScores=[1, 0]),
        "faithfulness", "results.results[0] (test returns-001): namedScores is a list",
    ),
    "promptIdx a list": (
        lambda d: first_result(d).update(promptIdx=[0]),
        None, "results.results[0] (test returns-001): promptIdx is a list, not a number",
    ),
    "testCase a list": (
        lambda d: first_result(d).update(testCase=["returns-001"]),
        None, "results.results[0]: testCase is a list, not an object",
    ),
    "gradingResult a string": (
        lambda d: first_result(d).update(gradingResult="pass"),
        "faithfulness", "(test returns-001): gradingResult is a string, not an object",
    ),
    "a component a string": (
        lambda d: first_result(d)["gradingResult"].update(componentResults=["pass"]),
        "faithfulness", "gradingResult.componentResults[0] is a string, not an object",
    ),
    "a component's assertion a list": (
        lambda d: first_result(d)["gradingResult"]["componentResults"][0].update(assertion=[]),
        "faithfulness", "gradingResult.componentResults[0].assertion is a list, not an object",
    ),
    "nested 5,000 deep": (
        lambda d: first_result(d).update(response=DEEP),
        None, "JSON nested more than 256 levels deep",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(PROMPTFOO_CASES))
def test_a_malformed_promptfoo_result_is_one_line(
    case: str, human: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    change, metric, message = PROMPTFOO_CASES[case]
    path = broken(PROMPTFOO, change, tmp_path / "results.json")
    options = ["--from", "promptfoo", *(["--metric", metric] if metric else [])]
    assert message in calibrate_error(path, human, capsys, *options)


def first_case(data: dict[str, Any]) -> dict[str, Any]:
    case: dict[str, Any] = data["testCases"][0]
    return case


DEEPEVAL_CASES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "metricsData an object": (
        lambda d: first_case(d).update(metricsData={"name": "Faithfulness"}),
        "test case 'returns-001': metricsData is an object, not a list",
    ),
    "a metric a string": (
        lambda d: first_case(d).update(metricsData=["Faithfulness"]),
        "test case 'returns-001': metricsData[0] is a string, not an object",
    ),
    "a metric's name a list": (
        lambda d: first_case(d)["metricsData"][0].update(name=["Faithfulness"]),
        "test case 'returns-001': metricsData[0].name is a list, not a string",
    ),
    "a metric's name a number": (
        lambda d: first_case(d)["metricsData"][0].update(name=7),
        "test case 'returns-001': metricsData[0].name is a number, not a string",
    ),
}


@pytest.mark.parametrize("case", sorted(DEEPEVAL_CASES))
@pytest.mark.parametrize("say_from", [True, False], ids=["--from", "detected"])
def test_a_malformed_deepeval_case_is_one_line(
    case: str, say_from: bool, human: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    change, message = DEEPEVAL_CASES[case]
    path = broken(DEEPEVAL, change, tmp_path / "test_run.json")
    options = ["--metric", "faithfulness", *(["--from", "deepeval"] if say_from else [])]
    assert message in calibrate_error(path, human, capsys, *options)


def first_sample(data: dict[str, Any]) -> dict[str, Any]:
    sample: dict[str, Any] = data["samples"][0]
    return sample


INSPECT_CASES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "a sample a list": (
        lambda d: d["samples"].insert(0, ["returns-001"]),
        "samples[0]: the sample is a list, not an object",
    ),
    "scores a list": (
        lambda d: first_sample(d).update(scores=[{"value": "C"}]),
        "samples[0]: scores is a list, not an object",
    ),
    "samples an object": (
        lambda d: d.update(samples={"returns-001": {}}),
        "samples is an object, not a list",
    ),
    "nested 5,000 deep": (
        lambda d: first_sample(d).update(metadata=DEEP),
        "JSON nested more than 256 levels deep",
    ),
}


@pytest.mark.parametrize("case", sorted(INSPECT_CASES))
def test_a_malformed_inspect_json_log_is_one_line(
    case: str, human: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    change, message = INSPECT_CASES[case]
    path = broken(INSPECT, change, tmp_path / "log.json")
    assert message in calibrate_error(path, human, capsys, "--from", "inspect")


def test_a_ragas_csv_without_ids_says_so_and_gives_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ragas writes no id column, so its rows are row-1, row-2, ...; a human file labelled
    by the dataset's own ids shares none of them (issue 36 point 6). Before, the error said
    only "no id in common". The fix it gives (the ids as a first column) then calibrates."""
    ragas = DATA / "ragas" / "result.csv"
    ids = {r["row"]: r["id"] for r in csv.DictReader((DATA / "ragas" / "equivalent.csv").open())}
    human = tmp_path / "human.csv"
    labels = {
        r["id"]: r["label"] for r in csv.DictReader((REPO / "examples" / "human_labels.csv").open())
    }
    human.write_text("id,label\n" + "".join(f"{i},{labels[i]}\n" for i in ids.values()))
    options = ["--threshold", "0.75", "--positive-label", "faithful", "--bootstrap", "200"]
    args = ["calibrate", str(ragas), str(human), "-o", str(tmp_path / "rows"), *options]
    assert main(args, env={}) == 2
    said, line = capsys.readouterr().err.strip().splitlines()
    assert said.startswith(f"judge side: {ragas}: ragas output") and "id <- row number" in said
    assert line.startswith("error: ") and "no id in common" in line
    assert "the judge ids are row numbers (row-1 to row-37)" in line
    assert "a Ragas result CSV never has" in line and "df.insert(0, 'id', ids)" in line
    with ragas.open(newline="") as handle:
        table = list(csv.reader(handle))
    fixed = tmp_path / "result-with-ids.csv"
    with fixed.open("w", newline="") as handle:
        rows = [["id", *table[0]]] + [[ids[str(n)], *r] for n, r in enumerate(table[1:], 1)]
        csv.writer(handle).writerows(rows)
    args = ["calibrate", str(fixed), str(human), "-o", str(tmp_path / "fixed"), *options]
    assert main(args, env={}) == 0


def test_the_row_number_hint_is_given_only_when_one_side_is_numbered() -> None:
    from calibration.io.labels import LabelRecord, LabelSet, row_number_hint

    def side(*ids: str) -> LabelSet:
        return LabelSet(
            "f.csv", "label", [LabelRecord(i, "pass", {}, n) for n, i in enumerate(ids)]
        )

    assert "human ids are row numbers (row-3 to row-12)" in row_number_hint(
        side("a", "b"), side("row-12", "row-3")
    )
    assert row_number_hint(side("row-1"), side("row-2")) == ""  # both numbered: just apart
    assert row_number_hint(side("a"), side("b")) == ""
    assert row_number_hint(side("row-1", "x"), side("b")) == ""


def test_judge_compare_says_the_same_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`judge compare` reads every metric of a tool's file: the same one line, exit 2."""
    path = broken(PROMPTFOO, PROMPTFOO_CASES["namedScores a number"][0], tmp_path / "r.json")
    assert main(["compare", str(path), str(DATA / "promptfoo" / "results.json")], env={}) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"error: {path}: results.results[0] (test returns-001): namedScores is a number, "
        "not an object"
    )
