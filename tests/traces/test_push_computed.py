"""Issue 51, item 7: `judge traces push` sends a computed verdict (trajectory,
tool_arguments: no model gave it) with Phoenix's annotator kind CODE, not LLM, and an
explanation: the calls missing and unexpected, the invalid calls and why."""

from __future__ import annotations

import asyncio

from judge.engine.grader import Grader
from judge.engine.rules import RulesJudge
from judge.rubric import load_rubric
from judge.schemas import Case, GradedRecord
from judge.traces.phoenix import annotation_of


def graded(rubric: str, arguments: str, **extra: object) -> GradedRecord:
    call = {"id": "c1", "type": "function",
            "function": {"name": "book_flight", "arguments": arguments}}  # fmt: skip
    case = Case(
        id="0123456789abcdef",
        messages=[
            {"role": "user", "content": "Book BA117 on 1 May."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "booked"},
        ],
        **extra,
    )
    return asyncio.run(Grader(RulesJudge(), load_rubric(rubric)).grade_case(case))


def test_a_trajectory_mismatch_is_a_code_annotation_naming_the_calls() -> None:
    expected = [{"name": "book_flight", "arguments": {"flight": "BA117", "date": "2026-05-01"}}]
    record = graded("trajectory", '{"flight": "BA117", "date": "2026-05-10"}',
                    expected_tool_calls=expected)  # fmt: skip
    assert record.label == "mismatch"
    annotation = annotation_of(record)
    assert annotation["annotator_kind"] == "CODE"
    explanation = annotation["result"]["explanation"]
    assert 'missing: book_flight({"date": "2026-05-01", "flight": "BA117"})' in explanation
    assert 'unexpected: book_flight({"date": "2026-05-10", "flight": "BA117"})' in explanation


def test_a_trajectory_match_says_what_it_found() -> None:
    expected = [{"name": "book_flight", "arguments": {"flight": "BA117"}}]
    record = graded("trajectory", '{"flight": "BA117"}', expected_tool_calls=expected)
    annotation = annotation_of(record)
    assert annotation["annotator_kind"] == "CODE" and annotation["result"]["label"] == "match"
    assert annotation["result"]["explanation"] == (
        "1 of 1 expected calls made, none missing or unexpected"
    )


def test_an_invalid_call_names_its_schema_errors() -> None:
    tools = [{"type": "function", "function": {"name": "book_flight", "parameters": {
        "type": "object", "properties": {"flight": {"type": "string"}},
        "required": ["flight"], "additionalProperties": False}}}]  # fmt: skip
    record = graded("tool_arguments", '{"flight": 117}', tools=tools)
    annotation = annotation_of(record)
    assert annotation["annotator_kind"] == "CODE"
    assert annotation["result"]["explanation"].startswith('invalid: book_flight({"flight": 117}) (')
