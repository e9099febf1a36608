"""The grade job: a `GradeRequest` in, a `GradeResult` out (exit code, summary, records).

Every form of `judge grade` starts here and is sent to its one home: a jury
(judge.app.jury_run), several rubrics in one pass (judge.app.grade_many), the batch forms
(judge.app.batch), or one rubric graded online, here, on this process or on Ray
(judge.app.engines). The options are checked before anything is read or sent (a
UsageError, exit 2); the outputs are checked and locked (judge.app.outputs); the records,
the summary JSON, the HTML report, the Parquet table and the OpenTelemetry events are
written here. What the user should hear goes to the caller's edge (judge.app.edge)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.io.jsonout import write_strict_json
from judge.api import open_grader
from judge.app.edge import edge, note
from judge.app.engines import check_engine_options, grade_on_ray
from judge.app.grade_many import (
    check_diagnosis_options,
    input_file,
    rubric_refs,
    run_grade_many,
)
from judge.app.html import check_grade_html, grade_html
from judge.app.judges import judge_config, rubric_library
from judge.app.labels import human_labels_inputs, human_labels_option
from judge.app.otel import check_otel_option, send_records
from judge.app.outputs import check_outputs
from judge.app.parquet import parquet_outputs, write_parquet_option
from judge.app.references import check_references_option, joined
from judge.app.requests import GradeRequest
from judge.app.runs import (
    GradeResult,
    check_run_options,
    finish_run,
    grade_outputs,
    prices_from_args,
    run_conditions,
    selection_from_args,
    settle_heap,
)
from judge.config import JudgeConfig
from judge.engine.files import grade_file
from judge.errors import UsageError
from judge.rubric import Rubric, load_rubric

if TYPE_CHECKING:
    from judge.engine.measure.human_labels import HumanLabels

__all__ = ["GradeRequest", "GradeResult", "grade"]


def grade(request: GradeRequest, env: Mapping[str, str]) -> GradeResult:
    """Grade as the request says; the exit code as `judge grade`'s."""
    check_engine_options(request, rubric_refs(request.rubric))
    check_references_option(request.references, request.join_on)
    if request.references and (request.batch_api or request.export_batch or request.import_batch):
        raise UsageError("--references works with online grading only, not with the batch flags")
    check_otel_option(request)
    if request.jury is not None:
        from judge.app.jury_run import run_grade_jury  # the jury loads only when asked for

        return run_grade_jury(request, env)
    if request.certificate is not None:
        from judge.app.cascade import run_grade_certified

        return run_grade_certified(request, env)
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
        from judge.app.batch import run_grade_batch

        return run_grade_batch(request, env)
    return _grade_one(request, env)


def _grade_one(request: GradeRequest, env: Mapping[str, str]) -> GradeResult:
    """One rubric, one judge, graded online (here or on Ray)."""
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
    config = judge_config(request.judge, env)
    with (
        input_file(request.input, request.input_format) as given,
        joined(given, request.references, request.join_on) as input_path,
    ):
        edge().judge(config)
        prices = prices_from_args(request, config)
        if request.engine == "ray":
            summary = grade_on_ray(config, rubric, input_path, output, request, prices, labels)
        else:
            summary = asyncio.run(
                _grade(config, rubric, input_path, output, request, prices, labels)
            )
        grade_html(request.html, summary, output, input_path)
        send_records(request.otel_endpoint, output, input_path)
    edge().summary(summary)
    note(f"records: {output}")
    if request.summary:
        write_strict_json(request.summary, summary)
    write_parquet_option(request.parquet, output, rubric_library(request, env))
    code = finish_run(summary, output, max_error_rate=request.max_error_rate, conditions=conditions)
    return GradeResult(code, summary, (output,))


async def _grade(
    config: JudgeConfig,
    rubric: Rubric,
    input_path: Path,
    output: Path,
    request: GradeRequest,
    prices: tuple[float, float] | None,
    labels: HumanLabels | None = None,
) -> dict[str, Any]:
    async with open_grader(config, rubric) as grader:
        settle_heap()
        summary = await grade_file(
            grader,
            input_path,
            output,
            selection=selection_from_args(request),
            overwrite=request.overwrite,
            use_cache=config.use_cache,
            progress=edge().progress,
            prices=prices,
            human_labels=labels,
        )
        edge().requests(grader.backend)
        return summary
