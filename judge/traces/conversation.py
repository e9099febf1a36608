"""Agent traces -> conversation cases: one case per trace (per topmost span), its messages
and tool calls in time order, each tool result a `tool` message answering its call.

Which traces become conversations (`shape`, `--as` on `judge traces pull` and `judge
watch`):
- `answers`: none; every trace goes through judge.traces.mapping as before (one
  question/answer case per answered request);
- `conversations`: every trace;
- `auto` (the default): the rubric decides when one is named: a rubric reading `messages`,
  `goal`, `tools` or `expected_tool_calls` gets conversations, any other rubric gets answers
  (so a RAG rubric on an agent's trace still sees its question and answer). Without a
  rubric, a trace with a tool span (`TOOL`, `execute_tool`) or an agent span (`AGENT`,
  `invoke_agent`) is a conversation and any other trace gives answers.

How a conversation is read from the spans under the trace's topmost span (the walk keeps a
visited set and a depth bound, so a parent cycle or a repeated span id cannot loop):
- the model calls (LLM spans) and the tool calls (TOOL spans), by start time; the walk takes
  nothing below a tool span (its own work) and no model call below a model call (a
  framework's span wrapping the SDK's is one call);
- the first model call's input messages open the transcript (after `gen_ai.system_instructions`
  as a system message when the input has none); each later model call adds only the user
  messages past those already there, and the tool results it carries for calls no tool span
  answered; each model call's output messages follow;
- each tool span is a `tool` message (name, call id, result), matched to the call it answers
  (judge.traces.tool_answers); the trace's root `input.value` / `output.value` stand in for a
  missing first user message or final answer.
- a tool span whose parent is not in the trace (its request never came) is no conversation:
  it is skipped, and the trace named with the count.

`goal` is the first user message; `tools` the first tool definitions a model call was offered;
the id is the topmost span's id; `metadata` keeps `trace_id`, `span_id` and the last model
call's `gen_ai.response.id` as `response_id`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from judge.errors import UsageError
from judge.schemas import Case
from judge.traces.grouping import Group, group_traces
from judge.traces.mapping import (
    Extraction,
    Missing,
    TraceMapping,
    cases_from_spans,
    mapped_metadata,
    stamp_start_times,
)
from judge.traces.span_messages import read_messages, read_system, read_tools, text_of
from judge.traces.spans import Span
from judge.traces.tool_answers import answer_calls, tool_message
from judge.transcript import MAX_MESSAGES

__all__ = ["SHAPES", "add_trace", "cases_of_traces", "conversation_case", "is_agent_trace"]

SHAPES = ("auto", "conversations", "answers")
# the case fields a rubric reads that only a conversation case has
CONVERSATION_INPUTS = frozenset({"messages", "goal", "tools", "expected_tool_calls"})
# what a trace can give a conversation case (expected calls are joined in later, if at all)
FROM_TRACE = ("messages", "goal", "tools")
MAX_DEPTH = 1_000  # span nesting walked below a trace's topmost span


def cases_of_traces(
    spans: Iterable[Span],
    mapping: TraceMapping | None = None,
    *,
    required: Iterable[str] = (),
    shape: str = "auto",
) -> Extraction:
    """The cases of these spans: conversation cases for the traces `shape` picks (module
    docstring), the question/answer cases of judge.traces.mapping for the rest; all in
    start order. `required`: the rubric's inputs (empty: none named)."""
    mapping = mapping or TraceMapping()
    needed = tuple(required)
    chosen = shape_for(needed, shape)
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    out, plain = Extraction(), []
    grouping = group_traces(by_trace, mapping) if chosen != "answers" else None
    for group in grouping.groups if grouping else [Group(s) for s in by_trace.values()]:
        if not _is_conversation(group, chosen, mapping):
            plain.extend(group.spans)
        elif group.how is None:
            _add_conversations(group.spans, mapping, needed, out)
        else:
            _add_grouped(group, mapping, needed, out)
    if grouping is not None and grouping.line():
        out.grouped.append(str(grouping.line()))
    if plain:
        answers = cases_from_spans(plain, mapping, required=needed or ("question", "answer"))
        for case in answers.cases:
            _add(out, case, answers.starts[case.id])
        out.missing.extend(answers.missing)
        out.broken.extend(answers.broken)  # traces skipped whole (a parent loop), named
    out.cases.sort(key=lambda c: (out.starts[c.id], c.id))
    return stamp_start_times(out)


