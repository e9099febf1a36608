"""`judge grade`: arguments -> a `GradeRequest`, the grade job (judge.app.grade), its exit
code. Loaded only when `grade` is chosen (judge.cli._parser)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from judge.app.edge import reporting
from judge.app.grade import grade as grade_job
from judge.cli._common import add_judge_options
from judge.cli._engine import add_engine_options
from judge.cli._grade_many import add_diagnosis_options
from judge.cli._help import GRADE_EXAMPLES
from judge.cli._html import add_html_option
from judge.cli._labels import add_human_labels_option
from judge.cli._otel import add_otel_option
from judge.cli._parquet import add_parquet_option
from judge.cli._requests import GradeRequest, request_from
from judge.cli._run import add_run_options, cli_edge
from judge.cli._selection import add_selection_options


def add_grade(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "grade",
        help="grade an answer set (JSONL or CSV) with one rubric or several",
        description="Grade every case of INPUT with one rubric, or several in one pass; one "
        "record per case and rubric, in input order, then a summary (with several rubrics, "
        "the two-by-two of retrieval and generation when both are graded).",
        epilog=GRADE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_io_options(p)
    _add_scale_options(p)
    add_human_labels_option(p)
    add_html_option(p)
    add_otel_option(p)
    add_engine_options(p)
    add_judge_options(p)
    add_run_options(p)
    add_diagnosis_options(p)
    p.set_defaults(run=run_grade)


def _add_io_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "input", help="JSONL, CSV or Parquet file of cases, or - for stdin (then -o is needed)"
    )
    p.add_argument(
        "--rubric",
        required=True,
        help="ID or ID@VERSION (latest version if omitted); several, comma-separated "
        "(retrieval,faithfulness,correctness), grade in one pass",
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        help="records file (default: INPUT.RUBRIC.jsonl); with several rubrics a folder "
        "holding RUBRIC.jsonl for each (default: INPUT.graded/)",
    )
    p.add_argument("--summary", type=Path, help="also write the summary as JSON here")
    add_parquet_option(p)
    p.add_argument("--input-format", choices=["jsonl", "csv"], help="format of stdin input")
    add_selection_options(p)
    p.add_argument("--overwrite", action="store_true", help="start over instead of resuming")
    p.add_argument("--price-input", type=float, help="USD per million prompt tokens")
    p.add_argument("--price-output", type=float, help="USD per million completion tokens")


def _add_scale_options(p: argparse.ArgumentParser) -> None:
    scale = p.add_mutually_exclusive_group()  # judge/cli/batch.py runs these
    scale.add_argument("--batch-api", action="store_true", help="grade through the Batch API")
    scale.add_argument(
        "--export-batch",
        metavar="REQUESTS.jsonl",
        help="only write the batch request file (with --jury: a folder, DIR/JUROR.jsonl each)",
    )
    scale.add_argument(
        "--import-batch",
        metavar="RESULTS.jsonl",
        action="append",
        help="records from a batch results file (OpenAI or vLLM; repeat for several; with "
        "--jury: one folder of JUROR.jsonl / JUROR.*.jsonl results)",
    )
    p.add_argument(
        "--jury",
        type=Path,
        metavar="JURY.yaml",
        help="grade with a panel of judges named in this file; -o is then a folder holding "
        "RUBRIC.jsonl (the panel) and jurors/NAME.jsonl (default: INPUT.jury/)",
    )
    p.add_argument(
        "--retry-failed",
        action="store_true",
        help="with --jury: ask the jurors again for the cases whose replies did not parse "
        "(a rerun keeps them otherwise; a single judge asks them again on every rerun)",
    )


def run_grade(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return grade(request_from(GradeRequest, args), env)


def grade(request: GradeRequest, env: Mapping[str, str]) -> int:
    """`judge grade`, from its request: the job's exit code, its lines printed as it goes."""
    with reporting(cli_edge(env)):
        return grade_job(request, env).code
