"""Grading jobs as one of several replicas on a PostgreSQL store (service_replicas).

Each server runs `running_jobs` workers. A worker claims a chunk of some active job (a lease,
judge.service.stores.postgres), grades its cases exactly as `judge grade` grades a file
(`grade_file` over the chunk's rows in this replica's scratch folder), renews the lease every
third of `lease_s` while it grades, and commits the chunk's records; a lease it loses (the
job cancelled or failed, or another replica took the chunk after this one stalled) stops the
grading and nothing is written. When a job's last chunk is in, one replica writes its
summary from all its records and ends it `done`. A replica killed mid-chunk leaves its lease
to expire; another replica grades that chunk again, and only one write of it counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judge.engine.files import grade_file, summarise_file
from judge.engine.measure.human_labels import human_labels_from_text
from judge.engine.pricing import prices_for
from judge.errors import ApiError, JudgeError
from judge.service._judges import JudgePool
from judge.service._store import Job
from judge.service.config import Replicas
from judge.service.stores.postgres import Claim, Ending, PostgresStore, replica_id

__all__ = ["ChunkRunner", "LeaseLost", "merge_runs"]

log = logging.getLogger(__name__)


class LeaseLost(Exception):
    """The chunk's lease went elsewhere, or its job ended: stop grading it."""


