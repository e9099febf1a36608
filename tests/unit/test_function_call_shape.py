"""OpenAI's older message shape (issue 52, item 7): an assistant message with `function_call`
instead of `tool_calls`, answered by a `function` message, is read as the one call and the
result it is, so trajectory and tool_arguments see it (not a missing call)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from judge.engine.rules import RulesJudge
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.transcript import agent_calls


def legacy(name: str, arguments: Any, result: str, *, content: str | None = None) -> list[dict]:
    return [
        {"role": "assistant", "content": content, "function_call": {"name": name, "arguments": arguments}},
        {"role": "function", "name": name, "content": result},
    ]  # fmt: skip


def grade(rubric: str, row: dict[str, Any]) -> Any:
    outcome = RulesJudge().evaluate_sync(load_rubric(rubric), Case.model_validate(row))
    return outcome


SEARCH = {"type": "function", "function": {"name": "search_flights", "parameters": {
    "type": "object", "properties": {"origin": {"type": "string"}, "seats": {"type": "integer"}},
    "required": ["origin"]}}}  # fmt: skip


def test_a_function_call_is_the_one_call_it_is() -> None:
    messages = [
        {"role": "user", "content": "Two seats from Lisbon, then hotels."},
        *legacy("search_flights", '{"origin": "LIS", "seats": 2}', "3 flights"),
        *legacy("find_hotels", {"city": "Porto"}, "5 hotels", content="Looking up hotels."),
        {"role": "assistant", "content": "Done."},
    ]
    row = {"id": "legacy-1", "messages": messages}
    case = Case.model_validate(row)
    calls = agent_calls(case.messages)
    assert [(c.name, c.arguments) for c in calls] == [
        ("search_flights", {"origin": "LIS", "seats": 2}),
        ("find_hotels", {"city": "Porto"}),
    ]
    assert [m.role for m in case.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    expected = [{"name": "search_flights", "arguments": {"seats": 2, "origin": "LIS"}},
                {"name": "find_hotels", "arguments": {"city": "Porto"}}]  # fmt: skip
    outcome = grade("trajectory", {**row, "expected_tool_calls": expected})
    assert outcome.verdict.matched and outcome.verdict.missing == []


def test_old_and_new_shapes_in_one_conversation() -> None:
    modern = {
        "id": "t9",
        "type": "function",
        "function": {"name": "search_flights", "arguments": '{"seats": 1}'},
    }
    messages = [
        {"role": "user", "content": "Flights from Faro?"},
        *legacy("search_flights", json.dumps({"origin": "FAO"}), "none"),
        {"role": "assistant", "content": None, "tool_calls": [modern]},
        {"role": "tool", "tool_call_id": "t9", "content": "error"},
    ]  # fmt: skip
    outcome = grade("tool_arguments", {"id": "mixed", "messages": messages, "tools": [SEARCH]})
    verdict = outcome.verdict
    assert (verdict.calls, verdict.valid) == (2, 1)
    assert (
        verdict.invalid[0].index == 1
        and "'origin' is a required property" in verdict.invalid[0].errors[0]
    )


@pytest.mark.parametrize(
    ("messages", "said"),
    [
        ([{"role": "user", "content": "hi"}, {"role": "function", "name": "f", "content": "x"}],
         "a tool message with no tool call before it"),
        ([{"role": "assistant", "function_call": {"arguments": "{}"}}], "name"),
    ],
)  # fmt: skip
def test_a_broken_old_shape_is_refused_in_one_line(messages: list[dict], said: str) -> None:
    with pytest.raises(ValueError, match=said) as caught:
        Case.model_validate({"id": "broken", "messages": messages})
    assert "Traceback" not in str(caught.value)