def add_trace(
    trace: list[Span],
    mapping: TraceMapping,
    required: tuple[str, ...],
    chosen: str,
    out: Extraction,
) -> None:
    """One trace's cases into `out` (unsorted): its conversations where `chosen` (from
    shape_for) makes it one, else its question/answer cases. A pull that streams (one trace
    at a time, judge.traces.spool) and a whole file read the same way."""
    if chosen == "conversations" or (chosen == "auto" and is_agent_trace(trace, mapping)):
        _add_conversations(trace, mapping, required, out)
        return
    answers = cases_from_spans(trace, mapping, required=required or ("question", "answer"))
    for case in answers.cases:
        _add(out, case, answers.starts[case.id])
    out.missing.extend(answers.missing)
    out.broken.extend(answers.broken)  # traces skipped whole (a parent loop), named


def shape_for(required: tuple[str, ...], shape: str) -> str:
    """`conversations`, `answers`, or `auto` (decided per trace) for a rubric's inputs."""
    if shape not in SHAPES:
        raise UsageError(f"--as {shape!r}: one of {', '.join(SHAPES)}")
    if shape != "auto" or not required:
        return shape
    return "conversations" if CONVERSATION_INPUTS & set(required) else "answers"


def _is_conversation(group: Group, chosen: str, mapping: TraceMapping) -> bool:
    """Under `auto`: a trace or session with an agent or tool span, or several model calls
    alone put together (by their messages or a session id: an agent the SDK alone traced)."""
    if chosen != "auto":
        return chosen == "conversations"
    return group.calls_only or is_agent_trace(group.spans, mapping)


def _add_grouped(
    group: Group, mapping: TraceMapping, required: tuple[str, ...], out: Extraction
) -> None:
    """One conversation of several traces (judge.traces.grouping): the model and tool
    calls under each topmost span, in time order, read as one trace's are; the id and the
    fallbacks are the earliest topmost span's."""
    spans = _unique(group.spans)
    children: dict[str, list[Span]] = {}
    for span in spans.values():
        if span.parent_id in spans:
            children.setdefault(str(span.parent_id), []).append(span)
    tops = [t for t in _tops(spans) if mapping.kind_of(t) not in mapping.tool_kinds]
    if not tops:
        return
    found = {s.span_id: s for top in tops for s in _steps(top, children, mapping)}
    steps = sorted(found.values(), key=lambda s: (s.start_ns, _kind_rank(s, mapping), s.span_id))
    if len(steps) > MAX_MESSAGES:
        out.broken.append(
            f"trace {tops[0].trace_id}: {group.traces} traces put together ({group.how}): "
            f"{len(steps)} model and tool calls, over the {MAX_MESSAGES} messages a case holds"
        )
        return
    case, lacking = conversation_case(tops[0], steps, mapping, required)
    if case is None:
        out.missing.append(Missing(tops[0].trace_id, tops[0].span_id, lacking))
        return
    metadata = {**case.metadata, "grouped_by": group.how, "traces": group.traces}
    if group.key is not None:
        metadata[str(group.how)] = group.key
    _add(out, case.model_copy(update={"metadata": metadata}), tops[0].start_ns)


def is_agent_trace(trace: Iterable[Span], mapping: TraceMapping) -> bool:
    """Whether a trace records an agent: a tool span or an agent span anywhere in it."""
    kinds = (*mapping.tool_kinds, *mapping.agent_kinds)
    return any(mapping.kind_of(span) in kinds for span in trace)


