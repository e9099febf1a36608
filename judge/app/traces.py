"""The traces jobs: `pull` reads traces (an OTLP JSON file or a Phoenix project) into a
cases file, `push` writes graded records back to Phoenix as span annotations. The
mapping from spans to cases is the project file's (`[tool.judge.traces]`) with the
request's slice attributes; `judge watch` (judge.app.watch) reads traces the same way."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from judge.app.judging import rubric_library
from judge.app.references import JoinCount, check_references_option, join_case, load_references
from judge.errors import UsageError
from judge.kinds import get_kind
from judge.project_config import ProjectConfig
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.traces.mapping import TraceMapping
from judge.traces.phoenix import PhoenixClient
from judge.traces.pull import (
    Streamed,
    pull_otlp,
    pull_phoenix_into,
    push_phoenix,
    read_records,
    write_cases,
)
from judge.traces.urls import shown_url


@dataclass(frozen=True)
class TracesRequest:
    """`judge traces pull | push`."""

    action: str
    records: Path | None
    otlp: Path | None
    phoenix: str | None
    project: str | None
    since: datetime | None
    until: datetime | None
    rubric: str | None
    slice_attr: tuple[str, ...]
    output: Path | None
    rubrics_dir: tuple[Path, ...]
    shape: str = "auto"  # `--as`: agent traces as conversations (judge.traces.conversation)
    references: Path | None = None  # `--references REFS --join-on FIELD` (judge.app.references)
    join_on: str | None = None


@dataclass(frozen=True)
class Pulled:
    """The cases written, where from, the answered requests skipped (why, each), and the
    traces or spans skipped whole (a parent cycle, a span without its ids)."""

    cases: int
    source: str
    output: Path
    missing: list[str]  # the first lines of each; the counts below count them all
    broken: list[str]
    missing_count: int
    broken_count: int
    notes: list[str] = field(default_factory=list)  # traces put together; references joined


@dataclass(frozen=True)
class Pushed:
    """The span annotations written, the records left out (not graded), and the graded
    records Phoenix did not say it stored (sent, not counted as written)."""

    written: int
    left: int
    target: str
    unstored: int = 0


def mapping_of(project: ProjectConfig | None, slice_attr: tuple[str, ...]) -> TraceMapping:
    """The default mapping, overridden by `[tool.judge.traces]`, with `--slice-attr`."""
    table = project.settings.traces if project is not None else None
    where = f"{project.label if project is not None else 'config'} traces"
    mapping = TraceMapping.from_table(table or {}, where)
    if slice_attr:
        mapping = replace(mapping, slices=tuple(slice_attr))
    return mapping


def phoenix_client(request: Any, env: Mapping[str, str]) -> PhoenixClient:
    """The Phoenix client of a request with `--phoenix URL --project NAME`."""
    if not request.project:
        raise UsageError("--phoenix needs --project NAME")
    return PhoenixClient(request.phoenix, api_key=env.get("PHOENIX_API_KEY") or None)


def pull_traces(request: TracesRequest, env: Mapping[str, str], mapping: TraceMapping) -> Pulled:
    """`pull`: one case per answered request, written to the request's output."""
    if request.output is None:
        raise UsageError("judge traces pull needs -o CASES.jsonl")
    check_references_option(request.references, request.join_on)
    if (request.otlp is None) == (request.phoenix is None):
        raise UsageError("judge traces pull needs one of --otlp FILE or --phoenix URL")
    required: list[str] = []
    if request.rubric:
        rubric = load_rubric(request.rubric, rubric_library(request, env))
        required = get_kind(rubric.kind).required_inputs(rubric)
    join, joined = _joiner(request)
    if request.otlp is not None:
        extraction = pull_otlp(request.otlp, mapping, required=required, shape=request.shape)
        if join is not None:
            extraction.cases = [join(case) for case in extraction.cases]
        write_cases(extraction, request.output)
        missing, broken = [str(m) for m in extraction.missing], extraction.broken
        notes = [*extraction.grouped, *joined()]
        cases = len(extraction.cases)
        pulled = Pulled(
            cases, str(request.otlp), request.output, missing, broken, len(missing), len(broken)
        )
        return replace(pulled, notes=notes)
    with phoenix_client(request, env) as client:
        streamed = pull_phoenix_into(
            client,
            str(request.project),
            request.output,
            mapping,
            since=request.since,
            until=request.until,
            required=required,
            shape=request.shape,
            join=join,
        )
    if streamed.stopped is not None:
        raise _kept(streamed, request.output)
    tally = streamed.tally
    source = f"{shown_url(str(request.phoenix))} project {request.project}"
    notes = [*streamed.notes, *joined()]
    return Pulled(
        streamed.cases,
        source,
        request.output,
        tally.missing,
        tally.broken,
        tally.missing_count,
        tally.broken_count,
        notes,
    )


def _joiner(
    request: TracesRequest,
) -> tuple[Callable[[Case], Case] | None, Callable[[], list[str]]]:
    """`--references REFS --join-on FIELD`: each case through the join, and the line that
    says what it joined (none without the option)."""
    if request.references is None or request.join_on is None:
        return None, list
    refs, count = load_references(request.references, request.join_on), JoinCount()
    return (lambda case: join_case(case, refs, count)), (lambda: [count.line(refs)])


def _kept(streamed: Streamed, output: Path) -> Exception:
    """The error that stopped a pull, saying what was kept of it (one line still)."""
    exc = streamed.stopped
    assert exc is not None
    if streamed.cases:
        kept = f"the {streamed.cases} cases of the spans pulled before it are in {output}"
    else:
        kept = "no case was pulled before it; nothing was written"
    exc.args = (f"{exc}; {kept}",)
    return exc


def push_traces(request: TracesRequest, env: Mapping[str, str]) -> Pushed:
    """`push`: each graded record as an annotation on its span in Phoenix."""
    if request.records is None or request.phoenix is None:
        raise UsageError("judge traces push needs RECORDS and --phoenix URL --project NAME")
    records = read_records(request.records)
    with phoenix_client(request, env) as client:
        written = push_phoenix(client, records)
    target = f"{shown_url(request.phoenix)} project {request.project}"
    graded = sum(r.status in ("ok", "abstained") for r in records)  # what annotate sends
    return Pushed(written, len(records) - graded, target, unstored=graded - written)
