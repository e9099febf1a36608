"""The span -> conversation mapping on hand-made spans: uneven traces (a tool run no model
call recorded, a parent cycle, a repeated span id, a deep chain), later user turns, the
overridable attribute names, and which traces become conversations."""

from __future__ import annotations

import json

import pytest

from judge.errors import UsageError
from judge.traces.conversation import cases_of_traces, shape_for
from judge.traces.mapping import TraceMapping
from judge.traces.spans import Span

TRACE = "ab" * 16


def _span(span_id: str, parent: str | None, start: int, **attributes: object) -> Span:
    return Span(TRACE, span_id, parent, span_id, start_ns=start, attributes=dict(attributes))


def _llm(span_id: str, parent: str, start: int, inputs: list, output: dict) -> Span:
    return _span(
        span_id,
        parent,
        start,
        **{
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps([output]),
        },
    )


def _text(role: str, text: str) -> dict:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _tool(span_id: str, parent: str, start: int, name: str, result: str, **more: object) -> Span:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    return _span(
        span_id, parent, start, **attributes, **{"gen_ai.tool.call.result": result}, **more
    )


def _messages(spans: list[Span], **options: object) -> list[dict]:
    (case,) = cases_of_traces(spans, **options).cases  # type: ignore[arg-type]
    return [m.model_dump(exclude_none=True) for m in case.messages or []]


def test_a_tool_run_no_model_call_recorded_gets_a_call() -> None:
    """The model's output says nothing of the call (some instrumentations leave it out): the
    tool span's own arguments make the call, in the assistant turn before the result."""
    spans = [
        _span("a" * 16, None, 0, **{"gen_ai.operation.name": "invoke_agent"}),
        _llm("b" * 16, "a" * 16, 1, [_text("user", "Weather in Oslo?")], _text("assistant", "")),
        _tool(
            "c" * 16,
            "a" * 16,
            2,
            "weather",
            "-3 C",
            **{"gen_ai.tool.call.arguments": '{"city": "Oslo"}'},
        ),
        _llm(
            "d" * 16, "a" * 16, 3, [_text("user", "Weather in Oslo?")], _text("assistant", "-3 C.")
        ),
    ]
    messages = _messages(spans)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    (call,) = messages[1]["tool_calls"]
    assert call["function"] == {"name": "weather", "arguments": '{"city": "Oslo"}'}
    assert call["id"] == messages[2]["tool_call_id"] == "call_" + "c" * 16


def test_a_parent_cycle_and_a_repeated_id_neither_loop_nor_repeat() -> None:
    """Two spans each other's parent (no topmost span: the earliest stands in) and one id
    written twice (the first kept): one case, each message once."""
    a, b = "1" * 16, "2" * 16
    spans = [
        _span(a, b, 0, **{"openinference.span.kind": "AGENT"}),
        _span(b, a, 1, **{"openinference.span.kind": "CHAIN"}),
        _llm("3" * 16, b, 2, [_text("user", "Hi")], _text("assistant", "Hello")),
        _llm("3" * 16, b, 2, [_text("user", "Hi")], _text("assistant", "Hello")),
    ]
    assert _messages(spans) == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
    ]


def test_a_deep_chain_is_walked_without_recursion() -> None:
    depth = 900  # below the walk's bound, far past Python's recursion limit if it recursed
    ids = [f"{n:016x}" for n in range(1, depth + 2)]
    spans = [_span(ids[0], None, 0, **{"openinference.span.kind": "AGENT"})]
    spans += [
        _span(ids[n], ids[n - 1], n, **{"openinference.span.kind": "CHAIN"})
        for n in range(1, depth)
    ]
    spans.append(
        _llm(ids[depth], ids[depth - 1], depth, [_text("user", "Q")], _text("assistant", "A"))
    )
    assert [m["role"] for m in _messages(spans)] == ["user", "assistant"]


def test_a_later_user_turn_is_added_once() -> None:
    root = "a" * 16
    first = [_text("user", "Find a hotel.")]
    second = [*first, _text("assistant", "Where?"), _text("user", "In Lyon.")]
    spans = [
        _span(root, None, 0, **{"gen_ai.operation.name": "invoke_agent"}),
        _llm("b" * 16, root, 1, first, _text("assistant", "Where?")),
        _llm("c" * 16, root, 2, second, _text("assistant", "Hotel Lumière.")),
    ]
    assert [m["content"] for m in _messages(spans)] == [
        "Find a hotel.",
        "Where?",
        "In Lyon.",
        "Hotel Lumière.",
    ]


def test_the_attribute_names_can_be_overridden() -> None:
    """An app with its own span kinds and tool attributes, mapped in [tool.judge.traces]."""
    mapping = TraceMapping.from_table(
        {"tool_kinds": "FUNCTION", "tool_name": "fn.name", "tool_result": ["fn.output"]},
        "judge.toml traces",
    )
    root = "a" * 16
    spans = [
        _span(root, None, 0, **{"openinference.span.kind": "CHAIN", "input.value": "Add 2 and 3."}),
        _span(
            "b" * 16,
            root,
            1,
            **{"openinference.span.kind": "FUNCTION", "fn.name": "add", "fn.output": "5"},
        ),
    ]
    messages = _messages(spans, mapping=mapping)
    assert [(m["role"], m.get("content")) for m in messages] == [
        ("user", "Add 2 and 3."),
        ("assistant", None),
        ("tool", "5"),
    ]
    assert messages[1]["tool_calls"][0]["function"]["name"] == "add"


