"""Issue 51, items 3 and 4, at the span level: which lone model calls are chained into one
conversation (and which are not), and a span attribute kept in a case's metadata
(`[tool.judge.traces] metadata`) as the key expected calls join on."""

from __future__ import annotations

import json

from judge.app.references import JoinCount, join_case, load_references
from judge.traces.conversation import cases_of_traces
from judge.traces.grouping import group_traces
from judge.traces.mapping import TraceMapping
from judge.traces.spans import Span


def _call(trace: str, start: int, inputs: list[dict], output: dict, **more: object) -> Span:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps([output]),
        **more,
    }
    return Span(
        trace, f"{trace[:12]}{start:04d}", None, "chat", start_ns=start, attributes=attributes
    )


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _asked(call_id: str, city: str) -> dict:
    function = {"name": "weather", "arguments": json.dumps({"city": city})}
    return {
        "role": "assistant",
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _result(call_id: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _by_trace(spans: list[Span]) -> dict[str, list[Span]]:
    out: dict[str, list[Span]] = {}
    for span in spans:
        out.setdefault(span.trace_id, []).append(span)
    return out


def _session(tag: str, t0: int, city: str) -> list[Span]:
    """A two-call agent session: the first call asks for the weather, the second answers."""
    opening = [_user(f"Weather in {city}?")]
    first = _call(f"{tag}1".ljust(32, "0"), t0, opening, _asked(f"c-{tag}", city))
    then = [*opening, _asked(f"c-{tag}", city), _result(f"c-{tag}", "sunny")]
    second = _call(
        f"{tag}2".ljust(32, "0"), t0 + 1, then, {"role": "assistant", "content": "Sunny."}
    )
    return [first, second]


def test_interleaved_sessions_chain_by_their_messages() -> None:
    a, b = _session("a", 10, "Oslo"), _session("b", 11, "Oslo")  # the same question, both
    grouping = group_traces(_by_trace([a[0], b[0], a[1], b[1]]), TraceMapping())
    assert sorted(sorted(s.trace_id[:2] for s in g.spans) for g in grouping.groups) == [
        ["a1", "a2"],
        ["b1", "b2"],
    ]
    assert grouping.line() == (
        "grouped 4 traces into 2 conversations by their messages (a model call's input "
        "continuing another's)"
    )


def test_a_call_continuing_nothing_stays_apart() -> None:
    lone = _call("c".ljust(32, "0"), 5, [_user("Hello")], {"role": "assistant", "content": "Hi"})
    grouping = group_traces(_by_trace([lone, *_session("a", 10, "Rome")]), TraceMapping())
    assert [g.traces for g in grouping.groups] == [1, 2]
    assert grouping.groups[0].how is None


def test_a_later_call_that_started_before_does_not_take_the_call() -> None:
    first, second = _session("a", 10, "Rome")
    early = Span(
        second.trace_id, second.span_id, None, "chat", start_ns=1, attributes=second.attributes
    )
    grouping = group_traces(_by_trace([first, early]), TraceMapping())
    assert [g.traces for g in grouping.groups] == [1, 1]


def test_a_mapped_span_attribute_is_the_key_expected_calls_join_on(tmp_path) -> None:
    spans = _session("a", 10, "Rome")
    spans[0].attributes["app.task_id"] = "task-9"
    mapping = TraceMapping(metadata=("app.task_id",))
    (case,) = cases_of_traces(spans, mapping, shape="conversations").cases
    assert case.metadata["app.task_id"] == "task-9"
    refs = tmp_path / "refs.jsonl"
    expected = [{"name": "weather", "arguments": {"city": "Rome"}}]
    refs.write_text(json.dumps({"app.task_id": "task-9", "expected_tool_calls": expected}) + "\n")
    count = JoinCount()
    joined = join_case(case, load_references(refs, "metadata.app.task_id"), count)
    assert [c.name for c in joined.expected_tool_calls or []] == ["weather"]
    assert joined.metadata["reference_key"] == "task-9" and count.joined == 1
