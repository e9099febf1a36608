"""Grading through batches (`judge grade --batch-api | --export-batch | --import-batch`) and
`judge batch status|fetch`; the work is in judge/batch/replay.py and judge/batch/api.py.

Two settings come from the environment (the `env` a job is given), for runs that should not
sit waiting: JUDGE_BATCH_POLL (first poll interval in seconds, 5) and JUDGE_BATCH_MAX_WAIT
(stop waiting after this many seconds, 0 = submit only; the batches keep running and
`judge batch fetch` finishes the run).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from calibration.io.jsonout import write_strict_json
from judge.api import open_cache
from judge.app.edge import edge, note
from judge.app.judges import api_key_from, judge_config, rubric_library
from judge.app.outputs import Output, check_outputs
from judge.app.parquet import (
    parquet_outputs,
    refuse_parquet_with_export,
    write_parquet_option,
)
from judge.app.requests import BatchRequest, GradeRequest
from judge.app.runs import (
    EXIT_OK,
    GradeResult,
    finish_run,
    grade_outputs,
    prices_from_args,
    run_conditions,
    selection_from_args,
)
from judge.batch.api import (
    Polling,
    batch_states,
    collect_batches,
    describe,
    submit_batches,
)
from judge.batch.manifest import BatchManifest, load_manifest, manifest_path
from judge.batch.replay import ImportReport, export_requests, import_results
from judge.config import JudgeConfig, default_cache_dir, endpoint_of
from judge.engine.cache import VerdictCache
from judge.engine.files import Selection
from judge.engine.pricing import prices_for
from judge.errors import ApiConnectionError, JudgeError, ModelNotFoundError, UsageError
from judge.rubric import Rubric, load_rubric


def say(line: str) -> None:
    note(f"judge: {line}")


def polling_from(env: Mapping[str, str], interval: float | None = None) -> Polling:
    try:
        first = interval if interval is not None else float(env.get("JUDGE_BATCH_POLL") or 5.0)
        wait = env.get("JUDGE_BATCH_MAX_WAIT")
        return Polling(initial=max(first, 0.01), max_wait=float(wait) if wait else None)
    except ValueError as exc:
        raise UsageError(f"JUDGE_BATCH_POLL / JUDGE_BATCH_MAX_WAIT: {exc}") from None


# ---- judge grade --batch-api | --export-batch | --import-batch -------------------------


def run_grade_batch(request: GradeRequest, env: Mapping[str, str]) -> GradeResult:
    """`judge grade` with one of the batch flags (dispatched from judge.app.grade.grade,
    which checked the option ranges)."""
    if request.input == "-":
        raise UsageError("batch grading reads INPUT more than once: give a file, not -")
    rubric = load_rubric(request.rubric, rubric_library(request, env))
    conditions = run_conditions(request, rubric)
    input_path = Path(request.input)
    output = request.output or Path(f"{input_path.stem}.{rubric.id}.jsonl")
    inputs = [input_path, *(Path(p) for p in request.import_batch or ())]
    if request.export_batch:
        refuse_parquet_with_export(request.parquet)
        outputs = [Output("--export-batch", Path(request.export_batch), "requests")]
    else:
        outputs = grade_outputs(request, output) + parquet_outputs(request.parquet, output)
    check_outputs(outputs, inputs, overwrite=request.overwrite)
    config = judge_config(request.judge, env)
    if config.offline and not request.import_batch:
        raise UsageError("batch grading needs a model: pass --model (or set $JUDGE_MODEL)")
    selection = selection_from_args(request)
    if request.export_batch:
        return GradeResult(
            _export(rubric, config, input_path, Path(request.export_batch), selection)
        )
    report: ImportReport | None
    if request.import_batch:
        results = [Path(p) for p in request.import_batch]
        report = asyncio.run(_import(rubric, config, input_path, results, output, request, env))
    else:
        report = asyncio.run(_batch_api(rubric, config, input_path, output, request, env))
    if report is None:  # still running: `judge batch fetch` finishes the run
        if conditions:
            say("--fail-if is not applied: the batches are still running, no records to gate yet")
        if request.parquet:
            say(
                f"--parquet {request.parquet} is not written yet: the batches are still "
                f"running; add --parquet {request.parquet} to the `judge batch fetch` above"
            )
        return GradeResult(EXIT_OK)
    _finish(report, output, request.summary)
    write_parquet_option(request.parquet, output, rubric_library(request, env))
    code = finish_run(
        report.summary, output, max_error_rate=request.max_error_rate, conditions=conditions
    )
    return GradeResult(code, report.summary, (output,))


def _export(
    rubric: Rubric, config: JudgeConfig, input_path: Path, target: Path, selection: Selection
) -> int:
    existed = target.exists()
    cache = open_cache(config)
    try:
        report = asyncio.run(
            export_requests(rubric, config, input_path, target, selection=selection, cache=cache)
        )
    finally:
        if cache is not None:
            cache.close()
    for path, count in zip(report.paths, report.counts, strict=True):
        edge().line(f"{path}\t{count} requests")
    if not report.paths:
        stale = f"; {target} is left as it was, from an earlier export" if existed else ""
        say(
            f"nothing to export: all {report.cached} selected case(s) are answered from the "
            "cache, so no request file was written; --import-batch takes them from the "
            f"cache, or --no-cache exports every case{stale}"
        )
    elif report.cached:
        say(
            f"{report.cached} case(s) answered from the cache are not in the file; "
            "--import-batch takes them from the cache (--no-cache exports every case)"
        )
    return EXIT_OK


async def _import(
    rubric: Rubric,
    config: JudgeConfig,
    input_path: Path,
    results: list[Path],
    output: Path,
    request: GradeRequest,
    env: Mapping[str, str],
) -> ImportReport:

    cache = open_cache(config)
    try:
        return await import_results(
            rubric,
            config,
            input_path,
            results,
            output,
            selection=selection_from_args(request),
            cache=cache,
            overwrite=request.overwrite,
            progress=edge().progress,
            prices=prices_from_args(request, config, batch=True),  # the Batch API bills half
        )
    finally:
        if cache is not None:
            cache.close()


async def _batch_api(
    rubric: Rubric,
    config: JudgeConfig,
    input_path: Path,
    output: Path,
    request: GradeRequest,
    env: Mapping[str, str],
) -> ImportReport | None:

    cache = open_cache(config)
    try:
        manifest = await submit_batches(
            rubric,
            config,
            input_path,
            output,
            selection=selection_from_args(request),
            cache=cache,
            overwrite=request.overwrite,
            notify=say,
        )
        edge().line(" ".join(manifest.batch_ids) or "(no batch: nothing to send)")
        prices = prices_from_args(request, config, batch=True)
        return await _collect(manifest, rubric, config, cache, env, prices)
    finally:
        if cache is not None:
            cache.close()


async def _collect(
    manifest: BatchManifest,
    rubric: Rubric,
    config: JudgeConfig,
    cache: VerdictCache | None,
    env: Mapping[str, str],
    prices: tuple[float, float] | None,
    interval: float | None = None,
) -> ImportReport | None:
    report = await collect_batches(
        manifest,
        rubric,
        config,
        cache=cache,
        polling=polling_from(env, interval),
        progress=edge().progress,
        prices=prices,
        notify=say,
    )
    if report is None:
        first = manifest.batch_ids[0]
        say(
            f"the batches are still running; finish with `judge batch fetch {first} "
            f"-o {manifest.output}` (manifest: {manifest_path(Path(manifest.output))})"
        )
    return report


def _finish(report: ImportReport, output: Path, summary_path: Path | None) -> None:
    edge().summary(report.summary)
    for warning in report.warnings():
        note(f"warning: {warning}")
    note(f"records: {output}")
    if summary_path:
        write_strict_json(summary_path, report.summary)


# ---- judge batch status | fetch --------------------------------------------------------


def batch_command(request: BatchRequest, env: Mapping[str, str]) -> int:
    """`judge batch status | fetch`, from its request."""
    manifest = load_manifest(request.output) if request.output else None
    if manifest is not None and request.batch_id not in manifest.batch_ids:
        assert request.output is not None  # a manifest is read from -o
        raise UsageError(f"{manifest_path(request.output)} does not list batch {request.batch_id}")
    config = _config(request, env, manifest)
    if request.action == "status":
        if request.parquet:
            raise UsageError("--parquet goes with judge batch fetch (status writes no records)")
        ids = manifest.batch_ids if manifest else [request.batch_id]
        for batch in asyncio.run(_states(config, ids)):
            edge().line(describe(batch))
        return EXIT_OK
    if manifest is None:
        raise UsageError("judge batch fetch needs -o OUT, the records file the run writes")
    rubric = load_rubric(manifest.rubric, rubric_library(request, env))
    output = Path(manifest.output)
    outputs = [Output("-o", output, "records")]
    if request.summary:
        outputs.append(Output("--summary", request.summary, "summary"))
    outputs += parquet_outputs(request.parquet, output)
    check_outputs(outputs, [Path(manifest.input)], overwrite=False)
    report = asyncio.run(_fetch(manifest, rubric, config, request, env))
    if report is None:
        return EXIT_OK
    _finish(report, output, request.summary)
    write_parquet_option(request.parquet, output, rubric_library(request, env))
    return finish_run(report.summary, output)


async def _states(config: JudgeConfig, ids: list[str]) -> list[Any]:
    """The batches' states; an unknown id or an endpoint that cannot be reached is said in
    batch terms, naming the endpoint (the grading messages speak of --model)."""
    where = endpoint_of(config.base_url)
    try:
        return list(await batch_states(config, ids))
    except ModelNotFoundError:
        raise UsageError(
            f"the Batch API at {where} knows no batch {', '.join(ids)}: check the id "
            "(judge grade --batch-api prints it) and --base-url"
        ) from None
    except ApiConnectionError as exc:
        raise JudgeError(f"could not reach the Batch API at {where}: {exc}") from None


def _config(
    request: BatchRequest, env: Mapping[str, str], manifest: BatchManifest | None
) -> JudgeConfig:
    key = api_key_from(env)
    base_url = request.base_url or (None if manifest else env.get("OPENAI_BASE_URL"))
    retries: dict[str, Any] = {}
    if request.max_retries is not None:
        if not 0 <= request.max_retries <= 20:
            raise UsageError(f"--max-retries takes 0 to 20, not {request.max_retries}")
        retries["max_retries"] = request.max_retries
    if manifest is None:
        return JudgeConfig.model_validate({"base_url": base_url, "api_key": key, **retries})
    cache_dir = request.cache_dir or default_cache_dir(env)
    config = manifest.config(api_key=key, base_url=base_url, cache_dir=cache_dir)
    update = {"use_cache": config.use_cache and not request.no_cache, **retries}
    return config.model_copy(update=update)


async def _fetch(
    manifest: BatchManifest,
    rubric: Rubric,
    config: JudgeConfig,
    request: BatchRequest,
    env: Mapping[str, str],
) -> ImportReport | None:
    cache = open_cache(config)
    limits = dict(env)
    if request.no_wait:
        limits["JUDGE_BATCH_MAX_WAIT"] = "0"
    prices = prices_for(config, batch=True)
    try:
        return await _collect(
            manifest, rubric, config, cache, limits, prices, request.poll_interval
        )
    finally:
        if cache is not None:
            cache.close()
