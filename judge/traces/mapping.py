"""Spans -> cases: which span is the answered request, and where its question, contexts and
answer are. The default mapping reads OpenInference (Phoenix, Arize) and the OpenTelemetry
GenAI conventions; every path can be overridden (`TraceMapping.from_table`, the
`[tool.judge.traces]` table). docs/guides/traces.md documents the defaults.

A trace that lacks a field the rubric needs is not a case: it is counted and named in
`Extraction.missing`, never filled with a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from judge.errors import UsageError
from judge.schemas import Case
from judge.traces.spans import Span, loads_text

__all__ = ["Extraction", "Missing", "TraceMapping", "cases_from_spans"]

KIND_KEYS = ("openinference.span.kind", "gen_ai.operation.name")


@dataclass(frozen=True)
class TraceMapping:
    """Where a case's fields are in a trace. Each text field is a list of attribute paths,
    the first present wins; a path naming a message list (OpenInference's flattened
    `llm.input_messages.N.message.*`, or the GenAI JSON `gen_ai.input.messages`) gives the
    last user message (for answers, the first assistant message). `X.value` is skipped
    when `X.mime_type` says it is JSON (a request body, not the question)."""

    root_kinds: tuple[str, ...] = ("CHAIN", "AGENT", "LLM", "chat", "invoke_agent")
    retriever_kinds: tuple[str, ...] = ("RETRIEVER", "retrieval")
    question: tuple[str, ...] = (
        "input.value",
        "gen_ai.prompt",
        "llm.input_messages",
        "gen_ai.input.messages",
    )
    answer: tuple[str, ...] = (
        "output.value",
        "gen_ai.completion",
        "llm.output_messages",
        "gen_ai.output.messages",
    )
    # retriever spans: "{n}" is the document's index
    context: tuple[str, ...] = (
        "retrieval.documents.{n}.document.content",
        "gen_ai.retrieval.documents.{n}.content",
    )
    context_id: tuple[str, ...] = (
        "retrieval.documents.{n}.document.id",
        "gen_ai.retrieval.documents.{n}.id",
    )
    response_id: tuple[str, ...] = ("gen_ai.response.id", "llm.response.id")
    slices: tuple[str, ...] = ()  # attributes (span's, then resource's) whose values are slices
    # agent traces as conversation cases (judge.traces.conversation, the guide's last section)
    agent_kinds: tuple[str, ...] = ("AGENT", "invoke_agent")
    llm_kinds: tuple[str, ...] = ("LLM", "chat", "text_completion", "generate_content")
    tool_kinds: tuple[str, ...] = ("TOOL", "execute_tool")
    input_messages: tuple[str, ...] = ("llm.input_messages", "gen_ai.input.messages")
    output_messages: tuple[str, ...] = ("llm.output_messages", "gen_ai.output.messages")
    system: tuple[str, ...] = ("gen_ai.system_instructions",)
    tool_definitions: tuple[str, ...] = ("llm.tools", "gen_ai.tool.definitions")
    tool_name: tuple[str, ...] = ("tool.name", "gen_ai.tool.name")
    tool_call_id: tuple[str, ...] = ("tool_call.id", "gen_ai.tool.call.id")
    tool_arguments: tuple[str, ...] = (
        "gen_ai.tool.call.arguments",
        "input.value",
        "tool.parameters",
    )
    tool_result: tuple[str, ...] = ("gen_ai.tool.call.result", "output.value")
    # traces that are one conversation (judge.traces.grouping): spans sharing a value of one
    conversation_id: tuple[str, ...] = ("session.id", "gen_ai.conversation.id")
    # span (then resource) attributes copied into each case's metadata under their own
    # names: a key `--references --join-on metadata.NAME` can join on
    metadata: tuple[str, ...] = ()

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str) -> TraceMapping:
        """A mapping from a config table (`[tool.judge.traces]`): each key a field, a string
        or a list of strings; unknown keys are a UsageError naming `where`."""
        names = {f.name for f in fields(cls)}
        values: dict[str, tuple[str, ...]] = {}
        for key, value in table.items():
            if key not in names:
                raise UsageError(f"{where}: {key}: unknown key (known: {', '.join(sorted(names))})")
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list) or not all(isinstance(v, str) and v for v in items):
                raise UsageError(f"{where}: {key}: must be a string or a list of strings")
            values[key] = tuple(items)
        return cls(**values)

    def kind_of(self, span: Span) -> str | None:
        for key in KIND_KEYS:
            value = span.attributes.get(key)
            if isinstance(value, str):
                return value
        return None


@dataclass(frozen=True)
class Missing:
    """A trace's answered request that could not become a case, and why."""

    trace_id: str
    span_id: str
    fields: tuple[str, ...]

    def __str__(self) -> str:
        return f"trace {self.trace_id} span {self.span_id}: no {', '.join(self.fields)}"


