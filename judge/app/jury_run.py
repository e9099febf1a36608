"""Grading with a jury (`judge grade --jury JURY.yaml`): the checks, the panel (live, its
requests exported, or their results imported) and the exit code; the work is in judge.jury."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.io.jsonout import write_strict_json
from judge.api import open_cache
from judge.app.edge import edge, note
from judge.app.grade_many import input_file, rubric_refs
from judge.app.html import check_jury_html, jury_html
from judge.app.judges import rubric_library
from judge.app.jury_options import panel_configs
from judge.app.labels import human_labels_inputs, human_labels_option
from judge.app.outputs import Output, check_outputs
from judge.app.references import joined
from judge.app.requests import GradeRequest
from judge.app.runs import (
    EXIT_OK,
    GradeResult,
    check_run_options,
    finish_pass,
    prices_from_args,
    selection_from_args,
)
from judge.config import JudgeConfig
from judge.engine.measure.run_gates import (
    check_conditions,
    grade_metric_names,
    grade_metrics,
    grade_undefined_reasons,
)
from judge.errors import UsageError
from judge.jury.batch import (
    check_batch_jury,
    export_jury,
    import_warnings,
    open_replay_panel,
    results_of,
)
from judge.jury.config import Jury, load_jury
from judge.jury.gates import jury_metric_names, jury_metrics, undefined_reasons
from judge.jury.run import grade_panel, juror_files, open_panel
from judge.rubric import Rubric, load_rubric

if TYPE_CHECKING:
    from judge.engine.measure.human_labels import HumanLabels

_NOT_WITH_JURY = {
    "batch_api": "--batch-api",
    "parquet": "--parquet",
}


def run_grade_jury(request: GradeRequest, env: Mapping[str, str]) -> GradeResult:
    """Grade with the panel of `request.jury`; exit code as `judge grade`'s."""
    assert request.jury is not None
    refs = _check_request(request)
    jury = load_jury(request.jury)
    rubric = load_rubric(refs[0], rubric_library(request, env))
    out_dir = request.output or Path(f"{Path(request.input).stem}.jury")
    if jury.mode == "cascade" or request.certificate is not None:
        return _cascade(request, env, jury, rubric, out_dir)
    conditions = _conditions(request, rubric, jury)
    base, configs = panel_configs(request.judge, jury, env)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"-o {out_dir}: with --jury the output is a folder")
    results = None
    if request.export_batch or request.import_batch:
        check_batch_jury(jury, rubric)
        if request.input == "-":
            raise UsageError("batch grading reads INPUT more than once: give a file, not -")
    if request.export_batch:
        return _export(request, jury, rubric, configs, out_dir)
    if request.import_batch:
        results = results_of(jury, Path(request.import_batch[0]))
    records = out_dir / f"{rubric.id}.jsonl"
    labels = human_labels_option(request)
    inputs = [] if request.input == "-" else [Path(request.input)]
    inputs += human_labels_inputs(request) + [p for paths in results or [] for p in paths]
    outputs = _outputs(request, jury, out_dir, records, pairwise=rubric.behaviour.compares_two)
    check_outputs(outputs, inputs, overwrite=request.overwrite)
    _announce(jury)
    with (
        input_file(request.input, request.input_format) as given,
        joined(given, request.references, request.join_on) as input_path,
    ):
        summary = asyncio.run(
            _grade(jury, rubric, configs, input_path, out_dir, request, base, labels, results)
        )
        jury_html(request.html, summary, records, input_path)
    edge().summary(summary)
    edge().panel(summary["jury"], [c.max_tokens for c in configs])
    note(f"records: {records} (jurors: {out_dir / 'jurors'})")
    if request.summary:
        write_strict_json(request.summary, summary)
    values = grade_metrics(summary) | jury_metrics(summary["jury"])
    reasons = grade_undefined_reasons(summary) | undefined_reasons(values)
    code = finish_pass(
        {"": summary},
        {"": records},
        (values, reasons),
        max_error_rate=request.max_error_rate,
        conditions=conditions,
    )
    return GradeResult(code, summary, (records,))


def _cascade(
    request: GradeRequest, env: Mapping[str, str], jury: Jury, rubric: Rubric, out_dir: Path
) -> GradeResult:
    """A jury file of `mode: cascade`, under `--certificate` (judge.app.cascade)."""
    from judge.app.cascade import run_grade_cascade_jury

    if jury.mode != "cascade":
        raise UsageError(
            f"--certificate with --jury needs a jury file of mode: cascade (its jurors are "
            f"the certified rungs, in order), not mode: {jury.mode}"
        )
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"-o {out_dir}: with --jury the output is a folder")
    return run_grade_cascade_jury(request, env, jury, rubric, out_dir)


