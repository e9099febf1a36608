"""Issue 35: the calibrate, compare, gate and align jobs of `judge.app` take a typed request
and return a typed result; they never print, never exit, and bad input is the project's
`UsageError` (which the command line turns into exit 2, as before)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from judge.app.calibrate import CalibrateResult, calibrate_labels, foreign_judge_side, plan_labels
from judge.app.compare import check_compare_request
from judge.app.gate import GateResult, gate_judges
from judge.cli import build_parser
from judge.cli._diagnosis import GRID
from judge.cli._parser import command_parsers
from judge.cli._requests import CalibrateRequest, CompareRequest, GateRequest, request_from
from judge.engine.diagnosis import CELLS
from judge.errors import UsageError
from tests.helpers import REPO

PARSERS = command_parsers(build_parser())
PROMPTFOO = REPO / "tests" / "data" / "foreign" / "real" / "promptfoo" / "results.json"


def _request(kind: type, command: str, *argv: object):  # noqa: ANN202
    args: argparse.Namespace = PARSERS[command].parse_args([str(a) for a in argv])
    return request_from(kind, args)


@pytest.fixture
def labels(tmp_path: Path) -> tuple[Path, Path]:
    human = ["pass", "fail"] * 15
    judge = list(human)
    judge[0], judge[3] = "fail", "pass"
    rows = "".join(f"c{i},{v}\n" for i, v in enumerate(judge))
    (tmp_path / "judge.csv").write_text("id,label\n" + rows, "utf-8")
    rows = "".join(f"c{i},{v}\n" for i, v in enumerate(human))
    (tmp_path / "human.csv").write_text("id,label\n" + rows, "utf-8")
    return tmp_path / "judge.csv", tmp_path / "human.csv"


def test_calibrate_returns_its_result_and_prints_nothing(labels, tmp_path, capsys) -> None:
    request = _request(
        CalibrateRequest, "calibrate", *labels, "-o", tmp_path / "r", "--bootstrap", "50",
        "--fail-if", "kappa < 0.99",
    )  # fmt: skip
    done = calibrate_labels(request)
    assert isinstance(done, CalibrateResult)
    assert done.result["n"] == 30 and done.gate_failed
    assert [p.name for p in done.paths] == ["calibration.json", "report.md", "confusion.png"]
    assert json.loads((tmp_path / "r" / "calibration.json").read_text())["gate"]["failed"]
    assert capsys.readouterr() == ("", "")


def test_calibrate_bad_input_is_a_usage_error(labels, tmp_path) -> None:
    request = _request(CalibrateRequest, "calibrate", labels[0], tmp_path / "nope.csv")
    with pytest.raises(UsageError, match="nope.csv"):
        calibrate_labels(request)
    with pytest.raises(UsageError, match="JUDGE_LABELS and HUMAN_LABELS are required"):
        calibrate_labels(_request(CalibrateRequest, "calibrate", labels[0]))


def test_plan_is_a_typed_result(labels) -> None:
    plan = plan_labels(_request(CalibrateRequest, "calibrate", *labels, "--plan"))
    assert plan.labelled == 30 and plan.width_now is not None and plan.describe
    alone = plan_labels(_request(CalibrateRequest, "calibrate", "--plan", "--kappa", "0.6"))
    assert alone.labelled is None and "labelled cases give" in alone.describe


def test_another_tools_output_is_staged_and_described_not_printed(tmp_path, capsys) -> None:
    request = _request(CalibrateRequest, "calibrate", PROMPTFOO, "h.csv", "-o", tmp_path / "r")
    side = foreign_judge_side(request)
    assert (
        side.described
        and side.request.judge_labels == tmp_path / "r" / "judge-side.promptfoo.jsonl"
    )
    assert side.request.judge_labels.is_file()
    assert capsys.readouterr() == ("", "")


def test_gate_returns_lines_and_raises_on_a_bad_file(labels, tmp_path, capsys) -> None:
    judge, human = labels
    done = gate_judges(
        _request(GateRequest, "gate", "--baseline", judge, "--candidate", judge, "--labels", human)
    )
    assert isinstance(done, GateResult) and not done.failed and done.lines
    assert capsys.readouterr() == ("", "")
    (tmp_path / "x.csv").write_text("name,label\nc0,pass\n", "utf-8")
    request = _request(
        GateRequest,
        "gate",
        "--baseline",
        judge,
        "--candidate",
        judge,
        "--labels",
        tmp_path / "x.csv",
    )
    with pytest.raises(UsageError, match="x.csv"):
        gate_judges(request)


def test_compare_checks_its_request_before_reading(tmp_path) -> None:
    with pytest.raises(UsageError, match="two runs or more"):
        check_compare_request(_request(CompareRequest, "compare", tmp_path))
    with pytest.raises(UsageError, match="--alpha"):
        check_compare_request(_request(CompareRequest, "compare", "a", "b", "--alpha", "2"))


def test_the_diagnosis_table_places_each_cell_where_the_engine_defines_it() -> None:
    placed = {
        name: (r, g)
        for r, names in GRID.items()
        for g, name in zip(("high", "low"), names, strict=True)
    }
    assert placed == {name: (r, g) for name, (r, g, _) in CELLS.items()}


def test_align_says_whose_records_in_its_result_not_on_the_terminal(tmp_path, capsys) -> None:
    from judge.app.align import RULES_MODEL, records_judge
    from judge.rubric import load_rubric

    record = {"id": "c0", "rubric": "faithfulness", "judge": {"model": RULES_MODEL}, "label": "x"}
    records = tmp_path / "r.jsonl"
    records.write_text(json.dumps(record) + "\n", "utf-8")
    judge = records_judge(records, load_rubric("faithfulness"))
    assert judge.model is None and judge.warning and "offline rules judge" in judge.warning
    assert capsys.readouterr() == ("", "")
    with pytest.raises(UsageError, match="graded with rubric 'faithfulness', not 'relevance'"):
        records_judge(records, load_rubric("relevance"))