@dataclass
class Extraction:
    """The cases found, with their root spans' start times, the requests skipped, and the
    traces skipped whole (`broken`: one line each, e.g. a parent cycle)."""

    cases: list[Case] = field(default_factory=list)
    starts: dict[str, int] = field(default_factory=dict)  # case id -> start, Unix ns
    missing: list[Missing] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    grouped: list[str] = field(default_factory=list)  # traces put together (judge.traces.grouping)


def cases_from_spans(
    spans: Iterable[Span],
    mapping: TraceMapping | None = None,
    *,
    required: Iterable[str] = ("question", "answer"),
) -> Extraction:
    """One case per answered request: per trace, each topmost span of a root kind (a span
    with no ancestor of those kinds). Ids are span ids; `metadata` keeps the trace and span
    ids (and `response_id` when a span records `gen_ai.response.id`).

    A span id seen again (a batch exported or pulled twice) is read once, its first copy:
    one case per span id. A trace whose parent links loop is skipped whole and named in
    `broken`: its spans have no top to read a request from."""
    mapping = mapping or TraceMapping()
    needed = tuple(required)
    by_trace: dict[str, dict[str, Span]] = {}
    seen: set[str] = set()
    for span in spans:
        if span.span_id not in seen:
            seen.add(span.span_id)
            by_trace.setdefault(span.trace_id, {})[span.span_id] = span
    out = Extraction()
    for trace_id, ids in by_trace.items():
        looped = _looped_span(ids)
        if looped is not None:
            out.broken.append(f"trace {trace_id}: span {looped}'s parent links loop")
            continue
        trace = sorted(ids.values(), key=lambda s: (s.start_ns, s.span_id))
        children = _children(trace)  # once a trace: per root, 8,000 roots took 45 s
        for root in _roots(trace, ids, mapping):
            case, lacking = _case(root, children, mapping, needed)
            if lacking:
                out.missing.append(Missing(root.trace_id, root.span_id, lacking))
            else:
                assert case is not None
                out.cases.append(case)
                out.starts[case.id] = root.start_ns
    order = {c.id: (out.starts[c.id], c.id) for c in out.cases}
    out.cases.sort(key=lambda c: order[c.id])
    return out


def stamp_start_times(extraction: Extraction) -> Extraction:
    """Each case with its root span's start as its `time` (ISO 8601, UTC), where the span
    has one and the case none: `judge drift --by` windows the records by it."""
    for number, case in enumerate(extraction.cases):
        start = extraction.starts.get(case.id, 0)
        if case.time is None and start > 0:
            extraction.cases[number] = case.model_copy(update={"time": iso_of_ns(start)})
    return extraction


