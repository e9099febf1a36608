"""`judge traces pull | push`: traces in as a cases file, verdicts out as Phoenix span
annotations. Parsing and printing only; the jobs are judge.app.traces'."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from judge.app.traces import TracesRequest, mapping_of, pull_traces, push_traces
from judge.cli._common import add_rubrics_dir_option
from judge.cli._references import add_references_option
from judge.cli._requests import request_from

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
        "answer from the spans; the id is the span id), or one conversation case per agent "
        "trace (messages, tool calls and results; see --as). push: each graded record as a "
        "span annotation on its span in Phoenix.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", choices=["pull", "push"], help="pull cases in, or push verdicts out")
    p.add_argument("records", nargs="?", type=Path, help="push: the records file")
    add_source_options(p)
    p.add_argument("--rubric", help="pull: the rubric the cases are for (its inputs are required)")
    p.add_argument("-o", "--output", type=Path, help="pull: the cases file to write")
    add_references_option(p)
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
    p.add_argument(
        "--as",
        dest="shape",
        choices=["auto", "conversations", "answers"],
        default="auto",
        help="what a trace becomes: one conversation case (messages, tool calls, results) or "
        "question/answer cases; auto: the rubric's inputs decide, else a trace with a tool or "
        "agent span is a conversation (auto)",
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
    if request.action == "push":
        pushed = push_traces(request, env)
        notes = [f"{pushed.left} not graded: api_error or parse_error"] if pushed.left else []
        if pushed.unstored:
            notes.append(f"{pushed.unstored} sent that Phoenix did not say it stored")
        note = f" ({'; '.join(notes)})" if notes else ""
        print(f"traces: {pushed.written} span annotations written to {pushed.target}{note}")
        return 0
    pulled = pull_traces(request, env, mapping)
    print(f"traces: {pulled.cases} cases from {pulled.source} -> {pulled.output}")
    for line in pulled.notes:
        print(f"traces: {line}")
    _print_skipped(pulled.broken, "traces or spans skipped, unreadable", pulled.broken_count)
    if pulled.missing_count:
        print(
            f"traces: {pulled.missing_count} answered requests skipped, lacking a field "
            f"the rubric needs:",
            file=sys.stderr,
        )
        for missing in pulled.missing[:MISSING_SHOWN]:
            print(f"  {missing}", file=sys.stderr)
        if pulled.missing_count > MISSING_SHOWN:
            print(f"  ... and {pulled.missing_count - MISSING_SHOWN} more", file=sys.stderr)
    return 0


def _print_skipped(lines: list[str], what: str, count: int | None = None) -> None:
    count = len(lines) if count is None else count
    if not count:
        return
    print(f"traces: {count} {what}:", file=sys.stderr)
    for line in lines[:MISSING_SHOWN]:
        print(f"  {line}", file=sys.stderr)
    if count > MISSING_SHOWN:
        print(f"  ... and {count - MISSING_SHOWN} more", file=sys.stderr)