def _add_conversations(
    trace: list[Span], mapping: TraceMapping, required: tuple[str, ...], out: Extraction
) -> None:
    spans = _unique(trace)
    children: dict[str, list[Span]] = {}
    for span in spans.values():
        if span.parent_id in spans:
            children.setdefault(str(span.parent_id), []).append(span)
    orphans = 0
    for root in _tops(spans):
        if (
            root.parent_id not in (None, root.span_id)
            and mapping.kind_of(root) in mapping.tool_kinds
        ):
            orphans += 1  # a tool run whose request is not in the trace: no conversation
            continue
        steps = _steps(root, children, mapping)
        if len(steps) > MAX_MESSAGES:  # each is a message at least: no case could hold them
            out.broken.append(
                f"trace {root.trace_id}: span {root.span_id}: {len(steps)} model and tool calls, "
                f"over the {MAX_MESSAGES} messages a case holds: refused"
            )
            continue
        if not steps and mapping.kind_of(root) not in mapping.root_kinds:
            continue  # not a request, and no model or tool call under it: nothing was said
        case, lacking = conversation_case(root, steps, mapping, required)
        if case is None:
            out.missing.append(Missing(root.trace_id, root.span_id, lacking))
        else:
            _add(out, case, root.start_ns)
    if orphans:
        out.broken.append(
            f"trace {trace[0].trace_id}: {orphans} tool spans whose parent is not in the trace "
            "skipped (no request to read a conversation from)"
        )


def _add(out: Extraction, case: Case, start: int) -> None:
    """A case, unless one with its id is already there (a span id written in two traces:
    the first is kept, so the cases file never repeats an id)."""
    if case.id not in out.starts:
        out.cases.append(case)
        out.starts[case.id] = start


def _unique(trace: list[Span]) -> dict[str, Span]:
    """The trace's spans by id; a repeated id keeps its first span."""
    spans: dict[str, Span] = {}
    for span in trace:
        spans.setdefault(span.span_id, span)
    return spans


def _tops(spans: dict[str, Span]) -> list[Span]:
    """The topmost spans: no parent in the trace (in a trace that is all cycle, the
    earliest span stands in)."""
    tops = [s for s in spans.values() if s.parent_id not in spans or s.parent_id == s.span_id]
    if not tops and spans:
        tops = [min(spans.values(), key=_order)]
    return sorted(tops, key=_order)


def _order(span: Span) -> tuple[int, str]:
    return (span.start_ns, span.span_id)


def _steps(root: Span, children: dict[str, list[Span]], mapping: TraceMapping) -> list[Span]:
    """The model and tool calls at or under `root`, by start time (a model call before a
    tool call that started at the same time: the tool answers it). Below a tool span nothing
    is taken (the tool's own work); below a model call only tool spans (a framework's model
    span wrapping the SDK's is one model call, not two)."""
    found, seen = [], {root.span_id}
    todo: list[tuple[Span, int, bool]] = [(root, 0, False)]
    while todo:
        span, depth, in_model = todo.pop()
        kind = mapping.kind_of(span)
        if kind in mapping.tool_kinds:
            found.append(span)
            continue
        if kind in mapping.llm_kinds and not in_model:
            found.append(span)
            in_model = True
        if depth >= MAX_DEPTH:
            continue
        for child in children.get(span.span_id, []):
            if child.span_id not in seen:
                seen.add(child.span_id)
                todo.append((child, depth + 1, in_model))
    return sorted(found, key=lambda s: (s.start_ns, _kind_rank(s, mapping), s.span_id))


def _kind_rank(span: Span, mapping: TraceMapping) -> int:
    return 1 if mapping.kind_of(span) in mapping.tool_kinds else 0


def conversation_case(
    root: Span, steps: list[Span], mapping: TraceMapping, required: tuple[str, ...]
) -> tuple[Case | None, tuple[str, ...]]:
    """The case of one topmost span and its model and tool calls, or the fields it lacks."""
    said = _transcript(root, steps, mapping)
    if sum(len(m.get("tool_calls") or []) for m in said) > MAX_MESSAGES:
        return None, (f"valid messages (over {MAX_MESSAGES} tool calls)",)
    messages = answer_calls(said)
    values: dict[str, Any] = {
        "messages": messages,
        "goal": first_user_text_of(messages),
        "tools": _first_tools(steps, mapping),
    }
    lacking = tuple(n for n in ("messages", *required) if n in FROM_TRACE and not values[n])
    if lacking:
        return None, tuple(dict.fromkeys(lacking))
    metadata: dict[str, Any] = {"trace_id": root.trace_id, "span_id": root.span_id}
    response_id = _last_attribute(steps, mapping.response_id)
    if response_id:
        metadata["response_id"] = response_id
    metadata |= mapped_metadata([root, *steps], mapping.metadata)
    try:
        case = Case(
            id=root.span_id,
            **{k: v for k, v in values.items() if v},
            slices=_slices(root, mapping.slices),
            metadata=metadata,
        )
    except ValidationError:
        return None, ("valid messages",)
    return case, ()


