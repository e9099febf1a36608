"""Where `judge watch` follows new traces: an OTLP JSON file that keeps growing, or a
Phoenix project. Each `poll` takes the source's saved position (plain JSON, kept in the
watch's checkpoint) and returns the cases of the requests that have become complete since,
with the new position; nothing is decided here. A line or a saved span that cannot be read
is skipped and named in `Poll.skipped`: a source never ends a watch over one bad line."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from judge.errors import InputError
from judge.schemas import Case
from judge.traces.conversation import cases_of_traces
from judge.traces.mapping import Extraction, Missing, TraceMapping
from judge.traces.phoenix import PhoenixClient
from judge.traces.spans import Span, open_regular, read_otlp_file

__all__ = ["MAX_PENDING", "BadPosition", "OtlpFileSource", "PhoenixSource", "Poll", "TraceSource"]

MAX_PENDING = 50_000  # spans of traces still waiting for their root, kept between polls
MIB = 1024 * 1024
MAX_PENDING_BYTES = 256 * MIB  # and their size, as the checkpoint holds them
STEP = timedelta(seconds=1)  # a clock behind the saved point by more: it was stepped back
HEAD = 256  # bytes of the file's start whose hash tells a truncated-and-regrown file


class BadPosition(ValueError):
    """A saved position no source could have written (the checkpoint is damaged)."""


@dataclass
class Poll:
    """What one poll found: cases (with their start, Unix ns) in order, requests lacking a
    field, what was skipped (a line each: a bad line, a looping trace, spans dropped), and
    the position to save once they are decided."""

    cases: list[tuple[Case, int]] = field(default_factory=list)
    missing: list[Missing] = field(default_factory=list)
    position: dict[str, Any] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


class TraceSource(Protocol):
    @property
    def name(self) -> str: ...

    def poll(self, position: dict[str, Any], now: datetime) -> Poll: ...


def _poll_of(extraction: Extraction, position: dict[str, Any], skipped: Iterable[str] = ()) -> Poll:
    cases = [(c, extraction.starts[c.id]) for c in extraction.cases]
    return Poll(cases, extraction.missing, position, [*skipped, *extraction.broken])


@dataclass
class OtlpFileSource:
    """A file the Collector's file exporter appends to, followed as `tail -F` follows a
    name. Position: the byte offset of the first line not yet read, the file's identity
    (device and inode, hashes of its first bytes and of those before the offset), and the
    spans of traces whose root has not arrived (a trace is complete when its root span,
    the one without a parent, has been written). A file replaced under the name (rotated),
    shorter than the offset (truncated) or with other bytes at its start or before the
    offset (truncated in place and written again) is read from its start. At most
    `max_pending` waiting spans are kept: past that the oldest traces are dropped, and
    said."""

    path: Path
    mapping: TraceMapping
    required: tuple[str, ...]
    max_pending: int = MAX_PENDING
    shape: str = "auto"  # agent traces as conversations (judge.traces.conversation)
    max_pending_bytes: int = MAX_PENDING_BYTES

    @property
    def name(self) -> str:
        return str(self.path)

    def poll(self, position: dict[str, Any], now: datetime) -> Poll:
        skipped: list[str] = []
        pending = _pending_spans(position.get("pending"), skipped)
        offset, identity = self._start(position, skipped)
        if identity is not None:

            def bad(exc: InputError) -> None:
                skipped.append(f"skipped a line: {exc}")

            for end, spans in read_otlp_file(self.path, start=offset, bad=bad):
                pending.extend(spans)
                offset = end
            identity = self._identity(offset) or identity
        complete, waiting = _split_complete(pending)
        waiting = _bounded(waiting, self.max_pending, skipped, self.max_pending_bytes)
        extraction = cases_of_traces(
            complete, self.mapping, required=self.required, shape=self.shape
        )
        known = identity or position.get("file")  # kept while the file is away
        saved = {"offset": offset, "file": known, "pending": [s.to_json() for s in waiting]}
        return _poll_of(extraction, saved, skipped)

    def _start(
        self, position: dict[str, Any], skipped: list[str]
    ) -> tuple[int, dict[str, Any] | None]:
        """Where to read from, and the file as it is now (None when there is none)."""
        offset = position.get("offset", 0)
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise BadPosition(f"the offset {offset!r} is not a byte offset")
        identity = self._identity(offset)
        saved = position.get("file")
        if identity is None:  # not there now (between a rotation's move and create)
            return offset, None
        if offset and (
            identity["size"] < offset or (isinstance(saved, dict) and _other_file(saved, identity))
        ):
            skipped.append(f"{self.path} was rotated or truncated: read from its start")
            return 0, self._identity(0)
        return offset, identity

    def _identity(self, offset: int) -> dict[str, Any] | None:
        """Device, inode, size now, and hashes of the first min(offset, HEAD) bytes and of
        the HEAD bytes before `offset`: a Collector's lines all open with the same resource
        attributes, so a file truncated in place (copytruncate) and written past the offset
        again has the same head; the bytes before the offset tell it."""
        try:
            with open_regular(self.path) as handle:  # a FIFO or a device: one line
                info = os.fstat(handle.fileno())
                head = handle.read(min(offset, HEAD))
                handle.seek(max(0, offset - HEAD))
                tail = handle.read(min(offset, HEAD))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise InputError(str(self.path), [(None, None, f"cannot be read ({exc})")]) from None
        return {
            "dev": info.st_dev,
            "ino": info.st_ino,
            "size": info.st_size,
            "head": hashlib.sha256(head).hexdigest()[:16],
            "tail": hashlib.sha256(tail).hexdigest()[:16],
        }


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


def _other_file(saved: dict[str, Any], now: dict[str, Any]) -> bool:
    """The name holds another file than the one read (a checkpoint from before the file's
    identity was kept has none: then only the size can tell)."""
    if (saved.get("dev"), saved.get("ino")) != (now["dev"], now["ino"]):
        return True
    return any(saved.get(k) is not None and saved.get(k) != now[k] for k in ("head", "tail"))


def _pending_spans(saved: Any, skipped: list[str]) -> list[Span]:
    """The waiting spans a checkpoint kept; one that is not a span is dropped, and said."""
    if saved is None:
        return []
    if not isinstance(saved, list):
        skipped.append("the checkpoint's waiting spans are not a list: dropped")
        return []
    out = []
    for item in saved:
        try:
            out.append(Span.checked(item))
        except (TypeError, ValueError) as exc:
            skipped.append(f"dropped a waiting span the checkpoint kept damaged ({exc})")
    return out


def _bounded(
    waiting: list[Span], limit: int, skipped: list[str], max_bytes: int = MAX_PENDING_BYTES
) -> list[Span]:
    """At most `limit` waiting spans, and at most `max_bytes` of them as the checkpoint
    holds them (a few spans of 60 MiB each would otherwise be kept, and rewritten each
    poll, without end): the oldest traces (by their newest span) go first."""
    sizes = [len(json.dumps(span.to_json(), default=str)) for span in waiting]
    if len(waiting) <= limit and sum(sizes) <= max_bytes:
        return waiting
    by_trace: dict[str, list[tuple[Span, int]]] = {}
    for span, size in zip(waiting, sizes, strict=True):
        by_trace.setdefault(span.trace_id, []).append((span, size))
    kept: list[Span] = []
    held = dropped = 0
    newest_first = sorted(by_trace.values(), key=lambda t: max(s.start_ns for s, _ in t))[::-1]
    for trace in newest_first:
        size = sum(n for _, n in trace)
        if len(kept) + len(trace) <= limit and held + size <= max_bytes:
            kept.extend(s for s, _ in trace)
            held += size
        else:
            dropped += 1
    skipped.append(
        f"dropped {dropped} traces whose root never came "
        f"(over {limit} waiting spans or {max_bytes // MIB} MiB)"
    )
    return kept


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
        return f"{self.client.shown} project {self.project}"

    def poll(self, position: dict[str, Any], now: datetime) -> Poll:
        since = _moment(position.get("since")) or self.start
        horizon = now - timedelta(seconds=self.settle)
        if since is not None and since > horizon + STEP and "since" in position:
            # the clock was stepped back past the saved point (or forward, then back):
            # waiting for it would skip every span started until the clock got there
            # again, so reading goes on from now (what was decided is not decided twice)
            note = f"the clock is behind the checkpoint ({since.isoformat()}): read from now"
            return Poll(position={"since": horizon.isoformat()}, skipped=[note])
        if since is not None and since >= horizon:
            return Poll(position=dict(position))
        skipped: list[str] = []
        spans = list(self.client.spans(self.project, since=since, bad=skipped.append))
        extraction = cases_of_traces(spans, self.mapping, required=self.required, shape=self.shape)
        limit = int(horizon.timestamp() * 1e9)
        settled = Extraction(
            cases=[c for c in extraction.cases if extraction.starts[c.id] < limit],
            starts=extraction.starts,
            missing=extraction.missing,
            broken=extraction.broken,
        )
        return _poll_of(settled, {"since": horizon.isoformat()}, skipped)


def _moment(text: Any) -> datetime | None:
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if value is None:
        raise BadPosition(f"since {text!r} is not an ISO 8601 time")
    return value if value.tzinfo else value.replace(tzinfo=UTC)
