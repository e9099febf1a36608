"""Grading through the OpenAI Batch API (or any server with `/v1/files` and `/v1/batches`).

submit: export the cache misses into request files within the API's limits, upload each with
purpose `batch`, create one batch per file, and record the batch ids in a manifest next to
the output (`OUT.batch.json`) as soon as each exists, so a run whose process ended can be
resumed with `judge batch fetch`. collect: poll with backoff until every batch has ended,
stream the output and error files to `OUT.batch/`, and import them into records.

Control-plane calls go through the SDK with its own retries off and the project's tenacity
policy on transient errors, like the chat client; SDK errors are translated the same way.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import openai
from openai.types import Batch
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

from judge.batch import MISSING, ImportReport, export_requests, import_results
from judge.batch_format import MAX_BYTES_PER_FILE, MAX_REQUESTS_PER_FILE
from judge.batch_manifest import (
    JUDGE_FIELDS,
    BatchManifest,
    load_manifest,
    manifest_path,
    results_dir,
)
from judge.cache import VerdictCache
from judge.client import RetryWait, translate_error
from judge.config import JudgeConfig
from judge.errors import ApiError, UsageError
from judge.identity import describe_identity, judge_id
from judge.jobs import Selection
from judge.llm import model_identity
from judge.records import check_resumable, finished_ids
from judge.rubric import Rubric

T = TypeVar("T")
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass(frozen=True)
class Polling:
    """Poll every `initial` seconds, growing by `factor` up to `maximum`; give up waiting
    (the batches keep running) after `max_wait` seconds, or never when None."""

    initial: float = 5.0
    factor: float = 1.5
    maximum: float = 60.0
    max_wait: float | None = None


def batch_sdk(config: JudgeConfig) -> openai.AsyncOpenAI:
    key = config.api_key.get_secret_value() if config.api_key else None
    return openai.AsyncOpenAI(
        api_key=key or "no-key", base_url=config.base_url, max_retries=0, timeout=config.timeout
    )


async def call(config: JudgeConfig, make: Callable[[], Awaitable[T]]) -> T:
    """One control-plane call, retried on transient errors like a chat request."""
    key = config.api_key.get_secret_value() if config.api_key else None
    retrying = AsyncRetrying(
        stop=stop_after_attempt(config.max_retries + 1),
        wait=RetryWait(config),
        retry=retry_if_exception(lambda e: isinstance(e, ApiError) and e.transient),
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            try:
                return await make()
            except openai.OpenAIError as exc:
                raise translate_error(exc, key) from None
    raise AssertionError("unreachable: tenacity reraises the last error")


async def submit_batches(
    rubric: Rubric,
    config: JudgeConfig,
    input_path: Path,
    output: Path,
    *,
    selection: Selection | None = None,
    cache: VerdictCache | None = None,
    overwrite: bool = False,
    notify: Callable[[str], None] = lambda _line: None,
    max_requests: int = MAX_REQUESTS_PER_FILE,
    max_bytes: int = MAX_BYTES_PER_FILE,
) -> BatchManifest:
    """Write, upload and create the batches for every case neither graded nor cached."""
    _check_unfetched(output, overwrite)
    if overwrite:
        output.unlink(missing_ok=True)
    identity = model_identity(config)
    check_resumable(
        output,
        rubric_sha256=rubric.sha256,
        rubric_ref=rubric.ref,
        judge_id=judge_id(identity),
        judge=describe_identity(identity),
    )
    report = await export_requests(
        rubric,
        config,
        input_path,
        results_dir(output) / "requests.jsonl",
        selection=selection,
        cache=cache,
        skip_ids=finished_ids(output, rubric.sha256),
        max_requests=max_requests,
        max_bytes=max_bytes,
    )
    manifest = BatchManifest(
        input=str(input_path.resolve()),
        output=str(output.resolve()),
        rubric=rubric.ref,
        rubric_sha256=rubric.sha256,
        judge={name: getattr(config, name) for name in JUDGE_FIELDS},
        selection=asdict(selection or Selection()),
        use_cache=config.use_cache,
        cached=report.cached,
    )
    manifest.save()
    notify(
        f"{report.cached} case(s) answered from the cache, {report.already_graded} already graded"
    )
    sdk = batch_sdk(config)
    try:
        for number, (path, count) in enumerate(zip(report.paths, report.counts, strict=True), 1):
            batch = await _create_batch(sdk, config, path, f"{number}/{len(report.paths)}", rubric)
            manifest.batch_ids.append(batch.id)
            manifest.requests.append(count)
            manifest.save()
            notify(f"batch {batch.id}: {count} request(s) from {path}")
    finally:
        await sdk.close()
    return manifest


def _check_unfetched(output: Path, overwrite: bool) -> None:
    path = manifest_path(output)
    if overwrite or not path.is_file():
        return
    old = load_manifest(output)
    if old.batch_ids and not old.fetched:
        raise UsageError(
            f"{path} lists batches not fetched yet ({', '.join(old.batch_ids)}): run "
            f"`judge batch fetch {old.batch_ids[0]} -o {output}`, or pass --overwrite"
        )


async def _create_batch(
    sdk: openai.AsyncOpenAI, config: JudgeConfig, path: Path, part: str, rubric: Rubric
) -> Batch:
    async def upload() -> Any:
        with path.open("rb") as handle:
            return await sdk.files.create(file=(path.name, handle), purpose="batch")

    uploaded = await call(config, upload)
    metadata = {"judge_rubric": rubric.ref, "judge_part": part}

    async def create() -> Batch:
        return await sdk.batches.create(
            input_file_id=uploaded.id,
            endpoint="/v1/chat/completions",
            completion_window="24h",
            metadata=metadata,
        )

    return await call(config, create)


async def batch_states(config: JudgeConfig, batch_ids: Sequence[str]) -> list[Batch]:
    sdk = batch_sdk(config)
    try:
        return [await call(config, partial(sdk.batches.retrieve, i)) for i in batch_ids]
    finally:
        await sdk.close()


async def wait_for_batches(
    config: JudgeConfig,
    batch_ids: Sequence[str],
    polling: Polling = Polling(),
    notify: Callable[[str], None] = lambda _line: None,
) -> list[Batch] | None:
    """The batches once all have ended, or None when `polling.max_wait` ran out first."""
    started, delay, last = time.monotonic(), polling.initial, ""
    while True:
        batches = await batch_states(config, batch_ids)
        line = progress_line(batches)
        if line != last:
            notify(line)
            last = line
        if all(b.status in TERMINAL for b in batches):
            return batches
        waited = time.monotonic() - started
        if polling.max_wait is not None and waited + delay > polling.max_wait:
            return None
        await asyncio.sleep(delay)
        delay = min(delay * polling.factor, polling.maximum)


def progress_line(batches: Sequence[Batch]) -> str:
    """`batches: 1 completed, 1 in_progress; requests 60/100 done, 2 failed`."""
    states: dict[str, int] = {}
    total = done = failed = 0
    for batch in batches:
        states[batch.status] = states.get(batch.status, 0) + 1
        counts = batch.request_counts
        if counts is not None:
            total, done, failed = (
                total + counts.total,
                done + counts.completed,
                failed + counts.failed,
            )
    shown = ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
    return f"batches: {shown}; requests {done + failed}/{total} done, {failed} failed"


async def download_results(
    config: JudgeConfig, batches: Sequence[Batch], folder: Path
) -> list[Path]:
    """Stream every batch's output and error file to `folder`; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    sdk = batch_sdk(config)
    paths = []
    try:
        for batch in batches:
            for file_id, kind in (
                (batch.output_file_id, "output"),
                (batch.error_file_id, "errors"),
            ):
                if file_id:
                    path = folder / f"{batch.id}.{kind}.jsonl"
                    await call(config, partial(_download, sdk, file_id, path))
                    paths.append(path)
    finally:
        await sdk.close()
    return paths