def first_user_text_of(messages: list[dict[str, Any]]) -> str | None:
    for message in messages:
        if message["role"] == "user" and (message.get("content") or "").strip():
            return str(message["content"])
    return None


def _transcript(root: Span, steps: list[Span], mapping: TraceMapping) -> list[dict[str, Any]]:
    said = _Said()
    opened = False
    for span in steps:
        if mapping.kind_of(span) in mapping.tool_kinds:
            said.add([tool_message(span, mapping)])
            continue
        inputs = read_messages(span.attributes, mapping.input_messages)
        if not opened:
            said.add(_opening(span, inputs, mapping))
            opened = True
        else:
            said.add(said.new_inputs(inputs))
        said.add(read_messages(span.attributes, mapping.output_messages))
    return _root_fallbacks(root, said.messages)


def _opening(
    span: Span, inputs: list[dict[str, Any]], mapping: TraceMapping
) -> list[dict[str, Any]]:
    """The first model call's input, after its system instructions when the input has no
    system message (GenAI keeps them apart)."""
    system = read_system(span.attributes, mapping.system)
    if system and not any(m["role"] in ("system", "developer") for m in inputs):
        return [{"role": "system", "content": system}, *inputs]
    return inputs


class _Said:
    """The transcript so far, with what a later model call's input is compared against
    (the user messages, the calls made, the calls answered) kept as it grows: each model
    call costs its own input, not the whole transcript again."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.users = 0
        self.called: set[Any] = set()
        self.answered: set[Any] = set()

    def add(self, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            self.messages.append(message)
            self.users += message["role"] == "user"
            self.called.update(c.get("id") for c in message.get("tool_calls") or [])
            if message["role"] == "tool":
                self.answered.add(message.get("tool_call_id"))
        self.called.discard(None)

    def new_inputs(self, inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """What a later model call's input adds: the user messages past those already in
        the transcript, and results of calls made but not yet answered (an untraced tool)."""
        out, seen_users, answered = [], 0, set()  # answered here: this input's own results
        for message in inputs:
            if message["role"] == "user":
                seen_users += 1
                if seen_users > self.users:
                    out.append(message)
            elif message["role"] == "tool":
                call_id = message.get("tool_call_id")
                fresh = call_id not in self.answered and call_id not in answered
                if call_id in self.called and fresh:
                    answered.add(call_id)
                    out.append(message)
        return out


def _root_fallbacks(root: Span, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The root's own input and output where the model calls did not record the first user
    message or the final answer (JSON bodies, by their mime type, are not text to show)."""
    question, answer = _root_text(root, "input"), _root_text(root, "output")
    if question and not any(m["role"] == "user" for m in messages):
        at = next(
            (i for i, m in enumerate(messages) if m["role"] not in ("system", "developer")),
            len(messages),
        )
        messages = [*messages[:at], {"role": "user", "content": question}, *messages[at:]]
    last = messages[-1] if messages else None
    if answer and (last is None or last["role"] != "assistant" or not last.get("content")):
        messages = [*messages, {"role": "assistant", "content": answer}]
    return messages


def _root_text(root: Span, which: str) -> str | None:
    mime = root.attributes.get(f"{which}.mime_type")
    if isinstance(mime, str) and "json" in mime:
        return None
    value = root.attributes.get(f"{which}.value")
    return value if isinstance(value, str) and value.strip() else None


def _first_tools(steps: list[Span], mapping: TraceMapping) -> list[dict[str, Any]]:
    for span in steps:
        if mapping.kind_of(span) in mapping.llm_kinds:
            tools = read_tools(span.attributes, mapping.tool_definitions)
            if tools:
                return tools
    return []


def _last_attribute(steps: list[Span], paths: tuple[str, ...]) -> str | None:
    for span in reversed(steps):
        for path in paths:
            value = text_of(span.attributes.get(path))
            if value:
                return value
    return None


def _slices(root: Span, names: tuple[str, ...]) -> list[str]:
    out = []
    for name in names:
        value = root.attributes.get(name, root.resource.get(name))
        if value not in (None, ""):
            out.append(str(value))
    return out