def test_which_traces_become_conversations() -> None:
    assert shape_for((), "auto") == "auto"  # decided per trace
    assert shape_for(("goal", "messages"), "auto") == "conversations"
    assert shape_for(("question", "contexts", "answer"), "auto") == "answers"
    assert shape_for(("question", "answer"), "conversations") == "conversations"
    with pytest.raises(UsageError, match="--as 'dialogues'"):
        shape_for((), "dialogues")


def test_a_conversation_lacking_what_the_rubric_needs_is_named() -> None:
    """A rubric reading `tools` on a trace that recorded no tool definitions."""
    root = "a" * 16
    spans = [
        _span(root, None, 0, **{"gen_ai.operation.name": "invoke_agent"}),
        _llm("b" * 16, root, 1, [_text("user", "Hi")], _text("assistant", "Hello")),
    ]
    extraction = cases_of_traces(spans, required=("messages", "tools"))
    assert extraction.cases == []
    assert [str(m) for m in extraction.missing] == [f"trace {TRACE} span {root}: no tools"]


def test_openai_shaped_json_messages_are_read_too() -> None:
    """Some emitters put OpenAI chat messages (content, tool_calls) in the GenAI attribute."""
    root = "a" * 16
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    inputs = [{"role": "user", "content": [{"type": "text", "text": "Look it up."}]}]
    later = [*inputs, {"role": "assistant", "tool_calls": [call]}]
    later.append({"role": "tool", "tool_call_id": "c1", "content": "found"})
    spans = [
        _span(root, None, 0, **{"gen_ai.operation.name": "invoke_agent"}),
        _llm("b" * 16, root, 1, inputs, {"role": "assistant", "tool_calls": [call]}),
        _llm("c" * 16, root, 2, later, {"role": "assistant", "content": "Found it."}),
    ]
    messages = _messages(spans)
    assert [(m["role"], m.get("content")) for m in messages] == [
        ("user", "Look it up."),
        ("assistant", None),
        ("tool", "found"),  # no tool span: the result the next model call was given
        ("assistant", "Found it."),
    ]
    assert messages[1]["tool_calls"][0]["id"] == messages[2]["tool_call_id"] == "c1"


def test_an_agent_span_alone_is_its_input_and_output() -> None:
    """No model or tool span recorded: the agent span's own input and output are the
    conversation; a span of no known kind alone is no request at all."""
    spans = [
        _span(
            "a" * 16,
            None,
            0,
            **{"openinference.span.kind": "AGENT"},
            **{"input.value": "Hi", "output.value": "Hello"},
        ),
        Span("cd" * 16, "b" * 16, None, "setup", start_ns=1, attributes={"input.value": "x"}),
    ]
    assert _messages(spans, shape="conversations") == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
    ]


def test_a_wrapped_model_call_is_one_call_and_a_tool_under_it_counts() -> None:
    """A framework's LLM span around the SDK's LLM span (the same messages twice) is one
    model call; a tool span that started with the call is still its answer, after it."""
    root, outer, inner = "a" * 16, "b" * 16, "c" * 16
    call = {"type": "tool_call", "id": "t1", "name": "clock", "arguments": {}}
    ask = [_text("user", "Time?")]
    spans = [
        _span(root, None, 0, **{"gen_ai.operation.name": "invoke_agent"}),
        _llm(outer, root, 1, ask, {"role": "assistant", "parts": [call]}),
        _llm(inner, outer, 1, ask, {"role": "assistant", "parts": [call]}),
        _tool("1" * 16, inner, 1, "clock", "12:00", **{"gen_ai.tool.call.id": "t1"}),
        _llm("e" * 16, root, 2, ask, _text("assistant", "Noon.")),
    ]
    assert [(m["role"], m.get("content")) for m in _messages(spans)] == [
        ("user", "Time?"),
        ("assistant", None),
        ("tool", "12:00"),
        ("assistant", "Noon."),
    ]


def test_a_root_span_id_in_two_traces_gives_one_case() -> None:
    root = "a" * 16
    spans = [
        _span(root, None, 0, **{"gen_ai.operation.name": "invoke_agent", "input.value": "Q1"}),
        _llm("b" * 16, root, 1, [_text("user", "Q1")], _text("assistant", "A1")),
    ]
    again = [
        Span("ef" * 16, s.span_id, s.parent_id, s.name, s.start_ns + 5, s.attributes) for s in spans
    ]
    extraction = cases_of_traces([*spans, *again])
    assert [c.id for c in extraction.cases] == [root]
    assert extraction.cases[0].metadata["trace_id"] == TRACE