def iso_of_ns(unix_ns: int) -> str:
    """A Unix time in nanoseconds as ISO 8601 UTC, to the microsecond (integer arithmetic:
    a float of nanoseconds since 1970 rounds past the second)."""
    moment = datetime.fromtimestamp(unix_ns // 10**9, UTC)
    moment = moment.replace(microsecond=(unix_ns // 1000) % 10**6)
    return moment.isoformat().replace("+00:00", "Z")


def _looped_span(ids: Mapping[str, Span]) -> str | None:
    """A span whose chain of parents comes back to a span already on it (its own parent,
    or a longer cycle), else None. Each span is walked once: linear in the trace."""
    done: set[str] = set()
    for start in ids:
        path: set[str] = set()
        current: str | None = start
        while current is not None and current in ids and current not in done:
            if current in path:
                return current
            path.add(current)
            current = ids[current].parent_id
        done |= path
    return None


def _roots(trace: list[Span], ids: Mapping[str, Span], mapping: TraceMapping) -> list[Span]:
    """The topmost spans of a root kind (the trace's parent links do not loop). Whether a
    span is or has an ancestor of a root kind is remembered along each walk up, so a deep
    chain is walked once, not once per span under it."""
    covered: dict[str, bool] = {}

    def under_a_root(span_id: str | None) -> bool:
        path, current, value = [], span_id, False
        while current is not None and current in ids:
            if current in covered:
                value = covered[current]
                break
            path.append(current)
            if mapping.kind_of(ids[current]) in mapping.root_kinds:
                value = True
                break
            current = ids[current].parent_id
        for seen in path:
            covered[seen] = value
        return value

    kinds = mapping.root_kinds
    return [s for s in trace if mapping.kind_of(s) in kinds and not under_a_root(s.parent_id)]


def _children(trace: list[Span]) -> dict[str, list[Span]]:
    """Each span id's children, in the trace's order."""
    children: dict[str, list[Span]] = {}
    for span in trace:
        children.setdefault(span.parent_id or "", []).append(span)
    return children


def _descendants(root: Span, children: dict[str, list[Span]]) -> list[Span]:
    out, todo, seen = [], [root.span_id], {root.span_id}
    while todo:
        for child in children.get(todo.pop(), []):
            if child.span_id not in seen:  # a span once: never loops, whatever the links say
                seen.add(child.span_id)
                out.append(child)
                todo.append(child.span_id)
    return sorted(out, key=lambda s: (s.start_ns, s.span_id))


def _case(
    root: Span, children: dict[str, list[Span]], mapping: TraceMapping, needed: tuple[str, ...]
) -> tuple[Case | None, tuple[str, ...]]:
    under = _descendants(root, children)
    retrievers = [s for s in under if mapping.kind_of(s) in mapping.retriever_kinds]
    contexts, ids = _documents(retrievers, mapping)
    values: dict[str, Any] = {
        "question": _text(root.attributes, mapping.question, "user"),
        "answer": _text(root.attributes, mapping.answer, "assistant"),
        "contexts": contexts,
    }
    lacking = tuple(name for name in needed if not values.get(name))
    if lacking:
        return None, lacking
    metadata: dict[str, Any] = {"trace_id": root.trace_id, "span_id": root.span_id}
    response_id = _first(
        [root, *under], mapping.response_id
    )  # the LLM span under a chain records it
    if response_id:
        metadata["response_id"] = response_id
    metadata |= mapped_metadata([root, *under], mapping.metadata)
    try:
        case = Case(
            id=root.span_id,
            question=values["question"],
            answer=values["answer"],
            contexts=contexts,
            retrieved_ids=ids if ids and len(ids) == len(contexts) else None,
            slices=_slices(root, mapping.slices),
            metadata=metadata,
        )
    except ValidationError as exc:  # past a case's bounds (an id, more documents than it holds)
        return None, (f"valid {exc.errors()[0]['loc'][0]}",)
    return case, ()


def mapped_metadata(spans: list[Span], names: tuple[str, ...]) -> dict[str, Any]:
    """`[tool.judge.traces] metadata`: each attribute's first value on `spans` (the root
    first), else on the root's resource, under its own name."""
    out: dict[str, Any] = {}
    for name in names:
        value = next((s.attributes[name] for s in spans if name in s.attributes), None)
        if value is None and spans:
            value = spans[0].resource.get(name)
        if value not in (None, ""):
            out[name] = value
    return out


def _first(spans: list[Span], paths: tuple[str, ...]) -> str | None:
    for span in spans:
        for path in paths:
            value = span.attributes.get(path)
            if isinstance(value, str) and value:
                return value
    return None


def _documents(retrievers: list[Span], mapping: TraceMapping) -> tuple[list[str], list[str]]:
    contexts: list[str] = []
    ids: list[str] = []
    for span in retrievers:
        for n in range(10_000):
            text = _first([span], tuple(p.format(n=n) for p in mapping.context))
            if text is None:
                break
            contexts.append(text)
            doc_id = _first([span], tuple(p.format(n=n) for p in mapping.context_id))
            if doc_id is not None:
                ids.append(doc_id)
    return contexts, ids


def _slices(root: Span, names: tuple[str, ...]) -> list[str]:
    out = []
    for name in names:
        value = root.attributes.get(name, root.resource.get(name))
        if value not in (None, ""):
            out.append(str(value))
    return out


def _text(attributes: Mapping[str, Any], paths: tuple[str, ...], role: str) -> str | None:
    for path in paths:
        value = attributes.get(path)
        if isinstance(value, str) and value:
            if path.endswith(".value") and _is_json_mime(attributes, path):
                continue
            parsed = _message_json(value) if path.endswith(".messages") else None
            if parsed is not None:
                text = _pick(parsed, role)
                if text:
                    return text
                continue
            return value
        text = _pick(_flat_messages(attributes, path), role)
        if text:
            return text
    return None


def _is_json_mime(attributes: Mapping[str, Any], path: str) -> bool:
    mime = attributes.get(path.removesuffix(".value") + ".mime_type")
    return isinstance(mime, str) and "json" in mime


def _flat_messages(attributes: Mapping[str, Any], path: str) -> list[tuple[str, str]]:
    """OpenInference's `PATH.N.message.role` / `PATH.N.message.content`, in N order."""
    out = []
    for n in range(10_000):
        role = attributes.get(f"{path}.{n}.message.role")
        content = attributes.get(f"{path}.{n}.message.content")
        if role is None and content is None:
            break
        if isinstance(content, str):
            out.append((str(role or ""), content))
    return out


def _message_json(value: str) -> list[tuple[str, str]] | None:
    """GenAI JSON messages: `[{"role", "parts": [{"type": "text", "content"}]}]` (or a
    plain `content`)."""
    try:
        data = loads_text(value)  # an attribute is the app's text: bounded like any input
    except ValueError:  # not JSON, too deep, a number past the digit limit
        return None
    if not isinstance(data, list):
        return None
    out = []
    for message in data:
        if not isinstance(message, dict):
            continue
        parts = message.get("parts")
        if isinstance(parts, list):
            text = "".join(
                str(p.get("content", "")) for p in parts if isinstance(p, dict) and "content" in p
            )
        else:
            text = str(message.get("content") or "")
        out.append((str(message.get("role", "")), text))
    return out


def _pick(messages: list[tuple[str, str]], role: str) -> str | None:
    """The last user message (a question) or the first assistant message (an answer)."""
    chosen = [text for who, text in messages if who == role and text]
    if not chosen:
        return None
    return chosen[-1] if role == "user" else chosen[0]
