"""`judge traces pull | push`: traces in as a cases file, verdicts out as Phoenix span
annotations. Parsing and printing only; the work is in judge.traces."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judge.cli._common import add_rubrics_dir_option, rubric_library
from judge.cli._requests import TracesRequest, request_from
from judge.errors import UsageError
from judge.kinds import get_kind
from judge.project_config import ProjectConfig
from judge.rubric import load_rubric
from judge.traces.mapping import TraceMapping
from judge.traces.phoenix import PhoenixClient
from judge.traces.pull import pull_otlp, pull_phoenix, push_phoenix, read_records, write_cases

EXAMPLES = """examples:
  judge traces pull --otlp traces.jsonl -o cases.jsonl
  judge traces pull --phoenix http://127.0.0.1:6006 --project rag-app --since 2026-12-01 \\
      --rubric faithfulness -o cases.jsonl
  judge grade cases.jsonl --rubric faithfulness -o graded.jsonl
  judge traces push graded.jsonl --phoenix http://127.0.0.1:6006 --project rag-app
"""
MISSING_SHOWN = 10


def add_traces(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "traces",
        help="traces in (OTLP JSON, Phoenix) as cases; verdicts out as Phoenix annotations",
        description="pull: one case per answered request of the traces (question, contexts and "
        "answer from the spans; the id is the span id). push: each graded record as a span "
        "annotation on its span in Phoenix.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", choices=["pull", "push"], help="pull cases in, or push verdicts out")
    p.add_argument("records", nargs="?", type=Path, help="push: the records file")
    add_source_options(p)
    p.add_argument("--rubric", help="pull: the rubric the cases are for (its inputs are required)")
    p.add_argument("-o", "--output", type=Path, help="pull: the cases file to write")
    add_rubrics_dir_option(p)
    p.set_defaults(run=run_traces)


def add_source_options(p: argparse.ArgumentParser) -> None:
    """Where traces come from (shared with `judge watch`)."""
    p.add_argument("--otlp", type=Path, metavar="FILE", help="OTLP JSON (Collector file exporter)")
    p.add_argument("--phoenix", metavar="URL", help="a Phoenix server (key: $PHOENIX_API_KEY)")
    p.add_argument("--project", help="the Phoenix project")
    p.add_argument("--since", type=moment, help="spans started at or after (ISO 8601, UTC)")
    p.add_argument("--until", type=moment, help="spans started before (ISO 8601, UTC)")
    p.add_argument(
        "--slice-attr",
        action="append",
        default=[],
        metavar="ATTRIBUTE",
        help="a span (or resource) attribute whose value becomes a slice; repeatable",
    )


def moment(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def run_traces(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    request = request_from(TracesRequest, args)
    mapping = mapping_of(getattr(args, "project_config", None), request.slice_attr)
    if request.action == "pull":
        return pull_command(request, env, mapping)
    return push_command(request, env)


def mapping_of(project: ProjectConfig | None, slice_attr: tuple[str, ...]) -> TraceMapping:
    """The default mapping, overridden by `[tool.judge.traces]`, with `--slice-attr`."""
    table = project.settings.traces if project is not None else None
    where = f"{project.label if project is not None else 'config'} traces"
    mapping = TraceMapping.from_table(table or {}, where)
    if slice_attr:
        mapping = replace(mapping, slices=tuple(slice_attr))
    return mapping


def phoenix_client(request: Any, env: Mapping[str, str]) -> PhoenixClient:
    if not request.project:
        raise UsageError("--phoenix needs --project NAME")
    return PhoenixClient(request.phoenix, api_key=env.get("PHOENIX_API_KEY") or None)


def pull_command(request: TracesRequest, env: Mapping[str, str], mapping: TraceMapping) -> int:
    if request.output is None:
        raise UsageError("judge traces pull needs -o CASES.jsonl")
    if (request.otlp is None) == (request.phoenix is None):
        raise UsageError("judge traces pull needs one of --otlp FILE or --phoenix URL")
    required: list[str] = []
    if request.rubric:
        rubric = load_rubric(request.rubric, rubric_library(request, env))
        required = get_kind(rubric.kind).required_inputs(rubric)
    if request.otlp is not None:
        extraction = pull_otlp(request.otlp, mapping, required=required)
        source = str(request.otlp)
    else:
        with phoenix_client(request, env) as client:
            extraction = pull_phoenix(
                client,
                str(request.project),
                mapping,
                since=request.since,
                until=request.until,
                required=required,
            )
        source = f"{request.phoenix} project {request.project}"
    write_cases(extraction, request.output)
    print(f"traces: {len(extraction.cases)} cases from {source} -> {request.output}")
    if extraction.missing:
        print(
            f"traces: {len(extraction.missing)} answered requests skipped, lacking a field "
            f"the rubric needs:",
            file=sys.stderr,
        )
        for missing in extraction.missing[:MISSING_SHOWN]:
            print(f"  {missing}", file=sys.stderr)
        if len(extraction.missing) > MISSING_SHOWN:
            print(f"  ... and {len(extraction.missing) - MISSING_SHOWN} more", file=sys.stderr)
    return 0


def push_command(request: TracesRequest, env: Mapping[str, str]) -> int:
    if request.records is None or request.phoenix is None:
        raise UsageError("judge traces push needs RECORDS and --phoenix URL --project NAME")
    records = read_records(request.records)
    with phoenix_client(request, env) as client:
        written = push_phoenix(client, records)
    left = len(records) - written
    note = f" ({left} not graded: api_error or parse_error)" if left else ""
    print(
        f"traces: {written} span annotations written to {request.phoenix} "
        f"project {request.project}{note}"
    )
    return 0
