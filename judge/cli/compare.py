"""`judge compare RUN_A RUN_B [RUN ...]`: systems graded with the same rubrics on the same
cases, compared metric by metric (each later run against the first). Parsing and printing
only: the job is `judge.app.compare`. Loaded only when `compare` is chosen."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from judge.app.compare import DEFAULT_RESAMPLES, check_compare_request, compare_systems
from judge.cli._common import EXIT_GATE, EXIT_OK, add_rubrics_dir_option, rubric_library
from judge.cli._help import COMPARE_EXAMPLES
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import CompareRequest, request_from


def add_compare(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare systems graded on the same cases, metric by metric",
        description="Compare runs graded with the same rubrics on the same case ids: per "
        "metric the difference of means (B - A) with a paired bootstrap 95% interval, "
        "win/tie/loss counts, an exact sign-test p-value and which differences stay "
        "significant after Holm's correction for the number of tests; then the cases that "
        "regressed and improved (both runs ok, B's score lower or higher) and those that "
        "cannot be compared. Markdown on stdout.",
        epilog=COMPARE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_options(p)
    add_rubrics_dir_option(p)
    p.set_defaults(run=run_compare)


def _add_options(p: argparse.ArgumentParser) -> None:
    add = p.add_argument
    add("runs", nargs="+", type=Path, metavar="RUN",
        help="a folder of records files (judge grade --rubric A,B -o RUN/) or one records "
        "file; two or more, each later one compared with the first")  # fmt: skip
    add("--json", type=Path, metavar="FILE", help="also write the result as JSON")
    add("--html", type=Path, metavar="REPORT.html",
        help="also write a self-contained HTML report (opens offline): the table, then the "
        "cases that regressed and improved with their two records side by side")  # fmt: skip
    add("--alpha", type=float, default=0.05,
        help="family-wise error rate of Holm's correction (%(default)s)")  # fmt: skip
    add("--resamples", type=int, default=DEFAULT_RESAMPLES,
        help="bootstrap resamples of each interval (%(default)s)")  # fmt: skip
    add("--seed", type=int, default=0, help="bootstrap seed (%(default)s)")
    add("--metric", action="append", default=[], metavar="GLOB",
        help="compare only the metrics this matches, e.g. 'retrieval.*' or '*.score' "
        "(repeatable; fewer tests, a smaller family for Holm's correction)")  # fmt: skip
    add("--fail-if", action="append", default=[], metavar="EXPR",
        help="exit 3 when METRIC OP NUMBER holds for a comparison, e.g. "
        "'faithfulness.score.diff < -0.05' or 'significant_lower > 0' (repeatable)")  # fmt: skip
    add("--positive-label", metavar="L",
        help="the label counted as a pass in the pass-rate lines (default: each rubric's "
        "pass label, the one it scores 1.0: match, faithful, pass...)")  # fmt: skip
    add("--from", dest="from_tool", choices=["promptfoo", "deepeval", "inspect", "ragas"],
        help="read every RUN file as this tool's output (detected when not given): each of "
        "its metrics is compared as METRIC.score")  # fmt: skip


def run_compare(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return compare_command(request_from(CompareRequest, args), env)


def compare_command(request: CompareRequest, env: Mapping[str, str]) -> int:
    """`judge compare`, from its request."""
    check_compare_request(request)
    outputs = [Output("--json", request.json, "compare")] if request.json else []
    outputs += [Output("--html", request.html, "html")] if request.html else []
    if outputs:
        check_outputs(outputs, request.runs, overwrite=False)
    done = compare_systems(request, rubric_library(request, env))
    if request.html:
        print(f"report: {request.html}", file=sys.stderr)
    sys.stdout.write(done.markdown)
    for where, line in done.checks:
        print(f"gate: {where}: {line}", file=sys.stderr)
    return EXIT_GATE if done.failed else EXIT_OK
