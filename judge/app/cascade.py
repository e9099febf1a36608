"""Grading under a certificate (`judge grade --certificate CERT.json`): a single judge is a
cascade of one rung; a jury file of `mode: cascade` gives the rungs, cheapest first. The
certificate is read and bound to the rubric and the judges before the input is read or
anything is sent (a UsageError, exit 2); the work is judge.engine.cascade's."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.io.jsonout import write_strict_json
from judge.api import open_grader
from judge.app.edge import edge, note
from judge.app.grade_many import input_file, rubric_refs
from judge.app.judges import judge_config, rubric_library
from judge.app.outputs import Output, check_outputs
from judge.app.requests import GradeRequest
from judge.app.runs import (
    GradeResult,
    check_run_options,
    finish_run,
    grade_outputs,
    prices_from_args,
    selection_from_args,
)
from judge.engine.cascade import Rung, check_cascade, grade_cascade
from judge.engine.certificate import Certificate, load_certificate
from judge.engine.measure.run_gates import check_conditions, grade_metric_names
from judge.errors import UsageError
from judge.rubric import Rubric, load_rubric

if TYPE_CHECKING:
    from judge.jury.config import Jury

_REFUSED = {
    "batch_api": "--batch-api",
    "export_batch": "--export-batch",
    "import_batch": "--import-batch",
    "human_labels": "--human-labels",
    "parquet": "--parquet",
    "html": "--html",
    "otel_endpoint": "--otel-endpoint",
}
# what `--fail-if` may name of the summary's `cascade` besides the grade's own figures
CASCADE_METRICS = frozenset(
    {
        "cascade.coverage",
        "cascade.decided",
        "cascade.escalated",
        "cascade.certified_agreement",
        "cascade.cost_all_last_rung_usd",
    }
)


def check_certificate_request(request: GradeRequest) -> Certificate:
    """The options a certified run cannot take refused, then the certificate read."""
    assert request.certificate is not None
    given = [flag for name, flag in _REFUSED.items() if getattr(request, name, None)]
    if request.engine != "local":
        given.append(f"--engine {request.engine}")
    if given:
        raise UsageError(f"--certificate does not combine with {', '.join(given)} (yet)")
    if len(rubric_refs(request.rubric)) > 1:
        raise UsageError("--certificate grades one rubric at a time: it was made for one")
    check_run_options(request)
    return load_certificate(request.certificate)


def run_conditions(request: GradeRequest, rubric: Rubric) -> list[Any]:
    """Every `--fail-if`, on the grade's figures or the cascade's (`cascade.coverage`),
    checked before anything is sent."""
    valid = grade_metric_names(rubric) | CASCADE_METRICS
    return check_conditions(request.fail_if, valid, what=f"a certified {rubric.kind} summary")


def rung_path(output: Path, number: int) -> Path:
    """Where a single judge's own records go under a certificate: OUT.rung1.jsonl."""
    return output.with_name(f"{output.stem}.rung{number}.jsonl")


def run_grade_certified(request: GradeRequest, env: Mapping[str, str]) -> GradeResult:
    """One judge, a cascade of one: its verdicts below the certified threshold escalated."""
    certificate = check_certificate_request(request)
    rubric = load_rubric(request.rubric, rubric_library(request, env))
    conditions = run_conditions(request, rubric)
    if request.input == "-" and request.output is None:
        raise UsageError("reading cases from stdin (-) needs -o OUT.jsonl")
    output = request.output or Path(f"{Path(request.input).stem}.{rubric.id}.jsonl")
    own = rung_path(output, 1)
    outputs = [*grade_outputs(request, output), Output("-o", own, "records")]
    inputs = [certificate.path] + ([] if request.input == "-" else [Path(request.input)])
    check_outputs(outputs, inputs, overwrite=request.overwrite)
    config = judge_config(request.judge, env)
    with input_file(request.input, request.input_format) as input_path:
        prices = prices_from_args(request, config)

        async def run() -> dict[str, Any]:
            async with open_grader(config, rubric) as grader:
                rung = Rung(grader, own, prices)
                check_cascade(certificate, [rung])
                edge().judge(config)
                summary = await _cascade(request, certificate, [rung], input_path, output)
                edge().requests(grader.backend)
                return summary

        summary = asyncio.run(run())
    return _finish(request, summary, output, conditions)


def run_grade_cascade_jury(
    request: GradeRequest, env: Mapping[str, str], jury: Jury, rubric: Rubric, out_dir: Path
) -> GradeResult:
    """A jury file of `mode: cascade`: its jurors are the rungs, in the file's order."""
    from judge.app.judging import panel_configs
    from judge.jury.costs import juror_prices
    from judge.jury.run import juror_path, open_panel

    if request.certificate is None:
        raise UsageError("a jury of mode: cascade grades under a certificate: pass --certificate")
    certificate = check_certificate_request(request)
    conditions = run_conditions(request, rubric)
    base, configs = panel_configs(request.judge, jury, env)
    output = out_dir / f"{rubric.id}.jsonl"
    paths = [juror_path(out_dir, j.name) for j in jury.jurors]
    outputs = [*grade_outputs(request, output), *(Output("-o", p, "records") for p in paths)]
    inputs = [certificate.path] + ([] if request.input == "-" else [Path(request.input)])
    check_outputs(outputs, inputs, overwrite=request.overwrite)
    prices = juror_prices(jury, [prices_from_args(request, c) for c in configs])
    names = ", ".join(f"{n}. {j.name} ({j.model})" for n, j in enumerate(jury.jurors, 1))
    announce = f"judge: a cascade of {len(jury.jurors)} under {request.certificate}: {names}"
    with input_file(request.input, request.input_format) as input_path:

        async def run() -> dict[str, Any]:
            async with open_panel(jury, rubric, configs) as panel:
                graders = zip(panel.graders, paths, prices, strict=True)
                rungs = [Rung(grader, path, price) for grader, path, price in graders]
                return await _cascade(request, certificate, rungs, input_path, output, announce)

        summary = asyncio.run(run())
    return _finish(request, summary, output, conditions)


async def _cascade(
    request: GradeRequest,
    certificate: Certificate,
    rungs: list[Rung],
    input_path: Path,
    output: Path,
    announce: str | None = None,
) -> dict[str, Any]:
    check_cascade(certificate, rungs)  # before anything is said or sent
    if announce:
        note(announce)
    return await grade_cascade(
        rungs,
        certificate,
        input_path,
        output,
        selection=selection_from_args(request),
        overwrite=request.overwrite,
        use_cache=rungs[0].grader.cache is not None,
        progress=edge().progress,
    )


def _finish(
    request: GradeRequest, summary: dict[str, Any], output: Path, conditions: list[Any]
) -> GradeResult:
    edge().summary(summary)
    note(f"records: {output}")
    if request.summary:
        write_strict_json(request.summary, summary)
    code = finish_run(summary, output, max_error_rate=request.max_error_rate, conditions=conditions)
    return GradeResult(code, summary, (output,))
