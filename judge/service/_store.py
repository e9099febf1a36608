"""The grading service's job store: a SQLite index over job folders that can be rebuilt.

Layout of the data dir (private: 0700 when we create it, our files 0600):

    service.lock          held by the running server (one server per data dir)
    jobs.sqlite3          the index: status, progress, summary, Idempotency-Key (WAL mode)
    jobs/<id>/job.json    the job's manifest: every index column, rewritten when it ends
    jobs/<id>/<input>     the validated input, its sha256 in the manifest
    jobs/<id>/records.jsonl
    jobs/<id>/human_labels.jsonl   the job's human labels, when it was given some

The folders are the truth, the index a fast view of them: at start every job folder that
the index lacks (index emptied, deleted, or its WAL lost in a crash) is put back from its
manifest, and folders an interrupted upload left (`.incoming-*`) are removed. An index that
SQLite cannot read is refused with one line (UsageError), never silently replaced.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import logging
import os
import re
import secrets
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO

from pydantic import TypeAdapter

from calibration.io.jsontext import loads_bounded
from judge.errors import UsageError
from judge.service._diskfull import DISK_FULL
from judge.service._sql import listing_query

log = logging.getLogger(__name__)

ACTIVE = ("queued", "running")
CHUNK = 1 << 16  # bytes a records stream reads at a time
MANIFEST = "job.json"
INCOMING = ".incoming-"
HUMAN_LABELS = "human_labels.jsonl"  # a job's human labels, when it was given some
# the only names a job's stored input has (the upload's format); a manifest or index row
# naming anything else (`../x`) describes a job this service never made
INPUT_NAMES = frozenset({"cases.jsonl", "cases.csv"})
STATUSES = frozenset({"queued", "running", "done", "failed", "cancelled"})
_JOB_ID = re.compile(r"^job_[0-9a-f]{24}$")
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
    updated_at REAL NOT NULL,
    input_sha256 TEXT
);
CREATE INDEX IF NOT EXISTS jobs_by_time ON jobs (created_at, id);
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
    input_sha256: str | None = None  # None only for jobs stored before checksums


_COLUMNS = [f.name for f in dataclasses.fields(Job)]
_MANIFEST = TypeAdapter(Job)


def new_job_id() -> str:
    return "job_" + secrets.token_hex(12)


def private_dir(path: Path) -> None:
    """Create `path` (and parents) as 0700; an existing folder is not ours to chmod."""
    if not path.exists():
        path.mkdir(parents=True, mode=0o700)
        path.chmod(0o700)  # mkdir's mode is filtered by the umask


def discard_folder(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


class JobStore:
    """The job index. One connection, serialised by a lock: every statement is tiny."""

    shared = False  # this server's alone (service.lock)

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.jobs_dir = data_dir / "jobs"
        private_dir(data_dir)
        private_dir(self.jobs_dir)
        self._owner = lock_folder(data_dir)
        self._lock = threading.Lock()
        try:
            self._db = _open_index(data_dir / "jobs.sqlite3")
        except BaseException:
            self._owner.close()
            raise
        self.recover()

    def close(self) -> None:
        with self._lock:
            self._db.close()
        self._owner.close()

    def folder(self, job_id: str) -> Path:
        return self.jobs_dir / job_id

    def records_path(self, job: Job) -> Path:
        return self.folder(job.id) / "records.jsonl"

    def input_path(self, job: Job) -> Path:
        """The job's stored input; ValueError for a name that is not one of ours."""
        if job.input_name not in INPUT_NAMES:
            raise ValueError(f"job {job.id} names an input {job.input_name!r} that is not ours")
        return self.folder(job.id) / job.input_name

    def labels_path(self, job: Job) -> Path:
        return self.folder(job.id) / HUMAN_LABELS

    def admit(self, job: Job, folder: Path) -> Job | None:
        """Store a submission validated into its hidden `folder` as the queued `job`: the
        manifest first (the index can be rebuilt from folders), then the folder under its
        id, then the index row. None (the folder gone) if its idempotency key is taken."""
        write_manifest(folder, job)
        folder.rename(self.folder(job.id))
        try:
            created = self.create(job)
        except BaseException:  # no row, no folder: a restart must not run a job never accepted
            discard_folder(self.folder(job.id))
            raise
        if created is None:
            discard_folder(self.folder(job.id))
        return created

    def open_records(self, job: Job) -> Iterator[bytes]:
        """The done job's records as JSONL chunks; OSError now if its file is gone."""
        handle = self.records_path(job).open("rb")
        return _chunks(handle)

    def records_file(self, job: Job, scratch: Path) -> Path:
        """A file holding the job's records (its own; `scratch` is not needed here)."""
        return self.records_path(job)

    def create(self, job: Job) -> Job | None:
        """Insert a new job; None if its idempotency key is taken (a concurrent retry)."""
        try:
            self._insert(job)
        except sqlite3.IntegrityError:
            return None
        return job

    def get(self, job_id: str) -> Job | None:
        return self._one("SELECT * FROM jobs WHERE id = ?", job_id)

    def by_key(self, key: str) -> Job | None:
        return self._one("SELECT * FROM jobs WHERE idempotency_key = ?", key)

    def listing(self, *, status: str | None, limit: int, before: Job | None) -> list[Job]:
        """Jobs newest first: `limit` of them, of one `status` if given, older than `before`."""
        sql, values = listing_query(status=status, limit=limit, before=before, mark="?")
        with self._lock:
            rows = self._db.execute(sql, values).fetchall()
        return [_job(row) for row in rows]

    def unfinished(self) -> list[Job]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM jobs WHERE status IN (?, ?) ORDER BY created_at", ACTIVE
            ).fetchall()
        return [_job(row) for row in rows]

    def failed_for_space(self) -> list[Job]:
        """Jobs that ended `failed` because the data dir was full: the next start resumes
        them (judge.service._diskfull)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM jobs WHERE status = 'failed' AND substr(error, 1, ?) = ? "
                "ORDER BY created_at",
                (len(DISK_FULL), DISK_FULL),
            ).fetchall()
        return [_job(row) for row in rows]

    def requeue(self, job_id: str) -> None:
        """A job that failed for want of space back to `queued`, its error cleared; any
        other job is left as it is."""
        with self._lock, self._db:
            self._db.execute(
                "UPDATE jobs SET status = 'queued', error = NULL, updated_at = ? "
                "WHERE id = ? AND status = 'failed' AND substr(error, 1, ?) = ?",
                (time.time(), job_id, len(DISK_FULL), DISK_FULL),
            )

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
            changed = self._db.execute(
                f"UPDATE jobs SET {assignments}, updated_at = ? WHERE id = ? AND status IN (?, ?)",
                (*values, time.time(), job_id, *ACTIVE),
            ).rowcount
        job = self.get(job_id) if changed else None
        if job is not None and job.status not in ACTIVE:
            write_manifest(self.folder(job_id), job)  # the end state survives the index

    def _insert(self, job: Job) -> None:
        values = dataclasses.astuple(job)
        summary_at = _COLUMNS.index("summary")
        row = [*values[:summary_at], _dump(job.summary), *values[summary_at + 1 :]]
        marks = ",".join("?" * len(_COLUMNS))
        with self._lock, self._db:
            self._db.execute(f"INSERT INTO jobs ({','.join(_COLUMNS)}) VALUES ({marks})", row)

    def _one(self, sql: str, value: str) -> Job | None:
        with self._lock:
            row = self._db.execute(sql, (value,)).fetchone()
        return _job(row) if row is not None else None

    def recover(self) -> int:
        """Remove interrupted uploads; put back every job folder the index lacks; returns
        how many were put back. A folder without a readable manifest is left and logged."""
        restored = 0
        for folder in sorted(self.jobs_dir.iterdir()):
            if folder.name.startswith(INCOMING):
                discard_folder(folder)
            elif _JOB_ID.match(folder.name) and self.get(folder.name) is None:
                job = read_manifest(folder)
                if job is None:
                    log.warning(
                        "job folder %s has no readable %s (or it names an input or status "
                        "that is not ours); left as it is",
                        folder,
                        MANIFEST,
                    )
                    continue
                try:
                    self._insert(job)
                except sqlite3.IntegrityError:  # its Idempotency-Key went to a later job
                    self._insert(dataclasses.replace(job, idempotency_key=None))
                restored += 1
        if restored:
            log.warning("rebuilt %d job(s) the job index had lost, from their folders", restored)
        return restored


def _open_index(path: Path) -> sqlite3.Connection:
    """Connect (creating the file 0600 first), check it, migrate; UsageError if unreadable."""
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if name.exists():
            name.chmod(0o600)  # our files; SQLite gives the WAL and SHM the database's mode
    db = sqlite3.connect(path, check_same_thread=False)
    try:
        db.row_factory = sqlite3.Row
        with db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            check = db.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise sqlite3.DatabaseError(check)
            db.executescript(_SCHEMA)
            columns = {row[1] for row in db.execute("PRAGMA table_info(jobs)")}
            if "input_sha256" not in columns:
                db.execute("ALTER TABLE jobs ADD COLUMN input_sha256 TEXT")
    except sqlite3.DatabaseError as exc:
        db.close()
        raise UsageError(
            f"{path}: the job index is unreadable ({exc}); move it and its -wal/-shm files "
            "aside and start again to rebuild it from the job folders"
        ) from None
    return db


def write_manifest(folder: Path, job: Job) -> None:
    """job.json in the job's folder, replaced atomically, 0600."""
    if not folder.is_dir():
        return
    temp = folder / f".{MANIFEST}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(dataclasses.asdict(job), handle, allow_nan=False)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, folder / MANIFEST)


def read_manifest(folder: Path) -> Job | None:
    """The job a folder's manifest describes, or None if it is missing, unreadable, or not
    one of ours: typed as the index is, its own folder's id, an input name and a status
    this service writes (a manifest is a file anyone with the data dir can edit)."""
    try:
        data = loads_bounded((folder / MANIFEST).read_text("utf-8"))
        job = _MANIFEST.validate_python({name: data[name] for name in _COLUMNS if name in data})
    except (OSError, ValueError, TypeError):  # pydantic's error, and too deep, are ValueErrors
        return None
    if job.id != folder.name or job.input_name not in INPUT_NAMES or job.status not in STATUSES:
        return None
    return job


def _dump(summary: dict[str, Any] | None) -> str | None:
    return json.dumps(summary, allow_nan=False) if summary is not None else None


def lock_folder(data_dir: Path) -> IO[bytes]:
    """Hold an exclusive lock on the data dir for the life of the process (the OS drops it
    when the process dies, even by SIGKILL): two servers must not run the same jobs."""
    fd = os.open(data_dir / "service.lock", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    handle = os.fdopen(fd, "ab")
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


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    with handle:
        while chunk := handle.read(CHUNK):
            yield chunk
