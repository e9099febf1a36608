"""`judge grade`: parsing and printing; the work is in judge.engine.files (and judge.cli.batch for
the Batch API and batch files). Loaded only when `grade` is chosen (judge.cli._parser)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.io.jsonout import write_strict_json
from judge.api import open_grader
from judge.cli._common import (
    add_judge_options,
    announce_judge,
    config_from_args,
    print_summary,
    rubric_library,
    say_requests,
    show_progress,
)
from judge.cli._engine import add_engine_options, check_engine_options, grade_on_ray
from judge.cli._grade_many import (
    add_diagnosis_options,
    check_diagnosis_options,
    input_file,
    rubric_refs,
    run_grade_many,
)
from judge.cli._help import GRADE_EXAMPLES
from judge.cli._html import add_html_option, check_grade_html, grade_html
from judge.cli._labels import add_human_labels_option, human_labels_inputs, human_labels_option
from judge.cli._otel import add_otel_option, check_otel_option, send_records
from judge.cli._outputs import check_outputs
from judge.cli._parquet import add_parquet_option, parquet_outputs, write_parquet_option
from judge.cli._requests import GradeRequest, request_from
from judge.cli._run import (
    add_run_options,
    check_run_options,
    finish_run,
    grade_outputs,
    prices_from_args,
    run_conditions,
    selection_from_args,
)
from judge.cli._selection import add_selection_options
from judge.config import JudgeConfig
from judge.engine.files import grade_file
from judge.errors import UsageError
from judge.rubric import Rubric, load_rubric

if TYPE_CHECKING:
    from judge.engine.measure.human_labels import HumanLabels


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
    add_human_labels_option(p)
    add_html_option(p)
    add_otel_option(p)
    add_engine_options(p)
    add_judge_options(p)
    add_run_options(p)
    add_diagnosis_options(p)
    p.set_defaults(run=run_grade)


def run_grade(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return grade(request_from(GradeRequest, args), env)


def grade(request: GradeRequest, env: Mapping[str, str]) -> int:
    """`judge grade`, from its request."""
    check_engine_options(request, rubric_refs(request.rubric))
    check_otel_option(request)
    if request.jury is not None:
        from judge.cli._jury import run_grade_jury  # the jury loads only when asked for

        return run_grade_jury(request, env)
    if request.retry_failed:
        raise UsageError(
            "--retry-failed is for --jury: a single judge asks its failed cases again on "
            "every rerun"
        )
    check_grade_html(request)
    check_run_options(request)
    refs = rubric_refs(request.rubric)
    if len(refs) > 1:
        return run_grade_many(request, env, refs)
    check_diagnosis_options(request, [])
    request = replace(request, rubric=refs[0])
    if request.batch_api or request.export_batch or request.import_batch:
        # the batch paths load the SDK's types: only when asked for
        from judge.cli.batch import run_grade_batch

        return run_grade_batch(request, env)
    rubric = load_rubric(request.rubric, rubric_library(request, env))
    conditions = run_conditions(request, rubric)
    labels = human_labels_option(request)
    stdin = request.input == "-"
    if stdin and request.output is None:
        raise UsageError(
            "reading cases from stdin (-) needs -o OUT.jsonl: the records file a rerun resumes"
        )
    output = request.output or Path(f"{Path(request.input).stem}.{rubric.id}.jsonl")
    inputs = ([] if stdin else [Path(request.input)]) + human_labels_inputs(request)
    outputs = grade_outputs(request, output) + parquet_outputs(request.parquet, output)
    check_outputs(outputs, inputs, overwrite=request.overwrite)
    config = config_from_args(request.judge, env)
    with input_file(request.input, request.input_format) as input_path:
        announce_judge(config)
        prices = prices_from_args(request, config)
        if request.engine == "ray":
            summary = grade_on_ray(config, rubric, input_path, output, request, prices, labels)
        else:
            summary = asyncio.run(
                _grade(config, rubric, input_path, output, request, env, prices, labels)
            )
        grade_html(request.html, summary, output, input_path)
        send_records(request.otel_endpoint, output, input_path)
    print_summary(summary)
    print(f"records: {output}", file=sys.stderr)
    if request.summary:
        write_strict_json(request.summary, summary)
    write_parquet_option(request.parquet, output, rubric_library(request, env))
    return finish_run(summary, output, max_error_rate=request.max_error_rate, conditions=conditions)


async def _grade(
    config: JudgeConfig,
    rubric: Rubric,
    input_path: Path,
    output: Path,
    request: GradeRequest,
    env: Mapping[str, str],
    prices: tuple[float, float] | None,
    labels: HumanLabels | None = None,
) -> dict[str, Any]:
    async with open_grader(config, rubric) as grader:
        summary = await grade_file(
            grader,
            input_path,
            output,
            selection=selection_from_args(request),
            overwrite=request.overwrite,
            use_cache=config.use_cache,
            progress=show_progress(env),
            prices=prices,
            human_labels=labels,
        )
        say_requests(grader.backend)
        return summary
