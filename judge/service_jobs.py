"""Background grading jobs that survive restarts: a SQLite job table plus each job's files.

A job is a folder `DATA_DIR/jobs/<id>/` with its validated input (`cases.jsonl`, or the
uploaded file) and its records file, graded exactly like `judge grade` does a file: records
are appended and flushed one by one, a restart keeps the finished ones and grades the rest,
and `finalize` leaves one record per case in input order. The table (standard-library
`sqlite3`, WAL) holds status, progress, summary and the `Idempotency-Key`.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import secrets
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from judge.errors import ApiError, JudgeError, UsageError
from judge.jobs import grade_file
from judge.service_judges import JudgePool

log = logging.getLogger(__name__)

ACTIVE = ("queued", "running")
PROGRESS_EVERY_S = 0.5
_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    rubric TEXT NOT NULL,
    rubric_sha256 TEXT NOT NULL,
    judge TEXT NOT NULL,
    input_name TEXT NOT NULL,
    total INTEGER NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    summary TEXT,
    error TEXT,
    idempotency_key TEXT UNIQUE,
    request_sha256 TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
)
"""


@dataclass(frozen=True)
class Job:
    id: str
    status: str
    rubric: str
    rubric_sha256: str
    judge: str
    input_name: str
    total: int
    done: int
    summary: dict[str, Any] | None
    error: str | None
    idempotency_key: str | None
    request_sha256: str | None
    created_at: float
    updated_at: float


def new_job_id() -> str:
    return "job_" + secrets.token_hex(12)


class JobStore:
    """The job table. One connection, serialised by a lock: every statement is tiny."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.jobs_dir = data_dir / "jobs"
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self._owner = _lock_folder(data_dir)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(data_dir / "jobs.sqlite3", check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()
        self._owner.close()

    def folder(self, job_id: str) -> Path:
        return self.jobs_dir / job_id

    def records_path(self, job: Job) -> Path:
        return self.folder(job.id) / "records.jsonl"

    def input_path(self, job: Job) -> Path:
        return self.folder(job.id) / job.input_name

    def create(self, job: Job) -> Job | None:
        """Insert a new job; None if its idempotency key is taken (a concurrent retry)."""
        try:
            with self._lock, self._db:
                self._db.execute(
                    "INSERT INTO jobs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        *(job.id, job.status, job.rubric, job.rubric_sha256, job.judge),
                        *(job.input_name, job.total, job.done, None, None),
                        *(job.idempotency_key, job.request_sha256, job.created_at),
                        job.updated_at,
                    ),
                )
        except sqlite3.IntegrityError:
            return None
        return job

    def get(self, job_id: str) -> Job | None:
        return self._one("SELECT * FROM jobs WHERE id = ?", job_id)

    def by_key(self, key: str) -> Job | None:
        return self._one("SELECT * FROM jobs WHERE idempotency_key = ?", key)

    def unfinished(self) -> list[Job]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM jobs WHERE status IN (?, ?) ORDER BY created_at", ACTIVE
            ).fetchall()
        return [_job(row) for row in rows]

    def set_status(self, job_id: str, status: str) -> None:
        """Move an active job to `status` (a finished job stays as it is)."""
        self._update(job_id, "status = ?", status)

    def set_done(self, job_id: str, done: int) -> None:
        """Record progress, whatever the status (a cancelled job keeps its last count)."""
        with self._lock, self._db:
            self._db.execute("UPDATE jobs SET done = ? WHERE id = ?", (done, job_id))

    def finish(
        self,
        job_id: str,
        status: str,
        *,
        done: int | None = None,
        summary: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        text = json.dumps(summary, allow_nan=False) if summary is not None else None
        self._update(
            job_id,
            "status = ?, done = COALESCE(?, done), summary = ?, error = ?",
            status,
            done,
            text,
            error,
        )

    def _update(self, job_id: str, assignments: str, *values: Any) -> None:
        with self._lock, self._db:
            self._db.execute(
                f"UPDATE jobs SET {assignments}, updated_at = ? WHERE id = ? AND status IN (?, ?)",
                (*values, time.time(), job_id, *ACTIVE),
            )

    def _one(self, sql: str, value: str) -> Job | None:
        with self._lock:
            row = self._db.execute(sql, (value,)).fetchone()
        return _job(row) if row is not None else None


def _lock_folder(data_dir: Path) -> IO[bytes]:
    """Hold an exclusive lock on the data dir for the life of the process (the OS drops it
    when the process dies, even by SIGKILL): two servers must not run the same jobs."""
    handle = (data_dir / "service.lock").open("ab")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise UsageError(f"another `judge serve` is using the data dir {data_dir}") from None
    return handle


def _job(row: sqlite3.Row) -> Job:
    data = dict(row)
    data["summary"] = json.loads(data["summary"]) if data["summary"] else None
    return Job(**data)


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
        grader = self.pool.grader(job.judge, rubric)
        source, records = self.store.input_path(job), self.store.records_path(job)
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
            validate=False,  # validated when the job was submitted
        )
        return summary, job.total


def discard_folder(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
