"""`tool_arguments`: each call's arguments against its tool's JSON schema (jsonschema), the
share valid, unknown tools named, and the cases it abstains on."""

from __future__ import annotations

from typing import Any

from judge.engine.rules import RulesJudge
from judge.rubric import load_rubric
from judge.schemas import Case

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}


def conversation(*calls: tuple[str, str], tools: Any = None) -> Case:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather?"}]
    for number, (name, arguments) in enumerate(calls):
        call = {"id": f"t{number}", "function": {"name": name, "arguments": arguments}}
        messages.append({"role": "assistant", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"t{number}", "content": "ok"})
    row: dict[str, Any] = {"id": "c", "messages": messages}
    if tools is not None:
        row["tools"] = tools
    return Case.model_validate(row)


def grade(case: Case) -> Any:
    rubric = load_rubric("tool_arguments")
    outcome = RulesJudge().evaluate_sync(rubric, case)
    scored = rubric.behaviour.score(rubric, outcome.verdict) if outcome.verdict else None
    return outcome, scored


def test_the_share_of_valid_calls_with_each_error_named() -> None:
    case = conversation(
        ("get_weather", '{"city": "Paris", "days": 3}'),
        ("get_weather", '{"days": 0}'),
        ("get_weather", "{city: Paris"),
        ("book_flight", '{"to": "Rome"}'),
        tools=[WEATHER],
    )
    outcome, scored = grade(case)
    verdict = outcome.verdict.model_dump(mode="json")
    assert (verdict["calls"], verdict["valid"]) == (4, 1)
    assert (scored.score, scored.label) == (0.25, "invalid")
    errors = {call["index"]: call["errors"] for call in verdict["invalid"]}
    assert any("'city' is a required property" in e for e in errors[1])
    assert any("$.days" in e and "minimum" in e for e in errors[1])
    assert errors[2] == ["arguments are not a JSON object"]
    assert verdict["unknown_tools"] == ["book_flight"]


def test_all_valid_is_the_label_valid() -> None:
    outcome, scored = grade(conversation(("get_weather", '{"city": "Oslo"}'), tools=[WEATHER]))
    assert (scored.score, scored.label) == (1.0, "valid")


def test_no_tools_or_no_calls_abstain_with_the_reason() -> None:
    outcome, _ = grade(conversation(("get_weather", '{"city": "Oslo"}')))
    assert outcome.status == "abstained" and "no tools" in outcome.error
    outcome, _ = grade(conversation(tools=[WEATHER]))
    assert outcome.status == "abstained" and "no tool call" in outcome.error


def test_a_schema_that_needs_a_remote_ref_is_never_fetched() -> None:
    remote = {"name": "f", "parameters": {"$ref": "https://example.invalid/schema.json"}}
    outcome, scored = grade(conversation(("f", "{}"), tools=[remote]))
    assert scored.label == "invalid"
    assert "never fetched" in outcome.verdict.invalid[0].errors[0]
