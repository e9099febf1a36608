"""A pulled agent trace's `llm.tools` carries the tool schemas `tool_arguments` checks
(issue 52, items 1 and 2): a schema that points at a host is not fetched, and one with a
catastrophic pattern ends at once with the true answer, through `judge traces pull` and
`judge grade` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from tests.traces import agent_support
from tests.traces.test_conversations import CONVENTIONS, _agent_file, _lines
from tests.unit.test_tool_schema_bounds import recorder  # noqa: F401 - the fixture


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_hostile_schemas_in_a_trace_are_bounded_and_closed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    recorder: tuple[str, list[str]],  # noqa: F811 - the fixture
    convention: str,
) -> None:
    base, hits = recorder
    hostile: list[dict[str, Any]] = [
        {"type": "function", "function": {"name": "search_flights", "parameters": {
            "type": "object",
            "properties": {"origin": {"type": "string", "pattern": "^([A-Z]+[A-Z]?)+$"}},
        }}},
        {"type": "function", "function": {"name": "book_flight", "parameters": {
            "$ref": f"{base}/tools/book_flight.schema.json"}}},
    ]  # fmt: skip
    monkeypatch.setattr(agent_support, "TOOL_SCHEMAS", hostile)
    path, _ = _agent_file(tmp_path, CONVENTIONS[convention])
    cases, graded = tmp_path / "cases.jsonl", tmp_path / "graded.jsonl"
    assert main(["traces", "pull", "--otlp", str(path), "-o", str(cases)]) == 0
    assert _lines(cases)[0]["tools"] == hostile
    argv = ["grade", str(cases), "--rubric", "tool_arguments", "--offline", "-o", str(graded)]
    assert main(argv, env={}) == 0
    (record,) = _lines(graded)
    assert hits == []
    invalid = {c["name"]: c["errors"] for c in record["verdict"]["invalid"]}
    assert list(invalid) == ["book_flight"]  # "CDG" matches the pattern: the true answer
    assert invalid["book_flight"][0].startswith("not checkable: $ref ")
    assert json.dumps(record).count("never fetched") == 1
