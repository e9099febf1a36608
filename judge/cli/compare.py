"""`judge compare RUN_A RUN_B [RUN ...]`: systems graded with the same rubrics on the same
cases, compared metric by metric (each later run against the first). Parsing and printing
only: the runs are read by judge.report.runs, the statistics are calibration.compare.runs'.
Loaded only when `compare` is chosen."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from calibration.decisions.gates import evaluate
from calibration.inference.intervals import DEFAULT_RESAMPLES
from calibration.io.jsonout import write_strict_json
from calibration.report.comparison import render_compare_markdown
from judge.cli._common import EXIT_GATE, EXIT_OK, add_rubrics_dir_option, rubric_library
from judge.cli._help import COMPARE_EXAMPLES
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import CompareRequest, request_from
from judge.engine.measure.run_gates import check_conditions
from judge.errors import UsageError
from judge.report.compare import compare_runs, gate_values
from judge.report.compare_report import write_compare_report
from judge.report.foreign_runs import read_any_run
from judge.report.runs import Run


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
    p.add_argument(
        "runs",
        nargs="+",
        type=Path,
        metavar="RUN",
        help="a folder of records files (judge grade --rubric A,B -o RUN/) or one records "
        "file; two or more, each later one compared with the first",
    )
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the result as JSON")
    p.add_argument(
        "--html",
        type=Path,
        metavar="REPORT.html",
        help="also write a self-contained HTML report (opens offline): the table, then the "
        "cases that regressed and improved with their two records side by side",
    )
    p.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="family-wise error rate of Holm's correction (%(default)s)",
    )
    p.add_argument(
        "--resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        help="bootstrap resamples of each interval (%(default)s)",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (%(default)s)")
    p.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="GLOB",
        help="compare only the metrics this matches, e.g. 'retrieval.*' or '*.score' "
        "(repeatable; fewer tests, a smaller family for Holm's correction)",
    )
    p.add_argument(
        "--fail-if",
        action="append",
        default=[],
        metavar="EXPR",
        help="exit 3 when METRIC OP NUMBER holds for a comparison, e.g. "
        "'faithfulness.score.diff < -0.05' or 'significant_lower > 0' (repeatable)",
    )
    p.add_argument(
        "--from",
        dest="from_tool",
        choices=["promptfoo", "deepeval", "inspect", "ragas"],
        help="read every RUN file as this tool's output (detected when not given): each of "
        "its metrics is compared as METRIC.score",
    )
    add_rubrics_dir_option(p)
    p.set_defaults(run=run_compare)


def run_compare(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return compare_command(request_from(CompareRequest, args), env)


def compare_command(request: CompareRequest, env: Mapping[str, str]) -> int:
    """`judge compare`, from its request."""
    if len(request.runs) < 2:
        raise UsageError("compare needs two runs or more (RUN_A RUN_B ...)")
    if not 0.0 < request.alpha < 1.0:
        raise UsageError(f"--alpha must be between 0 and 1, got {request.alpha}")
    if request.resamples < 1:
        raise UsageError(f"--resamples must be at least 1, got {request.resamples}")
    example = "faithfulness.score.diff < -0.05"
    outputs = [Output("--json", request.json, "compare")] if request.json else []
    outputs += [Output("--html", request.html, "html")] if request.html else []
    if outputs:
        check_outputs(outputs, request.runs, overwrite=False)
    library = rubric_library(request, env)
    runs = [read_any_run(path, library, request.from_tool) for path in request.runs]
    result = compare_runs(
        runs,
        alpha=request.alpha,
        n_resamples=request.resamples,
        seed=request.seed,
        only=request.metric,
    )
    if not result["tests"]:
        raise UsageError(
            "no metric both runs have"
            + (f" matches --metric {' '.join(request.metric)}" if request.metric else "")
            + (_valueless(runs) or "; compare runs graded with the same rubrics")
        )
    values = [gate_values(c) for c in result["comparisons"]]
    names = set().union(*values)  # known once the runs are read (nothing is sent: no cost)
    conditions = check_conditions(request.fail_if, names, what="this comparison", example=example)
    if request.json:
        write_strict_json(request.json, result)
    if request.html:
        write_compare_report(request.html, result, runs)
        print(f"report: {request.html}", file=sys.stderr)
    sys.stdout.write(render_compare_markdown(result))
    failed = False
    for comparison, figures in zip(result["comparisons"], values, strict=True):
        for check in evaluate(conditions, figures):
            where = f"{comparison['b']} vs {comparison['a']}"
            line = f"{check.condition.text}: {check.value_text('g')} -> {check.outcome()}"
            print(f"gate: {where}: {line}", file=sys.stderr)
            failed = failed or check.fails
    return EXIT_GATE if failed else EXIT_OK


def _valueless(runs: list[Run]) -> str:
    """Where the runs share a rubric but a run holds no value of it (no verdict parsed):
    what each holds, so that "graded with the same rubrics" is not the advice."""
    shared = set.intersection(*(set(run.rubrics) for run in runs))
    empty = [
        f"{run.name} has {len(run.rubrics[r].ids)} {r} records and no value"
        for run in runs
        for r in sorted(shared)
        if not any(run.rubrics[r].values.values())
    ]
    return f": {'; '.join(empty)} (no verdict parsed)" if shared and empty else ""