async def _download(sdk: openai.AsyncOpenAI, file_id: str, path: Path) -> None:
    tmp = path.with_name(path.name + ".part")
    async with sdk.files.with_streaming_response.content(file_id) as response:
        with tmp.open("wb") as handle:
            async for chunk in response.iter_bytes():
                handle.write(chunk)
    os.replace(tmp, path)


def missing_reason(batches: Sequence[Batch]) -> str:
    """Why a case has no line: MISSING, plus each batch that did not complete and why."""
    ended = []
    for batch in batches:
        if batch.status != "completed":
            why = ""
            if batch.errors and batch.errors.data:
                why = f": {batch.errors.data[0].message}"
            ended.append(f"batch {batch.id} ended {batch.status}{why}")
    text = "; ".join(ended).replace("{", "{{").replace("}", "}}")
    return MISSING + (f" ({text})" if text else "")


async def collect_batches(
    manifest: BatchManifest,
    rubric: Rubric,
    config: JudgeConfig,
    *,
    cache: VerdictCache | None = None,
    polling: Polling = Polling(),
    progress: bool = False,
    prices: tuple[float, float] | None = None,
    notify: Callable[[str], None] = lambda _line: None,
) -> ImportReport | None:
    """Wait for the manifest's batches, download their files, write the records. None when
    the wait ran out: the batches keep running, and `judge batch fetch` resumes."""
    if rubric.sha256 != manifest.rubric_sha256:
        raise UsageError(f"rubric {rubric.ref} changed since the batches were submitted")
    batches: list[Batch] = []
    if manifest.batch_ids:
        waited = await wait_for_batches(config, manifest.batch_ids, polling, notify)
        if waited is None:
            return None
        batches = waited
    output = Path(manifest.output)
    paths = await download_results(config, batches, results_dir(output))
    report = await import_results(
        rubric,
        config,
        Path(manifest.input),
        paths,
        output,
        selection=manifest.as_selection(),
        cache=cache,
        progress=progress,
        prices=prices,
        missing=missing_reason(batches),
    )
    manifest.fetched = True
    manifest.save()
    return report


def describe(batch: Batch) -> str:
    """One line a person can read: id, status, counts, files."""
    counts = batch.request_counts
    done = f"{counts.completed}/{counts.total} ok, {counts.failed} failed" if counts else "-"
    files = f"output={batch.output_file_id or '-'} errors={batch.error_file_id or '-'}"
    return f"{batch.id}  {batch.status:<11} {done}  {files}"
