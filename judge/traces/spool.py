"""A pull's bounded window: spans spooled to disk as they arrive, traces read back one at a
time, cases spooled and written out in start order.

A Phoenix pull can run to thousands of pages (its cap is 2 GiB of answers). Holding every
span as Python objects until the end made a pull against an endless cursor grow past
2 GB resident before its cap was reached. Here the process holds one page, one trace and
the indexes SQLite keeps on disk: the spans go into a private SQLite file (a folder of
mode 0700 under the system's temporary folder, removed at the end), deduplicated by span id
as they arrive (the first copy is kept, as judge.traces.mapping does), and the cases of
each trace go into a second table, written out in start order when the pull ends.

A trace bigger than `MAX_TRACE_BYTES` of span JSON is skipped and named (one trace is
read into memory whole to be turned into cases). Traces that could be put together into one
conversation with others (judge.traces.grouping: a session id, a model call alone) are held
until the end, up to `GROUP_BYTES`; past it, such traces are read alone and that is said; the skipped and missing lists keep their
first `KEPT_LINES` lines and a count, so a stream of broken spans cannot grow them either.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from judge.engine.atomic import replacing
from judge.traces.mapping import Extraction
from judge.traces.spans import Span

__all__ = ["GROUP_BYTES", "MAX_TRACE_BYTES", "CaseSpool", "PullTally", "SpanSpool"]

MAX_TRACE_BYTES = 32 * 1024 * 1024  # span JSON of one trace (an agent's long run: a few MB)
GROUP_BYTES = 256 * 1024 * 1024  # span JSON held to put traces together into conversations
KEPT_LINES = 1_000  # missing and skipped lines kept to print; the rest only counted


class SpanSpool:
    """Spans kept on disk, once per span id, read back trace by trace."""

    def __init__(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="judge-pull-")  # mode 0700
        self._db = sqlite3.connect(Path(self._folder.name) / "spool.sqlite3")
        self._db.executescript(
            """
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            PRAGMA cache_size = -16000;
            CREATE TABLE spans (seq INTEGER PRIMARY KEY, span_id TEXT UNIQUE,
                                trace_id TEXT, data TEXT);
            CREATE TABLE cases (id TEXT PRIMARY KEY, start INTEGER, data TEXT);
            """
        )
        self.spans = 0

    def add(self, spans: Iterable[Span]) -> None:
        """Keep these spans (a span id seen before keeps its first copy)."""
        rows = [(s.span_id, s.trace_id, json.dumps(s.to_json(), ensure_ascii=False)) for s in spans]
        with self._db:
            cursor = self._db.executemany(
                "INSERT OR IGNORE INTO spans (span_id, trace_id, data) VALUES (?, ?, ?)", rows
            )
        self.spans += max(cursor.rowcount, 0)

    def traces(self, too_big: Callable[[str, int], None]) -> Iterator[tuple[list[Span], int]]:
        """Each trace's spans in arrival order with their size in bytes of JSON, one trace
        at a time; a trace over
        MAX_TRACE_BYTES is not read into memory but said to `too_big` (its id, its bytes)."""
        rows = self._db.execute(
            "SELECT trace_id, data FROM spans ORDER BY trace_id, seq"
        )  # a separate cursor: the cases table is written while this one reads
        current: str | None = None
        spans: list[Span] = []
        size = 0
        for trace_id, data in rows:
            if trace_id != current:
                if current is not None:
                    yield from _finished(current, spans, size, too_big)
                current, spans, size = trace_id, [], 0
            size += len(data)
            if size <= MAX_TRACE_BYTES:
                spans.append(Span.from_json(json.loads(data)))
            else:
                spans = []
        if current is not None:
            yield from _finished(current, spans, size, too_big)

    def close(self) -> None:
        self._db.close()
        self._folder.cleanup()

    def __enter__(self) -> SpanSpool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def db(self) -> sqlite3.Connection:
        return self._db


def _finished(
    trace_id: str, spans: list[Span], size: int, too_big: Callable[[str, int], None]
) -> Iterator[tuple[list[Span], int]]:
    if size > MAX_TRACE_BYTES:
        too_big(trace_id, size)
    else:
        yield spans, size


class CaseSpool:
    """Cases kept on disk (once per id: the first is kept), written out in start order."""

    def __init__(self, spool: SpanSpool) -> None:
        self._db = spool.db
        self.count = 0

    def add(self, extraction: Extraction) -> None:
        rows = [
            (case.id, extraction.starts[case.id], case.model_dump_json(exclude_defaults=True))
            for case in extraction.cases
        ]
        with self._db:
            cursor = self._db.executemany(
                "INSERT OR IGNORE INTO cases (id, start, data) VALUES (?, ?, ?)", rows
            )
        self.count += max(cursor.rowcount, 0)

    def write(self, output: Path) -> None:
        """The cases as JSONL in start order (then id), replacing `output` atomically."""
        with replacing(output) as handle:
            for (data,) in self._db.execute("SELECT data FROM cases ORDER BY start, id"):
                handle.write(data.encode("utf-8") + b"\n")


@dataclass
class PullTally:
    """What a streamed pull found beside its cases: the requests skipped for a missing
    field and the traces or spans skipped whole, each the first KEPT_LINES lines and a count."""

    missing: list[str] = field(default_factory=list)
    missing_count: int = 0
    broken: list[str] = field(default_factory=list)
    broken_count: int = 0

    def add(self, extraction: Extraction) -> None:
        for missing in extraction.missing:
            self.missed(str(missing))
        for line in extraction.broken:
            self.skipped(line)

    def missed(self, line: str) -> None:
        self.missing_count += 1
        if len(self.missing) < KEPT_LINES:
            self.missing.append(line)

    def skipped(self, line: str) -> None:
        self.broken_count += 1
        if len(self.broken) < KEPT_LINES:
            self.broken.append(line)
