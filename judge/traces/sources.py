"""Where `judge watch` follows new traces: an OTLP JSON file that keeps growing, or a
Phoenix project. Each `poll` takes the source's saved position (plain JSON, kept in the
watch's checkpoint) and returns the cases of the requests that have become complete since,
with the new position; nothing is decided here."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from judge.schemas import Case
from judge.traces.conversation import cases_of_traces
from judge.traces.mapping import Extraction, Missing, TraceMapping
from judge.traces.phoenix import PhoenixClient
from judge.traces.spans import Span, read_otlp_file

__all__ = ["OtlpFileSource", "PhoenixSource", "Poll", "TraceSource"]


@dataclass
class Poll:
    """What one poll found: cases (with their start, Unix ns) in order, requests lacking a
    field, and the position to save once they are decided."""

    cases: list[tuple[Case, int]] = field(default_factory=list)
    missing: list[Missing] = field(default_factory=list)
    position: dict[str, Any] = field(default_factory=dict)


class TraceSource(Protocol):
    @property
    def name(self) -> str: ...

    def poll(self, position: dict[str, Any], now: datetime) -> Poll: ...


def _poll_of(extraction: Extraction, position: dict[str, Any]) -> Poll:
    cases = [(c, extraction.starts[c.id]) for c in extraction.cases]
    return Poll(cases, extraction.missing, position)


@dataclass
class OtlpFileSource:
    """A file the Collector's file exporter appends to. Position: the byte offset of the
    first line not yet read, and the spans of traces whose root has not arrived (a trace
    is complete when its root span, the one without a parent, has been written)."""

    path: Path
    mapping: TraceMapping
    required: tuple[str, ...]
    shape: str = "auto"  # agent traces as conversations (judge.traces.conversation)

    @property
    def name(self) -> str:
        return str(self.path)

    def poll(self, position: dict[str, Any], now: datetime) -> Poll:
        offset = int(position.get("offset", 0))
        pending = [Span.from_json(s) for s in position.get("pending", [])]
        if self.path.exists():
            for end, spans in read_otlp_file(self.path, start=offset):
                pending.extend(spans)
                offset = end
        complete, waiting = _split_complete(pending)
        extraction = cases_of_traces(
            complete, self.mapping, required=self.required, shape=self.shape
        )
        return _poll_of(extraction, {"offset": offset, "pending": [s.to_json() for s in waiting]})


def _split_complete(spans: Iterable[Span]) -> tuple[list[Span], list[Span]]:
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    complete: list[Span] = []
    waiting: list[Span] = []
    for trace in by_trace.values():
        done = any(s.parent_id is None for s in trace)
        (complete if done else waiting).extend(trace)
    return complete, waiting


@dataclass
class PhoenixSource:
    """A Phoenix project. Position: `since`, the start time from which spans are read. A
    request is taken once its root span started more than `settle` seconds ago (its
    children have arrived by then); `since` then moves up to that point."""

    client: PhoenixClient
    project: str
    mapping: TraceMapping
    required: tuple[str, ...]
    start: datetime | None = None
    settle: float = 30.0
    shape: str = "auto"  # agent traces as conversations (judge.traces.conversation)

    @property
    def name(self) -> str:
        return f"{self.client.url} project {self.project}"

    def poll(self, position: dict[str, Any], now: datetime) -> Poll:
        since = _moment(position.get("since")) or self.start
        horizon = now - timedelta(seconds=self.settle)
        if since is not None and since >= horizon:
            return Poll(position=dict(position))
        spans = list(self.client.spans(self.project, since=since))
        extraction = cases_of_traces(spans, self.mapping, required=self.required, shape=self.shape)
        limit = int(horizon.timestamp() * 1e9)
        settled = Extraction(
            cases=[c for c in extraction.cases if extraction.starts[c.id] < limit],
            starts=extraction.starts,
            missing=extraction.missing,
        )
        return _poll_of(settled, {"since": horizon.isoformat()})


def _moment(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=UTC)