def _check_request(request: GradeRequest) -> list[str]:
    """What a jury cannot take, refused before anything is read; the one rubric's ref."""
    check_run_options(request)
    check_jury_html(request)
    given = [flag for name, flag in _NOT_WITH_JURY.items() if getattr(request, name)]
    if given:
        also = (
            " (export each juror's requests with --export-batch DIR, import them with "
            "--import-batch DIR)"
            if request.batch_api
            else ""
        )
        raise UsageError(f"--jury does not combine with {', '.join(given)} (yet){also}")
    if request.import_batch is not None and len(request.import_batch) != 1:
        raise UsageError("--import-batch with --jury takes one folder: DIR/<juror>.jsonl each")
    refs = rubric_refs(request.rubric)
    if len(refs) > 1:
        raise UsageError("--jury grades one rubric at a time")
    if request.input == "-" and request.output is None:
        raise UsageError("reading cases from stdin (-) with --jury needs -o OUT/")
    return refs


def _conditions(request: GradeRequest, rubric: Rubric, jury: Jury) -> list[Any]:
    """Every `--fail-if`: on the panel's grade metrics or on the jury's own figures
    (judge.jury.gates), checked before anything is sent."""
    names = [j.name for j in jury.jurors]
    valid = grade_metric_names(rubric) | jury_metric_names(
        names, human_labels=request.human_labels is not None
    )
    return check_conditions(request.fail_if, valid, what=f"a jury's {rubric.kind} summary")


async def _grade(
    jury: Jury,
    rubric: Rubric,
    configs: list[JudgeConfig],
    input_path: Path,
    out_dir: Path,
    request: GradeRequest,
    base: JudgeConfig,
    labels: HumanLabels | None,
    results: list[list[Path]] | None = None,
) -> dict[str, Any]:
    """The live panel, or (`results`: each juror's results files) the imported one."""
    opened = (
        open_panel(jury, rubric, configs)
        if results is None
        else open_replay_panel(jury, rubric, configs, results)
    )
    batch = results is not None  # the Batch API bills half (judge.engine.pricing)
    async with opened as panel:
        summary = await grade_panel(
            panel,
            input_path,
            out_dir,
            selection=selection_from_args(request),
            overwrite=request.overwrite,
            use_cache=base.use_cache,
            prices=[prices_from_args(request, c, batch=batch) for c in configs],
            human_labels=labels,
            retry_failed=request.retry_failed,
        )
        if batch:
            warnings = await asyncio.to_thread(import_warnings, panel, input_path)
            summary["jury"]["import_warnings"] = warnings
            for warning in warnings:
                note(f"warning: {warning}")
        return summary


def _export(
    request: GradeRequest, jury: Jury, rubric: Rubric, configs: list[JudgeConfig], out_dir: Path
) -> GradeResult:
    """`--export-batch DIR --jury J`: DIR/<juror>.jsonl each (judge.jury.batch)."""
    assert request.export_batch is not None
    folder = Path(request.export_batch)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--export-batch {folder}: with --jury, a folder (DIR/<juror>.jsonl)")
    outputs = [
        Output("--export-batch", folder / f"{j.name}.jsonl", "requests") for j in jury.jurors
    ]
    check_outputs(outputs, [Path(request.input)], overwrite=request.overwrite)
    cache = open_cache(configs[0])
    try:
        exported = asyncio.run(
            export_jury(
                jury,
                rubric,
                configs,
                Path(request.input),
                folder,
                out_dir=out_dir,
                selection=selection_from_args(request),
                cache=cache,
            )
        )
    finally:
        if cache is not None:
            cache.close()
    for juror in exported:
        for path, count in zip(juror.report.paths, juror.report.counts, strict=True):
            edge().line(f"{path}\t{count} requests")
        if juror.report.cached or juror.report.already_graded:
            note(
                f"judge: juror {juror.name}: {juror.report.cached} case(s) answered from the "
                f"cache, {juror.report.already_graded} already graded: not in its file"
            )
    note(
        f"judge: submit each file with its juror's endpoint; then --import-batch RESULTS/ "
        f"with {', '.join(f'{j.name}.jsonl' for j in jury.jurors)} in it"
    )
    return GradeResult(EXIT_OK)


def _outputs(
    request: GradeRequest, jury: Jury, out_dir: Path, records: Path, *, pairwise: bool
) -> list[Output]:
    outputs = [Output("-o", records, "records")]
    for juror in jury.jurors:
        files = juror_files(out_dir, juror.name, pairwise=pairwise)
        outputs += [Output("-o", path, "records") for path in files.paths]
    if request.summary:
        outputs.append(Output("--summary", request.summary, "summary"))
    if request.html:
        outputs.append(Output("--html", request.html, "html"))
    return outputs


def _announce(jury: Jury) -> None:
    names = ", ".join(f"{j.name} ({j.model})" for j in jury.jurors)
    mode = (
        f"; cyclic: one juror a case, all on an overlap of {jury.overlap_share}"
        if (jury.mode == "cyclic")
        else ""
    )
    note(
        f"judge: a jury of {len(jury.jurors)}: {names}; labels by {jury.rule}, scores by "
        f"{jury.scores}, min_votes {jury.quorum}{mode}"
    )
