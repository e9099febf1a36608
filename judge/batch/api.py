"""Grading through the OpenAI Batch API (or any server with `/v1/files` and `/v1/batches`).

submit: export the cache misses into request files within the API's limits, upload each with
purpose `batch`, create one batch per file, and record the batch ids in a manifest next to
the output (`OUT.batch.json`) as soon as each exists, so a run whose process ended can be
resumed with `judge batch fetch`. collect: poll with backoff until every batch has ended,
stream the output and error files to `OUT.batch/`, and import them into records.

Control-plane calls go through `judge.client.BatchClient`: the chat client's retry policy
and error translation, the only HTTP.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar

from judge.batch.format import MAX_BYTES_PER_FILE, MAX_REQUESTS_PER_FILE
from judge.batch.manifest import (
    JUDGE_FIELDS,
    BatchManifest,
    load_manifest,
    manifest_path,
    results_dir,
)
from judge.batch.replay import (
    MISSING,
    ImportReport,
    export_requests,
    import_results,
    refuse_computed,
)
from judge.client import Batch, BatchClient
from judge.config import JudgeConfig, without_userinfo
from judge.engine.cache import VerdictCache
from judge.engine.files import Selection
from judge.engine.identity import describe_identity, judge_id
from judge.engine.model import model_identity
from judge.engine.records import check_resumable
from judge.engine.resume import unchanged_ids
from judge.errors import UsageError
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
    refuse_computed(rubric)
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
        identity=identity,
    )
    report = await export_requests(
        rubric,
        config,
        input_path,
        results_dir(output) / "requests.jsonl",
        selection=selection,
        cache=cache,
        skip_ids=unchanged_ids(output, rubric, input_path),
        max_requests=max_requests,
        max_bytes=max_bytes,
    )
    manifest = BatchManifest(
        input=str(input_path.resolve()),
        output=str(output.resolve()),
        rubric=rubric.ref,
        rubric_sha256=rubric.sha256,
        # a password written into --base-url never reaches the file: fetch asks for it again
        judge={
            name: without_userinfo(config.base_url) if name == "base_url" else getattr(config, name)
            for name in JUDGE_FIELDS
        },
        selection=asdict(selection or Selection()),
        use_cache=config.use_cache,
        cached=report.cached,
    )
    manifest.save()
    notify(
        f"{report.cached} case(s) answered from the cache, {report.already_graded} already graded"
    )
    async with BatchClient(config) as client:
        for number, (path, count) in enumerate(zip(report.paths, report.counts, strict=True), 1):
            metadata = {"judge_rubric": rubric.ref, "judge_part": f"{number}/{len(report.paths)}"}
            batch = await client.create(path, metadata)
            manifest.batch_ids.append(batch.id)
            manifest.requests.append(count)
            manifest.save()
            notify(f"batch {batch.id}: {count} request(s) from {path}")
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


async def batch_states(config: JudgeConfig, batch_ids: Sequence[str]) -> list[Batch]:
    async with BatchClient(config) as client:
        return await client.retrieve(batch_ids)


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
    paths = []
    async with BatchClient(config) as client:
        for batch in batches:
            for file_id, kind in (
                (batch.output_file_id, "output"),
                (batch.error_file_id, "errors"),
            ):
                if file_id:
                    path = folder / f"{batch.id}.{kind}.jsonl"
                    await client.download(file_id, path)
                    paths.append(path)
    return paths


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
