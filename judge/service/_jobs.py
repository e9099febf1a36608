"""Background grading jobs that survive restarts, over the job store (service_store).

A job is graded exactly like `judge grade` does a file: records are appended and flushed one
by one, a restart keeps the finished ones and grades the rest, and `finalize` leaves one
record per case in input order. A job ends `done` only when its stored input is the one
submitted (sha256) and every case has its record; otherwise it ends `failed` with the reason.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judge.engine.files import grade_file
from judge.engine.human_labels import HumanLabels, human_labels_from_text
from judge.engine.pricing import prices_for
from judge.errors import ApiError, JudgeError
from judge.rubric import file_sha256
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
    next start resumes them; `cancel` (DELETE) marks them `cancelled` first.
    """

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

    def resume(self) -> int:
        """Queue every job a previous run left queued or running; returns how many."""
        jobs = self.store.unfinished()
        for job in jobs:
            self.start(job.id)
        return len(jobs)

    def start(self, job_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._run(job_id), name=job_id)
        self._tasks[job_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(job_id, None))

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
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, job_id: str) -> None:
        async with self._slots:
            job = self.store.get(job_id)
            if job is None or job.status not in ACTIVE:
                return
            self.store.set_status(job_id, "running")
            try:
                summary, done = await self._grade(job)
            except asyncio.CancelledError:
                self._save_progress(job_id)
                raise
            except ApiError as exc:
                self._fail(job_id, f"the judge endpoint failed: {exc}")
            except JudgeError as exc:
                self._fail(job_id, str(exc))
            except Exception as exc:  # a job must end in a state, whatever went wrong
                log.exception("job %s failed", job_id)
                self._fail(job_id, f"internal error ({type(exc).__name__})")
            else:
                self.store.finish(job_id, "done", done=done, summary=summary)
            finally:
                self._progress.pop(job_id, None)

    def _fail(self, job_id: str, message: str) -> None:
        self._save_progress(job_id)
        self.store.finish(job_id, "failed", error=self.redact(message))

    def _save_progress(self, job_id: str) -> None:
        if job_id in self._progress:
            self.store.set_done(job_id, self._progress[job_id])

    async def _grade(self, job: Job) -> tuple[dict[str, Any], int]:
        rubric = self.pool.rubric(job.rubric)
        if rubric.sha256 != job.rubric_sha256:
            raise JudgeError(f"rubric {job.rubric} changed since the job was submitted")
        try:
            source, records = self.store.input_path(job), self.store.records_path(job)
        except ValueError as exc:
            raise JobDamaged(str(exc)) from None
        await asyncio.to_thread(_check_input, job, source)
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
