"""Test support: one agent run traced as an app would trace it, in OpenInference's conventions
or the OpenTelemetry GenAI ones. The agent searches flights, books one, and answers: two
tool calls in two model turns, then the final answer. Start times are given, so the order
of the spans is the order below whatever the clock does."""

from __future__ import annotations

import json
from dataclasses import dataclass

from opentelemetry.sdk.trace import TracerProvider

SYSTEM = "You book flights. Use the tools."
QUESTION = "Book me the cheapest flight from Paris to Rome on 2026-12-20."
FINAL = "Booked AZ 331 (Paris to Rome, 2026-12-20, 89 EUR); confirmation K7Q2."
TOOL_SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": "search_flights",
            "parameters": {
                "type": "object",
                "properties": {"origin": {"type": "string"}, "destination": {"type": "string"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book_flight",
            "parameters": {"type": "object", "properties": {"flight": {"type": "string"}}},
        },
    },
]


@dataclass(frozen=True)
class Step:
    """One tool call the agent makes, and what the tool returns."""

    call_id: str
    name: str
    arguments: dict[str, str]
    result: str


STEPS = (
    Step(
        "call_search",
        "search_flights",
        {"origin": "CDG", "destination": "FCO", "date": "2026-12-20"},
        '[{"flight": "AZ 331", "price_eur": 89}, {"flight": "AF 1004", "price_eur": 132}]',
    ),
    Step("call_book", "book_flight", {"flight": "AZ 331"}, '{"confirmation": "K7Q2"}'),
)
T0 = 1_796_000_000_000_000_000  # Unix ns; each span starts a second after the one before


def trace_openinference(
    provider: TracerProvider, *, ids: bool = True, t0: int = T0
) -> tuple[str, str]:
    """The run in OpenInference's conventions: an AGENT root, an LLM span a turn (flattened
    messages, the tool calls in the output), a TOOL span a call. (trace id, root span id)"""
    tracer = provider.get_tracer("agent-app")
    history = [("system", SYSTEM, None), ("user", QUESTION, None)]
    with tracer.start_as_current_span("agent", start_time=t0) as root:
        root.set_attribute("openinference.span.kind", "AGENT")
        root.set_attribute("input.value", QUESTION)
        for turn, step in enumerate([*STEPS, None]):
            with tracer.start_as_current_span("llm", start_time=t0 + (2 * turn + 1) * 10**9) as llm:
                llm.set_attribute("openinference.span.kind", "LLM")
                _flat(llm, "llm.input_messages", history, ids=ids)
                for n, schema in enumerate(TOOL_SCHEMAS):
                    llm.set_attribute(f"llm.tools.{n}.tool.json_schema", json.dumps(schema))
                out = "llm.output_messages.0.message"
                llm.set_attribute(f"{out}.role", "assistant")
                if step is None:
                    llm.set_attribute(f"{out}.content", FINAL)
                    llm.set_attribute("gen_ai.response.id", "chatcmpl-final")
                    continue
                call = f"{out}.tool_calls.0.tool_call"
                if ids:
                    llm.set_attribute(f"{call}.id", step.call_id)
                llm.set_attribute(f"{call}.function.name", step.name)
                llm.set_attribute(f"{call}.function.arguments", json.dumps(step.arguments))
            history += [("assistant", None, step), ("tool", step.result, step)]
            with tracer.start_as_current_span(
                step.name, start_time=t0 + (2 * turn + 2) * 10**9
            ) as tool:
                tool.set_attribute("openinference.span.kind", "TOOL")
                tool.set_attribute("tool.name", step.name)
                tool.set_attribute("input.value", json.dumps(step.arguments))
                tool.set_attribute("output.value", step.result)
                if ids:
                    tool.set_attribute("tool_call.id", step.call_id)
        root.set_attribute("output.value", FINAL)
        context = root.get_span_context()
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def _flat(span: object, path: str, history: list, *, ids: bool) -> None:
    for n, (role, content, step) in enumerate(history):
        base = f"{path}.{n}.message"
        span.set_attribute(f"{base}.role", role)  # type: ignore[attr-defined]
        if content is not None:
            span.set_attribute(f"{base}.content", content)  # type: ignore[attr-defined]
        if role == "assistant":
            call = f"{base}.tool_calls.0.tool_call"
            if ids:
                span.set_attribute(f"{call}.id", step.call_id)  # type: ignore[attr-defined]
            span.set_attribute(f"{call}.function.name", step.name)  # type: ignore[attr-defined]
            span.set_attribute(f"{call}.function.arguments", json.dumps(step.arguments))  # type: ignore[attr-defined]
        if role == "tool" and ids:
            span.set_attribute(f"{base}.tool_call_id", step.call_id)  # type: ignore[attr-defined]


def trace_genai(provider: TracerProvider, *, ids: bool = True, t0: int = T0) -> tuple[str, str]:
    """The run in the GenAI conventions: an invoke_agent root, a chat span a turn (JSON
    messages in parts, system instructions apart), an execute_tool span a call."""
    tracer = provider.get_tracer("agent-app")
    history: list[dict] = [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
    with tracer.start_as_current_span("invoke_agent travel", start_time=t0) as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "travel")
        for turn, step in enumerate([*STEPS, None]):
            start = t0 + (2 * turn + 1) * 10**9
            with tracer.start_as_current_span("chat gpt-4o", start_time=start) as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute(
                    "gen_ai.system_instructions", json.dumps([{"type": "text", "content": SYSTEM}])
                )
                chat.set_attribute("gen_ai.tool.definitions", json.dumps(TOOL_SCHEMAS))
                chat.set_attribute("gen_ai.input.messages", json.dumps(history))
                if step is None:
                    reply = {"role": "assistant", "parts": [{"type": "text", "content": FINAL}]}
                    chat.set_attribute("gen_ai.response.id", "chatcmpl-final")
                else:
                    part = {"type": "tool_call", "name": step.name, "arguments": step.arguments}
                    reply = {"role": "assistant", "parts": [{**part, "id": step.call_id}]}
                    if not ids:
                        reply = {"role": "assistant", "parts": [part]}
                chat.set_attribute("gen_ai.output.messages", json.dumps([reply]))
            if step is None:
                continue
            response = {"type": "tool_call_response", "response": step.result}
            if ids:
                response["id"] = step.call_id
            history += [reply, {"role": "tool", "parts": [response]}]
            start = t0 + (2 * turn + 2) * 10**9
            with tracer.start_as_current_span(
                f"execute_tool {step.name}", start_time=start
            ) as tool:
                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                tool.set_attribute("gen_ai.tool.name", step.name)
                tool.set_attribute("gen_ai.tool.call.arguments", json.dumps(step.arguments))
                tool.set_attribute("gen_ai.tool.call.result", step.result)
                if ids:
                    tool.set_attribute("gen_ai.tool.call.id", step.call_id)
        context = root.get_span_context()
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"