class ChunkRunner:
    """The `Runner` of a PostgreSQL store: workers that claim, grade and commit chunks."""

    def __init__(
        self,
        store: PostgresStore,
        pool: JudgePool,
        *,
        workers: int,
        settings: Replicas,
        redact: Callable[[str], str],
    ) -> None:
        self.store = store
        self.pool = pool
        self.settings = settings
        self.redact = redact
        self.owner = replica_id()
        self._count = workers
        self._workers: list[asyncio.Task[None]] = []
        self._chunks: dict[asyncio.Task[Any], str] = {}  # a grading task -> its job
        self._wake = asyncio.Event()

    def resume(self) -> int:
        """Start the workers; returns how many jobs are active on the database."""
        loop = asyncio.get_running_loop()
        for n in range(self._count):
            self._workers.append(loop.create_task(self._work(), name=f"replica-worker-{n}"))
        return len(self.store.unfinished())

    def start(self, job_id: str) -> None:
        self._wake.set()  # a job this replica took: no need to wait for the next poll

    def current(self, job: Job) -> Job:
        return job

    def progress(self, job: Job) -> int:
        return job.done  # committed records, whichever replica graded them

    async def cancel(self, job_id: str) -> None:
        self.store.set_status(job_id, "cancelled")
        mine = [task for task, job in self._chunks.items() if job == job_id]
        for task in mine:
            task.cancel()
        await asyncio.gather(*mine, return_exceptions=True)

    async def join(self) -> None:
        """Wait until no job on the database is active (tests)."""
        while self.store.unfinished():
            await asyncio.sleep(self.settings.poll_s)

    async def stop(self) -> None:
        for task in self._workers:
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers.clear()

    async def _work(self) -> None:
        while True:
            try:
                claim = await asyncio.to_thread(self.store.claim, self.owner, self.settings.lease_s)
                if claim is None:
                    await self._finish_ready()
                    self._wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), self.settings.poll_s)
                    continue
                await self._chunk(claim)
                await self._finish_ready()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database went away a while: keep trying
                log.warning("replica worker: %s: %s", type(exc).__name__, self.redact(str(exc)))
                await asyncio.sleep(self.settings.poll_s)

    async def _chunk(self, claim: Claim) -> None:
        """Grade one claimed chunk and commit it; a failure ends its job `failed`."""
        task = asyncio.get_running_loop().create_task(self._grade(claim))
        self._chunks[task] = claim.job.id
        try:
            records, run = await self._under_lease(task, claim)
        except asyncio.CancelledError:
            if task.cancelled() and not _stopping():
                log.info("job %s chunk %d: stopped (job cancelled)", claim.job.id, claim.chunk)
                return
            await asyncio.to_thread(self.store.release, claim, self.owner)
            raise
        except LeaseLost:
            log.warning("job %s chunk %d: lease lost; not written", claim.job.id, claim.chunk)
            return
        except Exception as exc:
            await asyncio.to_thread(self.store.fail, claim.job.id, self._reason(claim, exc))
            return
        finally:
            self._chunks.pop(task, None)
        if not await asyncio.to_thread(self.store.commit, claim, self.owner, records, run):
            log.warning(
                "job %s chunk %d: lease lost; late write discarded", claim.job.id, claim.chunk
            )

    async def _under_lease(
        self, task: asyncio.Task[tuple[list[str], dict[str, Any]]], claim: Claim
    ) -> tuple[list[str], dict[str, Any]]:
        """Await the grading, renewing the lease meanwhile; LeaseLost (the grading
        cancelled) when a renewal fails."""
        every = self.settings.lease_s / 3
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=every)
                if done:
                    return task.result()
                try:
                    renewed = await asyncio.to_thread(
                        self.store.renew, claim, self.owner, self.settings.lease_s
                    )
                except Exception as exc:  # the database a moment away: grade on; the
                    # commit checks the lease, so a lease that lapsed meanwhile costs nothing
                    log.warning(
                        "job %s: cannot renew a lease: %s", claim.job.id, self.redact(str(exc))
                    )
                    continue
                if not renewed:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                    raise LeaseLost
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise

    async def _grade(self, claim: Claim) -> tuple[list[str], dict[str, Any]]:
        """The chunk's records (JSONL lines, input order) and the run's tally."""
        job = claim.job
        rubric = self.pool.rubric(job.rubric)
        if rubric.sha256 != job.rubric_sha256:
            raise JudgeError(f"rubric {job.rubric} changed since the job was submitted")
        grader = self.pool.grader(job.judge, rubric)
        folder = Path(tempfile.mkdtemp(prefix=f"{job.id}-{claim.chunk}-", dir=self.store.data_dir))
        try:
            source, target = folder / "cases.jsonl", folder / "records.jsonl"
            await asyncio.to_thread(_write, source, claim.rows)
            summary = await grade_file(
                grader,
                source,
                target,
                use_cache=self.pool.config.use_cache,
                prices=prices_for(self.pool.config.judge_config(job.judge)),
                validate=False,  # validated when the job was submitted
            )
            lines = await asyncio.to_thread(_lines, target)
        finally:
            await asyncio.to_thread(shutil.rmtree, folder, True)
        if len(lines) != claim.stop - claim.first:
            raise JudgeError(
                f"chunk {claim.chunk} of job {job.id}: {len(lines)} records for "
                f"{claim.stop - claim.first} cases"
            )
        return lines, summary.get("run", {})

    async def _finish_ready(self) -> None:
        while await asyncio.to_thread(self.store.finish_next, self._conclude) is not None:
            pass

    def _conclude(
        self, job: Job, records: list[str], runs: list[dict[str, Any]], labels: str | None
    ) -> Ending:
        """A job whose chunks are all in: `done` with the summary of its records (as
        `judge grade` summarises a file, its runs' tallies added up), or `failed`."""
        if len(records) != job.total:
            message = f"only {len(records)} of the {job.total} submitted cases have a record"
            return Ending("failed", len(records), error=message)
        try:
            rubric = self.pool.rubric(job.rubric)
            human = human_labels_from_text(labels, source="human_labels") if labels else None
            prices = prices_for(self.pool.config.judge_config(job.judge))
            with tempfile.TemporaryDirectory(dir=self.store.data_dir) as tmp:
                path = Path(tmp) / "records.jsonl"
                _write(path, records)
                summary = summarise_file(path, rubric, prices, human)
        except Exception as exc:
            return Ending("failed", len(records), error=self.redact(_reason(exc)))
        return Ending("done", len(records), summary={**summary, "run": merge_runs(runs)})

    def _reason(self, claim: Claim, exc: Exception) -> str:
        if not isinstance(exc, JudgeError):
            log.error("job %s chunk %d failed", claim.job.id, claim.chunk, exc_info=exc)
        return self.redact(_reason(exc))


def _reason(exc: Exception) -> str:
    if isinstance(exc, ApiError):
        return f"the judge endpoint failed: {exc}"
    if isinstance(exc, JudgeError):
        return str(exc)
    return f"internal error ({type(exc).__name__})"


def merge_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The chunks' `run` tallies added up, key by key (a cost unknown anywhere is None)."""
    total: dict[str, Any] = {}
    for run in runs:
        for key, value in run.items():
            if isinstance(value, dict):
                total[key] = merge_runs([total.get(key, {}), value])
            elif value is None or (key in total and total[key] is None):
                total[key] = None
            else:
                total[key] = total.get(key, 0) + value
    return total


def _stopping() -> bool:
    """Whether the current task itself is being cancelled (the server stopping)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _write(path: Path, lines: list[str]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        handle.writelines(line + "\n" for line in lines)


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text("utf-8").splitlines() if line.strip()]
