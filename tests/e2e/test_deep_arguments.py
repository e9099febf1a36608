"""Arguments nested past MAX_ARGUMENT_DEPTH stay the text they were (issue 52, item 3): they
can only mismatch, as non-JSON text does, so every record written reads back, a rerun
resumes from it, and the service answers 200 (not 500)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.cli import main
from judge.engine.records import scan_records
from judge.kinds.tool_arguments import TOO_DEEP
from judge.service import create_app
from judge.service.config import ServiceConfig
from judge.transcript import MAX_ARGUMENT_DEPTH, ExpectedCall, parse_arguments
from tests.e2e.test_trajectory_cli import conversation
from tests.helpers import read_jsonl, write_jsonl

TOOL = {"type": "function", "function": {"name": "store", "parameters": {"type": "object"}}}


def nested(depth: int, leaf: Any = 1) -> Any:
    """An object `depth` levels deep: {"k": {"k": ... leaf}} (built without recursion)."""
    value = leaf
    for _ in range(depth):
        value = {"k": value}
    return value


def deep_text(depth: int) -> str:
    return '{"k": ' * depth + "0" + "}" * depth  # no recursion to write it either


@pytest.mark.parametrize("depth", [MAX_ARGUMENT_DEPTH + 1, 63, 200, 950, 5000])
def test_deep_argument_text_is_kept_as_text(depth: int) -> None:
    text = deep_text(depth)
    assert parse_arguments(text) == text
    assert ExpectedCall(name="store", arguments=text).arguments == text


def test_arguments_at_the_limit_are_read() -> None:
    text = deep_text(MAX_ARGUMENT_DEPTH)
    assert isinstance(parse_arguments(text), dict)


def test_an_expected_object_nested_past_the_limit_becomes_its_text() -> None:
    value = nested(MAX_ARGUMENT_DEPTH + 5)
    call = ExpectedCall(name="store", arguments=value)
    assert isinstance(call.arguments, str) and json.loads(call.arguments) == value


def deep_cases(rubric_tools: bool) -> list[dict[str, Any]]:
    rows = []
    for number, depth in enumerate((40, 66, 300, 940)):
        row = conversation(
            f"deep-{depth}",
            [("store", deep_text(depth)), ("store", {"k": number})],
            [("store", nested(min(depth, 55)))],  # inside the input's 64 levels
        )
        if rubric_tools:
            row["tools"] = [TOOL]
        rows.append(row)
    return rows


@pytest.mark.parametrize("rubric", ["trajectory", "tool_arguments"])
def test_records_of_deep_arguments_read_back_and_resume(tmp_path: Path, rubric: str) -> None:
    source, out = tmp_path / "deep.jsonl", tmp_path / "graded.jsonl"
    write_jsonl(source, deep_cases(rubric == "tool_arguments"))
    assert main(["grade", str(source), "--rubric", rubric, "--offline", "-o", str(out)]) == 0
    held = [data for _, data in scan_records(out)]  # the records reader's own bounds
    assert [r["id"] for r in held] == [f"deep-{d}" for d in (40, 66, 300, 940)]
    assert all(r["status"] == "ok" for r in held)
    if rubric == "tool_arguments":  # the deep call is invalid and says why; the other fits
        said = [[(c["index"], c["errors"]) for c in r["verdict"]["invalid"]] for r in held]
        assert said == [[(0, [TOO_DEEP])]] * 4
    summary = tmp_path / "summary.json"
    again = ["grade", str(source), "--rubric", rubric, "--offline", "-o", str(out)]
    assert main([*again, "--summary", str(summary)]) == 0  # a rerun resumes its own file
    assert json.loads(summary.read_text())["run"]["kept"] == 4
    assert read_jsonl(out) == held


def test_the_service_answers_deep_arguments(tmp_path: Path) -> None:
    config = ServiceConfig(data_dir=tmp_path / "data")
    with TestClient(create_app(config)) as api:
        for rubric in ("trajectory", "tool_arguments"):
            body = {"rubric": rubric, "cases": deep_cases(True)}
            response = api.post("/v1/grade", json=body)
            assert response.status_code == 200, response.text[:300]
            labels = [r["label"] for r in response.json()["records"]]
            assert labels == ["mismatch" if rubric == "trajectory" else "invalid"] * 4
