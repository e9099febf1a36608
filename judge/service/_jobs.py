"""Background grading jobs that survive restarts, over the job store (service_store).

A job is graded exactly like `judge grade` does a file: records are appended and flushed one
by one, a restart keeps the finished ones and grades the rest, and `finalize` leaves one
record per case in input order. A job ends `done` only when its stored input is the one
submitted (sha256) and every case has its record; otherwise it ends `failed` with the reason.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judge.engine.atomic import touch_private
from judge.engine.files import grade_file
from judge.engine.measure.human_labels import HumanLabels, human_labels_from_text
from judge.engine.pricing import prices_for
from judge.errors import ApiError, JudgeError
from judge.rubric import file_sha256
from judge.service._diskfull import disk_full_reason, is_disk_full, retry_delay
from judge.service._judges import JudgePool
from judge.service._store import ACTIVE, Job, JobStore, discard_folder, new_job_id

__all__ = ["ACTIVE", "Job", "JobRunner", "JobStore", "discard_folder", "file_sha256", "new_job_id"]

log = logging.getLogger(__name__)

PROGRESS_EVERY_S = 0.5


class JobDamaged(JudgeError):
    """A job's stored files no longer match what was submitted."""


class JobRunner:
    """Runs queued jobs in the background, `running_jobs` at a time, on the server's loop.

    Stopping the server cancels running jobs but leaves them `running` in the table, so the
    next start resumes them; `cancel` (DELETE) marks them `cancelled` first. A job that
    meets a full disk ends `failed` with the reason and is retried by itself until space
    returns (judge.service._diskfull); an end state the store cannot write is held here
    (`current`) so GET still says it.
    """

    first_retry_s = 5.0  # the first pause before a job that met a full disk is retried

    def __init__(
        self,
        store: JobStore,
        pool: JudgePool,
        *,
        running_jobs: int,
        redact: Callable[[str], str],
    ) -> None:
        self.store = store
        self.pool = pool
        self.redact = redact
        self._slots = asyncio.Semaphore(running_jobs)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._progress: dict[str, int] = {}
        self._held: dict[str, tuple[str, str]] = {}  # job -> (status, error) not yet stored
        self._retries: dict[str, asyncio.TimerHandle] = {}
        self._attempts: dict[str, int] = {}

    def resume(self) -> int:
        """Queue every job a previous run left queued or running, and every job that
        failed for want of space; returns how many."""
        for job in self.store.failed_for_space():
            self.store.requeue(job.id)
        jobs = self.store.unfinished()
        for job in jobs:
            self.start(job.id)
        return len(jobs)

    def current(self, job: Job) -> Job:
        """The job as GET shows it: its stored row, or the end state the store could not
        take (a full disk) held in memory."""
        held = self._held.get(job.id)
        if held is None:
            return job
        return dataclasses.replace(job, status=held[0], error=held[1])

    def start(self, job_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._run(job_id), name=job_id)
        self._tasks[job_id] = task
        task.add_done_callback(lambda t: self._ended(job_id, t))

    def _ended(self, job_id: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(job_id) is task:
            self._tasks.pop(job_id, None)
        if not task.cancelled() and task.exception() is not None:  # never left unretrieved
            log.error("job %s: its task failed", job_id, exc_info=task.exception())

    def progress(self, job: Job) -> int:
        return self._progress.get(job.id, job.done)

    async def cancel(self, job_id: str) -> None:
        self.store.set_status(job_id, "cancelled")
        task = self._tasks.get(job_id)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def join(self) -> None:
        """Wait until every job started so far has ended."""
        await asyncio.gather(*list(self._tasks.values()), return_exceptions=True)

    async def stop(self) -> None:
        for handle in self._retries.values():
            handle.cancel()
        self._retries.clear()
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, job_id: str) -> None:
        async with self._slots:
            job = self.store.get(job_id)
            if job is None or job.status not in ACTIVE:
                return
            try:
                self.store.set_status(job_id, "running")
                self._held.pop(job_id, None)
                summary, done = await self._grade(job)
                self.store.finish(job_id, "done", done=done, summary=summary)
            except asyncio.CancelledError:
                self._save_progress(job_id)
                raise
            except Exception as exc:  # a job must end in a state, whatever went wrong
                if is_disk_full(exc):
                    self._wait_for_space(job_id, exc)
                else:
                    self._fail(job_id, self._reason(job_id, exc))
            else:
                self._attempts.pop(job_id, None)
            finally:
                self._progress.pop(job_id, None)

    def _reason(self, job_id: str, exc: Exception) -> str:
        if isinstance(exc, ApiError):
            return f"the judge endpoint failed: {exc}"
        if isinstance(exc, JudgeError):
            return str(exc)
        log.error("job %s failed", job_id, exc_info=exc)
        return f"internal error ({type(exc).__name__})"

    def _fail(self, job_id: str, message: str) -> None:
        """End the job `failed`; when the store cannot take it (a full disk) the state is
        held in memory, for GET, and the index keeps the job active for the next start."""
        text = self.redact(message)
        try:
            self._save_progress(job_id)
            self.store.finish(job_id, "failed", error=text)
        except Exception as exc:
            log.error("job %s: cannot store its failure (%s): %s", job_id, exc, text)
            self._held[job_id] = ("failed", text)
        else:
            self._held.pop(job_id, None)

    def _wait_for_space(self, job_id: str, exc: BaseException) -> None:
        """The job met a full disk: fail it with the reason and retry it later."""
        self._fail(job_id, disk_full_reason(exc))
        attempt = self._attempts.get(job_id, 0)
        self._attempts[job_id] = attempt + 1
        delay = retry_delay(attempt, self.first_retry_s)
        log.warning("job %s: the data dir is full; retrying in %.1f s", job_id, delay)
        loop = asyncio.get_running_loop()
        self._retries[job_id] = loop.call_later(delay, self._retry, job_id)

    def _retry(self, job_id: str) -> None:
        self._retries.pop(job_id, None)
        try:
            self.store.requeue(job_id)  # a stored failure for space back to `queued`
        except Exception as exc:  # still full: the index could not take it either
            if not is_disk_full(exc):
                raise
            if job_id not in self._held:
                self._wait_for_space(job_id, exc)
                return
        self.start(job_id)

    def _save_progress(self, job_id: str) -> None:
        if job_id in self._progress:
            try:
                self.store.set_done(job_id, self._progress[job_id])
            except Exception as exc:  # progress is a hint; the records file is the truth
                log.warning("job %s: cannot store its progress: %s", job_id, exc)

    async def _grade(self, job: Job) -> tuple[dict[str, Any], int]:
        rubric = self.pool.rubric(job.rubric)
        if rubric.sha256 != job.rubric_sha256:
            raise JudgeError(f"rubric {job.rubric} changed since the job was submitted")
        try:
            source, records = self.store.input_path(job), self.store.records_path(job)
        except ValueError as exc:
            raise JobDamaged(str(exc)) from None
        await asyncio.to_thread(_check_input, job, source)
        touch_private(records)  # case text: 0600 before the first record is appended
        labels = await asyncio.to_thread(_labels, self.store.labels_path(job))
        grader = self.pool.grader(job.judge, rubric)
        last_saved = time.monotonic()

        def progress(done: int) -> None:
            nonlocal last_saved
            self._progress[job.id] = done
            if time.monotonic() - last_saved > PROGRESS_EVERY_S:
                self._save_progress(job.id)
                last_saved = time.monotonic()

        summary = await grade_file(
            grader,
            source,
            records,
            use_cache=self.pool.config.use_cache,
            progress=progress,
            prices=prices_for(self.pool.config.judge_config(job.judge)),
            validate=False,  # validated when the job was submitted
            human_labels=labels,
        )
        graded = int(summary.get("cases", 0))
        if graded != job.total:
            self._progress[job.id] = graded
            raise JobDamaged(
                f"only {graded} of the {job.total} submitted cases have a record; "
                "the job's files were changed or lost"
            )
        return summary, graded


def _labels(path: Path) -> HumanLabels | None:
    """The job's human labels (checked when it was submitted), if it was given some."""
    if not path.is_file():
        return None
    return human_labels_from_text(path.read_text("utf-8"), source="human_labels")


def _check_input(job: Job, source: Path) -> None:
    """JobDamaged unless the stored input is byte for byte the one submitted."""
    if not source.is_file():
        raise JobDamaged(f"the stored input {job.input_name} of job {job.id} is missing")
    if job.input_sha256 is not None and file_sha256(source) != job.input_sha256:
        raise JobDamaged(
            f"the stored input {job.input_name} of job {job.id} changed since it was "
            "submitted (sha256 mismatch); resubmit the job"
        )
