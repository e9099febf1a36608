"""Traces -> conversations, however the app was instrumented.

An agent traced with an agent span is one trace a session. The usual first setup, the
openai SDK instrumented alone, is not: each model call is a trace of its own, with no agent
span, no tool span and no session id. Traces are put together into conversations so:

1. traces whose spans carry one `session.id` (OpenInference) or `gen_ai.conversation.id`
   (the GenAI conventions; `conversation_id` in `[tool.judge.traces]`) are one conversation;
2. without either, a trace that is a model call alone (its topmost span a model call, no
   agent or tool span in it) belongs to the conversation of a later such call whose input
   messages begin with this call's input and output (its reply, tool calls and their ids
   included: what the app sent back next time); of several, the longest input wins. The
   calls so chained are one conversation, read as judge.traces.conversation reads a trace;
3. any other trace is a conversation of its own, as before.

Two calls identical in input and output (the same opening answered the same way) cannot be
told apart by their messages: give such apps a session id. Linking is by a hash of each
input's prefixes, linear in the messages pulled.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from judge.traces.mapping import TraceMapping
from judge.traces.span_messages import read_messages
from judge.traces.spans import Span

__all__ = ["Group", "Grouping", "could_join", "group_traces"]


@dataclass
class Group:
    """The spans of one conversation: one trace, or several put together (`how`: the
    attribute that joined them, or `messages` for chained model calls)."""

    spans: list[Span]
    traces: int = 1
    how: str | None = None
    key: str | None = None  # the session or conversation id, when `how` is one
    calls_only: bool = False  # several traces, each a model call alone


@dataclass
class Grouping:
    """The groups, and how many traces each way put together into how many conversations."""

    groups: list[Group] = field(default_factory=list)
    joined: Counter[str] = field(default_factory=Counter)  # how -> traces put together
    made: Counter[str] = field(default_factory=Counter)  # how -> conversations they made

    def line(self) -> str | None:
        """One line of counts, or None when nothing was put together."""
        parts = [
            f"{self.joined[how]} traces into {self.made[how]} conversations by "
            + (
                "their messages (a model call's input continuing another's)"
                if how == "messages"
                else how
            )
            for how in sorted(self.joined)
        ]
        return "grouped " + "; ".join(parts) if parts else None


def group_traces(by_trace: dict[str, list[Span]], mapping: TraceMapping) -> Grouping:
    """The traces as conversations (module docstring), in the order of their first trace."""
    order = list(by_trace)
    owner: dict[str, str] = {t: t for t in order}  # union-find over trace ids
    how: dict[str, tuple[str, str]] = {}
    by_id: dict[tuple[str, str], str] = {}
    for trace_id in order:
        found = _conversation_id(by_trace[trace_id], mapping)
        if found is None:
            continue
        how[trace_id] = found
        first = by_id.setdefault(found, trace_id)
        _union(owner, first, trace_id)
    calls = {t: call for t in order if (call := _lone_model_call(by_trace[t], mapping)) is not None}
    lone = {t: call for t, call in calls.items() if t not in how}
    chained = _chain(lone, mapping)
    for earlier, later in chained:
        _union(owner, later, earlier)
    out = _groups(order, owner, by_trace, how, {t for pair in chained for t in pair})
    for group in out.groups:  # model calls alone, put together: an agent the SDK traced
        group.calls_only = group.traces > 1 and all(s.trace_id in calls for s in group.spans)
    return out


def could_join(spans: list[Span], mapping: TraceMapping) -> bool:
    """Whether a trace could be put together with another (a session or conversation id,
    or a model call alone): a pull that streams holds only these for group_traces."""
    return (
        _conversation_id(spans, mapping) is not None or _lone_model_call(spans, mapping) is not None
    )


def _conversation_id(spans: Iterable[Span], mapping: TraceMapping) -> tuple[str, str] | None:
    for span in spans:
        for name in mapping.conversation_id:
            value = span.attributes.get(name)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                return name, str(value)
    return None


def _lone_model_call(spans: list[Span], mapping: TraceMapping) -> Span | None:
    """The trace's model call when the trace is that call alone (SDK instrumentation)."""
    ids = {s.span_id for s in spans}
    tops = [s for s in spans if s.parent_id not in ids or s.parent_id == s.span_id]
    if len(tops) != 1 or mapping.kind_of(tops[0]) not in mapping.llm_kinds:
        return None
    others = (*mapping.tool_kinds, *mapping.agent_kinds)
    return None if any(mapping.kind_of(s) in others for s in spans) else tops[0]


def _chain(calls: dict[str, Span], mapping: TraceMapping) -> list[tuple[str, str]]:
    """(trace, the trace of the call continuing it) for each model call another continues:
    the later call, of those whose input begins with this call's input and output, with the
    longest input."""
    best: dict[bytes, tuple[int, int, str]] = {}  # prefix hash -> (input length, start, trace)
    ends: dict[str, bytes] = {}
    for trace_id, span in calls.items():
        inputs = [_key(m) for m in read_messages(span.attributes, mapping.input_messages)]
        outputs = [_key(m) for m in read_messages(span.attributes, mapping.output_messages)]
        digest = hashlib.sha256()
        for length, message in enumerate(inputs, 1):
            digest.update(message)
            seen = best.get(digest.digest())
            mine = (len(inputs), span.start_ns, trace_id)
            if length < len(inputs) and (seen is None or mine[:2] > seen[:2]):
                best[digest.digest()] = mine
        if outputs:
            for message in outputs:
                digest.update(message)
            ends[trace_id] = digest.digest()
    pairs = []
    for trace_id, end in ends.items():
        found = best.get(end)
        if found is not None and found[2] != trace_id and found[1] >= calls[trace_id].start_ns:
            pairs.append((trace_id, found[2]))
    return pairs


def _key(message: dict[str, Any]) -> bytes:
    """A message as compared between calls: role, text, calls (id, name, arguments as
    JSON), the call it answers; what an SDK adds or drops on the way back (null content,
    `type`, `refusal`) is left out."""
    calls = [
        (c.get("id"), c["function"]["name"], _canonical(c["function"].get("arguments")))
        for c in message.get("tool_calls") or []
    ]
    shown = [message["role"], message.get("content") or "", calls, message.get("tool_call_id")]
    return json.dumps(shown, sort_keys=True, ensure_ascii=False).encode() + b"\x00"


def _canonical(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def _union(owner: dict[str, str], a: str, b: str) -> None:
    ra, rb = _find(owner, a), _find(owner, b)
    if ra != rb:
        owner[rb] = ra


def _find(owner: dict[str, str], x: str) -> str:
    while owner[x] != x:
        owner[x] = owner[owner[x]]
        x = owner[x]
    return x


def _groups(
    order: list[str],
    owner: dict[str, str],
    by_trace: dict[str, list[Span]],
    how: dict[str, tuple[str, str]],
    chained: set[str],
) -> Grouping:
    members: dict[str, list[str]] = {}
    for trace_id in order:
        members.setdefault(_find(owner, trace_id), []).append(trace_id)
    out = Grouping()
    for traces in members.values():
        group = Group([s for t in traces for s in by_trace[t]], traces=len(traces))
        if len(traces) > 1:
            named = next((how[t] for t in traces if t in how), None)
            group.how, group.key = named if named else ("messages", None)
            if named is None and not chained & set(traces):
                group.how = None
            out.joined[str(group.how)] += len(traces)
            out.made[str(group.how)] += 1
        out.groups.append(group)
    return out
