"""Test support (Reply re-exported for the tests): ten agent sessions run as a user's first setup runs them, the openai SDK
in a loop, instrumented by openinference-instrumentation-openai alone (one LLM span a model
call, each its own trace: no agent span, no tool spans, no session id), against the
loopback test server scripted with each turn's tool calls. `with_agent_span` wraps each
session in an AGENT span (the few lines docs/guides/traces.md shows), `with_tool_spans`
adds a TOOL span a tool run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import openai
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import ReadableSpan

from judge.testing import FakeOpenAIServer, Reply

__all__ = ["Reply", "instrumented", "run_sessions", "sessions"]
from tests.traces.otlp_support import rag_provider

SYSTEM = "You are the airline's assistant. Use the tools; confirm what you did."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
        },
    }
    for name in ("get_reservation", "cancel_reservation", "get_user")
]


@dataclass(frozen=True)
class Session:
    """One user's session: the question, the tool calls in turns (a turn may call two
    tools at once), and the final answer. The opening is the same in several sessions."""

    question: str
    turns: tuple[tuple[tuple[str, str], ...], ...]
    answer: str


def sessions() -> list[Session]:
    out = []
    for n in range(10):
        code = f"R{n:03d}"
        question = "Cancel my booking, please." if n % 3 == 0 else f"Cancel reservation {code}."
        turns: list[tuple[tuple[str, str], ...]] = [(("get_reservation", code),)]
        if n % 2:
            turns.append((("get_user", f"u{n}"), ("cancel_reservation", code)))
        elif n % 4 == 0:
            turns.append((("cancel_reservation", code),))
        out.append(Session(question, tuple(turns), f"Reservation {code} is cancelled."))
    return out


def _result(name: str, key: str) -> str:
    if name == "cancel_reservation" and key.endswith("8"):
        return "Error: reservation already flown"
    return json.dumps({"tool": name, "id": key, "status": "ok"})


def run_sessions(
    *, with_agent_span: bool = False, with_tool_spans: bool = False, count: int = 10
) -> list[ReadableSpan]:
    """The spans of the first `count` sessions, run one after the other
    (examples/traces/sdk-agent.otlp.jsonl is `count=3`, SDK alone)."""
    provider, exporter = rag_provider("airline-agent")
    tracer = provider.get_tracer("airline-agent")
    with instrumented(provider) as (client, server):
        for number, session in enumerate(sessions()[:count]):
            with _agent_span(tracer, session, with_agent_span):
                _run(client, server, tracer, number, session, with_tool_spans)
    return list(exporter.get_finished_spans())


@contextmanager
def instrumented(provider) -> Iterator[tuple[openai.OpenAI, FakeOpenAIServer]]:  # type: ignore[no-untyped-def]
    """An openai client on the loopback test server, its calls traced by OpenInference's
    instrumentor into `provider` (shut down after: every span flushed)."""
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with FakeOpenAIServer() as server:
            client = openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0)
            yield client, server
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


@contextmanager
def _agent_span(tracer, session: Session, on: bool) -> Iterator[None]:  # type: ignore[no-untyped-def]
    if not on:
        yield
        return
    with tracer.start_as_current_span("airline-agent") as span:
        span.set_attribute("openinference.span.kind", "AGENT")
        span.set_attribute("input.value", session.question)
        yield
        span.set_attribute("output.value", session.answer)


def _run(client, server, tracer, number: int, session: Session, tool_spans: bool) -> None:  # type: ignore[no-untyped-def]
    messages: list[dict] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": session.question},
    ]
    for turn, calls in enumerate(session.turns):
        tool_calls = tuple(
            {
                "id": f"call_{number}_{turn}_{k}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps({"id": key})},
            }
            for k, (name, key) in enumerate(calls)
        )
        server.script(Reply(tool_calls=tool_calls, finish_reason="tool_calls"))
        reply = client.chat.completions.create(model="agent", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls or []:
            key = json.loads(call.function.arguments)["id"]
            result = _result(call.function.name, key)
            if tool_spans:
                with tracer.start_as_current_span(call.function.name) as span:
                    span.set_attribute("openinference.span.kind", "TOOL")
                    span.set_attribute("tool.name", call.function.name)
                    span.set_attribute("tool_call.id", call.id)
                    span.set_attribute("input.value", call.function.arguments)
                    span.set_attribute("output.value", result)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    server.script(Reply(content=session.answer))
    client.chat.completions.create(model="agent", messages=messages, tools=TOOLS)
