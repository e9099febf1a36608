"""Traces in (an OTLP JSON file, a Phoenix project) -> a cases file; records out (Phoenix
annotations, OTLP events from a records file). Typed arguments in, counts out: the CLI
prints them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from judge.engine.atomic import replace_text
from judge.engine.inputs import iter_cases
from judge.engine.records import scan_records
from judge.errors import InputError, OutputWriteError, UsageError
from judge.schemas import Case, GradedRecord
from judge.traces.conversation import add_trace, cases_of_traces, shape_for
from judge.traces.grouping import could_join
from judge.traces.mapping import Extraction, TraceMapping, stamp_start_times
from judge.traces.otel import EvaluationExporter, ExportCounts
from judge.traces.phoenix import PhoenixClient, PhoenixError
from judge.traces.spans import Span, open_regular, read_otlp_file
from judge.traces.spool import GROUP_BYTES, MAX_TRACE_BYTES, CaseSpool, PullTally, SpanSpool

__all__ = [
    "export_records",
    "pull_otlp",
    "pull_phoenix",
    "pull_phoenix_into",
    "push_phoenix",
    "read_records",
    "trace_links",
    "write_cases",
]


def otlp_spans(path: Path) -> Iterator[Span]:
    for _, spans in read_otlp_file(path):
        yield from spans


def pull_otlp(
    path: Path,
    mapping: TraceMapping | None = None,
    *,
    required: Iterable[str] = (),
    shape: str = "auto",
) -> Extraction:
    """The cases of every answered request in an OTLP JSON file (agent traces as
    conversations, as `shape` says: judge.traces.conversation)."""
    return cases_of_traces(otlp_spans(path), mapping, required=required, shape=shape)


def pull_phoenix(
    client: PhoenixClient,
    project: str,
    mapping: TraceMapping | None = None,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    required: Iterable[str] = (),
    shape: str = "auto",
) -> Extraction:
    """The cases of every answered request Phoenix holds for `project` in [since, until)
    (agent traces as conversations, as `shape` says)."""
    bad: list[str] = []
    spans = client.spans(project, since=since, until=until, bad=bad.append)
    extraction = cases_of_traces(spans, mapping, required=required, shape=shape)
    extraction.broken[:0] = bad
    return extraction


@dataclass
class Streamed:
    """A streamed pull: the cases written, what was skipped, how traces were put together
    (`notes`), and the error that stopped the pull before Phoenix had no more (a cap, a
    cursor loop, Phoenix gone), if one did."""

    cases: int
    tally: PullTally
    stopped: PhoenixError | None = None
    notes: list[str] = field(default_factory=list)


def pull_phoenix_into(
    client: PhoenixClient,
    project: str,
    output: Path,
    mapping: TraceMapping | None = None,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    required: Iterable[str] = (),
    shape: str = "auto",
    join: Callable[[Case], Case] | None = None,
) -> Streamed:
    """`pull_phoenix`, holding a bounded window (judge.traces.spool): each page spooled to
    disk as it comes, each trace turned into cases alone, except the traces that could be
    put together into one conversation (judge.traces.grouping), held up to GROUP_BYTES. A
    pull stopped by one of its limits, a cursor loop or Phoenix failing midway still writes
    the cases of the spans it had (when there are any) and returns the error in `stopped`
    for the caller to say. `join`: each case through it before it is kept (--references)."""
    mapping = mapping or TraceMapping()
    needed = tuple(required)
    chosen = shape_for(needed, shape)
    tally, notes = PullTally(), []
    stopped: PhoenixError | None = None
    with SpanSpool() as spool:
        try:
            page: list[Span] = []
            for span in client.spans(project, since=since, until=until, bad=tally.skipped):
                page.append(span)
                if len(page) >= 1000:
                    spool.add(page)
                    page = []
        except PhoenixError as exc:
            stopped = exc
        spool.add(page)
        found = CaseSpool(spool)

        def keep(extraction: Extraction) -> None:
            stamp_start_times(extraction)  # each case's `time`: its trace's start
            if join is not None:
                extraction.cases = [join(case) for case in extraction.cases]
            found.add(extraction)
            tally.add(extraction)

        held: list[Span] = []
        held_bytes, alone = 0, 0
        for trace, size in spool.traces(lambda tid, size: tally.skipped(_too_big(tid, size))):
            if chosen != "answers" and could_join(trace, mapping):
                if held_bytes + size <= GROUP_BYTES:
                    held.extend(trace)
                    held_bytes += size
                    continue
                alone += 1
            one = Extraction()
            add_trace(trace, mapping, needed, chosen, one)
            keep(one)
        if held:
            grouped = cases_of_traces(held, mapping, required=needed, shape=shape)
            keep(grouped)
            notes.extend(grouped.grouped)
        if alone:
            notes.append(
                f"{alone} traces read alone, not put together with others: past the "
                f"{GROUP_BYTES // (1024 * 1024)} MiB of spans a pull holds for that"
            )
        if found.count or stopped is None:
            found.write(output)
        return Streamed(found.count, tally, stopped, notes)


def _too_big(trace_id: str, size: int) -> str:
    mib, cap = size / (1024 * 1024), MAX_TRACE_BYTES // (1024 * 1024)
    return f"trace {trace_id}: {mib:.0f} MiB of spans, over the {cap} MiB one trace may hold"


def write_cases(extraction: Extraction, output: Path) -> None:
    """The cases as JSONL (written whole, then moved into place). An `-o` that cannot be
    a file (a folder, under a file, not ours to write) is a UsageError naming it."""
    text = "".join(c.model_dump_json(exclude_defaults=True) + "\n" for c in extraction.cases)
    try:
        replace_text(output, text)
    except (IsADirectoryError, NotADirectoryError, FileExistsError, PermissionError) as exc:
        raise UsageError(f"-o {output}: cannot be written ({exc.strerror})") from None
    except OSError as exc:
        raise OutputWriteError(str(output), exc, resume="nothing was written") from None


def read_records(path: Path) -> list[GradedRecord]:
    """The records of a records file; a line that is not a record is an InputError naming
    the file and line. Only a regular file is read (a FIFO would be waited on, /dev/zero
    read until memory ran out): anything else is an InputError naming what it is."""
    try:
        open_regular(path).close()  # what it is, told before a line is read
    except FileNotFoundError as exc:
        raise InputError(str(path), [(None, None, f"cannot be read ({exc.strerror})")]) from None
    out = []
    for offset, data in scan_records(path):
        try:
            out.append(GradedRecord.model_validate(data))
        except ValueError:
            raise InputError(
                str(path), [(None, None, f"the line at byte {offset} is not a graded record")]
            ) from None
    return out


def trace_links(cases_path: Path | None) -> dict[str, dict[str, Any]]:
    """case id -> its trace metadata (`trace_id`, `span_id`, `response_id`), for cases
    that came from a trace; empty without a cases file."""
    if cases_path is None:
        return {}
    links = {}
    for case in iter_cases(cases_path):
        if "trace_id" in case.metadata or "response_id" in case.metadata:
            links[case.id] = {
                str(k): case.metadata[k]
                for k in ("trace_id", "span_id", "response_id")
                if k in case.metadata
            }
    return links


def export_records(
    records: Iterable[GradedRecord],
    endpoint: str,
    links: dict[str, dict[str, Any]],
    **options: Any,
) -> ExportCounts:
    """One `gen_ai.evaluation.result` event per record to an OTLP/HTTP collector."""
    with EvaluationExporter(endpoint, **options) as exporter:
        exporter.send_all(records, links)
    return exporter.counts


def push_phoenix(client: PhoenixClient, records: Iterable[GradedRecord]) -> int:
    """Each graded record as a span annotation on its span (the record id); the count."""
    return client.annotate(records)
