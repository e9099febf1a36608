"""The PostgreSQL job store: jobs, their cases, idempotency keys, progress and records in one
database that any number of `judge serve` replicas share.

Tables (schema_version says which migrations ran; `MIGRATIONS` are applied in order, under
an advisory lock, by whichever server starts first; a database of a newer schema is refused):

    jobs        one row a job, the columns of `Job`; idempotency_key UNIQUE, so the same key
                sent to two replicas at once makes one job (the loser gets the winner's)
    job_cases   (job_id, case_index) -> the validated case row (JSON)
    chunks      (job_id, chunk) -> cases [first, stop), done, owner, lease_until, run
    records     (job_id, case_index) PRIMARY KEY -> the record (a JSONL line)

A replica claims an open chunk whose lease is free or expired with `SELECT ... FOR UPDATE
SKIP LOCKED` (no two replicas get the same chunk), renews its lease while grading, and
commits the chunk's records in one transaction that first re-locks the chunk and checks it
still owns it: a replica that lost its lease (killed, stalled past `lease_s`) has its late
write discarded, and the records' primary key with ON CONFLICT DO NOTHING keeps any case
from a second record. So each case ends with exactly one record however replicas die.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from judge.engine.atomic import open_private
from judge.engine.cache import VerdictCache
from judge.engine.inputs import iter_rows
from judge.errors import UsageError
from judge.service._sql import listing_query
from judge.service._store import (
    ACTIVE,
    HUMAN_LABELS,
    Job,
    discard_folder,
    lock_folder,
    new_job_id,
    private_dir,
)

try:
    import psycopg
    from psycopg.rows import DictRow, dict_row
    from psycopg_pool import ConnectionPool
except ImportError:  # pragma: no cover - the extra is part of the dev environment
    raise UsageError(
        "a postgresql:// database needs psycopg: pip install 'llm-judge[postgres]'"
    ) from None

log = logging.getLogger(__name__)

_COLUMNS = [f.name for f in dataclasses.fields(Job)]
_LOCK = 0x6A756467  # pg_advisory_xact_lock key for migrations ("judg")
RECORDS_PAGE = 1000

MIGRATIONS: tuple[str, ...] = (
    # 1: jobs, their cases, chunks with leases, records
    """
    CREATE TABLE jobs (
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
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        input_sha256 TEXT,
        human_labels TEXT
    );
    CREATE INDEX jobs_by_time ON jobs (created_at, id);
    CREATE INDEX jobs_active ON jobs (created_at) WHERE status IN ('queued', 'running');
    CREATE TABLE job_cases (
        job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        case_index INTEGER NOT NULL,
        row_json TEXT NOT NULL,
        PRIMARY KEY (job_id, case_index)
    );
    CREATE TABLE chunks (
        job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        chunk INTEGER NOT NULL,
        first INTEGER NOT NULL,
        stop INTEGER NOT NULL,
        done BOOLEAN NOT NULL DEFAULT FALSE,
        owner TEXT,
        lease_until TIMESTAMPTZ,
        run TEXT,
        PRIMARY KEY (job_id, chunk)
    );
    CREATE INDEX chunks_open ON chunks (job_id, chunk) WHERE NOT done;
    CREATE TABLE records (
        job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        case_index INTEGER NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (job_id, case_index)
    );
    """,
    # 2: the verdict cache, shared by the replicas (judge.service.stores.verdicts)
    """
    CREATE TABLE verdicts (
        key TEXT PRIMARY KEY,
        entry BYTEA NOT NULL
    );
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


@dataclass(frozen=True)
class Claim:
    """A chunk this replica holds the lease on: its job and the case rows [first, stop)."""

    job: Job
    chunk: int
    first: int
    stop: int
    rows: list[str]
    human_labels: str | None


def replica_id() -> str:
    """This process's name as a lease owner: host, pid and a random tail."""
    return f"{socket.gethostname()}:{os.getpid()}:{new_job_id()[4:12]}"


def safe_url(url: str) -> str:
    """The URL without its password, to name the database in messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc}" if user else netloc))


class PostgresStore:
    """Jobs in PostgreSQL; a small connection pool, every statement short (autocommit unless
    a transaction is named). `data_dir` is this replica's own scratch folder."""

    shared = True  # every replica on the database grades its jobs

    def __init__(
        self, url: str, data_dir: Path, *, chunk_cases: int = 100, max_connections: int = 8
    ) -> None:
        self.url = url
        self.data_dir = data_dir
        self.jobs_dir = data_dir / "incoming"
        self.chunk_cases = chunk_cases
        private_dir(data_dir)
        private_dir(self.jobs_dir)
        self._owner = lock_folder(data_dir)  # each replica its own scratch folder
        for folder in self.jobs_dir.iterdir():  # staged uploads a killed server left
            discard_folder(folder)
        try:
            with psycopg.connect(url, autocommit=True, row_factory=dict_row) as db:
                self.migrate(db)  # first, on one connection: an unreachable URL fails now
        except psycopg.Error as exc:
            self._owner.close()
            raise UsageError(f"database {safe_url(url)}: {_first_line(exc)}") from None
        except BaseException:
            self._owner.close()
            raise
        self._pool = ConnectionPool(
            url,
            connection_class=psycopg.Connection[DictRow],
            min_size=1,
            max_size=max_connections,
            kwargs={"autocommit": True, "row_factory": dict_row},
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=30)
        except BaseException:
            self._pool.close()
            self._owner.close()
            raise

    def close(self) -> None:
        self._pool.close()
        self._owner.close()

    def verdict_cache(self) -> VerdictCache:
        """The verdict cache in this database, shared by every replica on it."""
        from judge.service.stores.verdicts import PostgresVerdictCache

        return PostgresVerdictCache(self._pool, safe_url(self.url))

    # --- schema ---------------------------------------------------------------------------

    def migrate(self, db: psycopg.Connection[DictRow]) -> int:
        """Apply the migrations this database lacks; UsageError (one line) for a database
        of a newer schema than this version knows. Returns the schema version."""
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = db.execute("SELECT max(version) AS v FROM schema_version").fetchone()
            current = int(row["v"]) if row and row["v"] is not None else 0
            if current > SCHEMA_VERSION:
                raise UsageError(
                    f"database {safe_url(self.url)} has job schema version {current}, newer "
                    f"than this judge's {SCHEMA_VERSION}: upgrade llm-judge to serve it"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                db.execute(MIGRATIONS[version - 1])
                db.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
                log.info("database schema migrated to version %d", version)
        return SCHEMA_VERSION

    # --- what the routes ask ---------------------------------------------------------------

    def admit(self, job: Job, folder: Path) -> Job | None:
        """Store the submission validated into `folder` as the queued `job`: its row, its
        case rows and chunks, in one transaction; None if its idempotency key is taken (a
        concurrent submission with the same key, on any replica, won). The folder goes."""
        try:
            rows = [
                json.dumps(row, ensure_ascii=False)
                for _, row in iter_rows(folder / job.input_name)
                if isinstance(row, dict)
            ]
            labels_path = folder / HUMAN_LABELS
            labels = labels_path.read_text("utf-8") if labels_path.is_file() else None
            if len(rows) != job.total:
                raise ValueError(f"job {job.id}: {len(rows)} rows stored, {job.total} validated")
            values = [*_row(job), labels]
            marks = ",".join(["%s"] * len(values))
            with self._pool.connection() as db, db.transaction():
                inserted = db.execute(
                    f"INSERT INTO jobs ({','.join(_COLUMNS)}, human_labels) VALUES ({marks}) "
                    "ON CONFLICT (idempotency_key) DO NOTHING RETURNING id",
                    values,
                ).fetchone()
                if inserted is None:
                    return None
                with db.cursor() as cur:
                    with cur.copy("COPY job_cases (job_id, case_index, row_json) FROM STDIN") as cp:
                        for index, text in enumerate(rows):
                            cp.write_row((job.id, index, text))
                    size = self.chunk_cases
                    starts = range(0, len(rows), size)
                    cur.executemany(
                        "INSERT INTO chunks (job_id, chunk, first, stop) VALUES (%s, %s, %s, %s)",
                        [
                            (job.id, n, first, min(first + size, len(rows)))
                            for n, first in enumerate(starts)
                        ],
                    )
            return job
        finally:
            discard_folder(folder)

    def get(self, job_id: str) -> Job | None:
        return self._one("SELECT * FROM jobs WHERE id = %s", job_id)

    def by_key(self, key: str) -> Job | None:
        return self._one("SELECT * FROM jobs WHERE idempotency_key = %s", key)

    def listing(self, *, status: str | None, limit: int, before: Job | None) -> list[Job]:
        """Jobs newest first: `limit` of them, of one `status` if given, older than `before`."""
        sql, values = listing_query(status=status, limit=limit, before=before, mark="%s")
        with self._pool.connection() as db:
            rows = db.execute(sql, values).fetchall()
        return [_job(row) for row in rows]

    def open_records(self, job: Job) -> Iterator[bytes]:
        """The job's records as JSONL, in input order, a page at a time."""
        return self._pages(job.id)

    def _pages(self, job_id: str) -> Iterator[bytes]:
        after = -1
        while True:
            with self._pool.connection() as db:
                rows = db.execute(
                    "SELECT case_index, record FROM records WHERE job_id = %s AND case_index > %s "
                    "ORDER BY case_index LIMIT %s",
                    (job_id, after, RECORDS_PAGE),
                ).fetchall()
            if not rows:
                return
            after = rows[-1]["case_index"]
            yield "".join(row["record"] + "\n" for row in rows).encode("utf-8")

    def records_file(self, job: Job, scratch: Path) -> Path:
        """The job's records written to `scratch`/records.jsonl (input order)."""
        path = scratch / "records.jsonl"
        with open_private(path) as handle:
            for page in self._pages(job.id):
                handle.write(page)
        return path

    def unfinished(self) -> list[Job]:
        with self._pool.connection() as db:
            rows = db.execute(
                "SELECT * FROM jobs WHERE status IN (%s, %s) ORDER BY created_at", ACTIVE
            ).fetchall()
        return [_job(row) for row in rows]

    def set_status(self, job_id: str, status: str) -> None:
        """Move an active job to `status` (a finished job stays as it is)."""
        with self._pool.connection() as db:
            db.execute(
                "UPDATE jobs SET status = %s, updated_at = %s WHERE id = %s AND status IN (%s, %s)",
                (status, time.time(), job_id, *ACTIVE),
            )

    def fail(self, job_id: str, error: str) -> None:
        with self._pool.connection() as db:
            db.execute(
                "UPDATE jobs SET status = 'failed', error = %s, updated_at = %s "
                "WHERE id = %s AND status IN (%s, %s)",
                (error, time.time(), job_id, *ACTIVE),
            )

    # --- what the replicas' runners ask ----------------------------------------------------

    def claim(self, owner: str, lease_s: float) -> Claim | None:
        """Take the lease on the oldest active job's first open chunk that no replica holds
        (free, or its lease expired); the job becomes `running`. None when there is none."""
        with self._pool.connection() as db, db.transaction():
            row = db.execute(
                """
                WITH next AS (
                    SELECT c.job_id, c.chunk FROM chunks c JOIN jobs j ON j.id = c.job_id
                    WHERE NOT c.done AND j.status IN ('queued', 'running')
                      AND (c.lease_until IS NULL OR c.lease_until < clock_timestamp())
                    ORDER BY j.created_at, c.job_id, c.chunk
                    LIMIT 1
                    FOR UPDATE OF c SKIP LOCKED
                )
                UPDATE chunks c
                SET owner = %s, lease_until = clock_timestamp() + make_interval(secs => %s)
                FROM next WHERE c.job_id = next.job_id AND c.chunk = next.chunk
                RETURNING c.job_id, c.chunk, c.first, c.stop
                """,
                (owner, lease_s),
            ).fetchone()
            if row is None:
                return None
            job_id = row["job_id"]
            db.execute(
                "UPDATE jobs SET status = 'running', updated_at = %s "
                "WHERE id = %s AND status = 'queued'",
                (time.time(), job_id),
            )
            job_row = db.execute("SELECT * FROM jobs WHERE id = %s", (job_id,)).fetchone()
            cases = db.execute(
                "SELECT row_json FROM job_cases WHERE job_id = %s AND case_index >= %s "
                "AND case_index < %s ORDER BY case_index",
                (job_id, row["first"], row["stop"]),
            ).fetchall()
        assert job_row is not None
        return Claim(
            job=_job(job_row),
            chunk=row["chunk"],
            first=row["first"],
            stop=row["stop"],
            rows=[c["row_json"] for c in cases],
            human_labels=job_row["human_labels"],
        )

    def renew(self, claim: Claim, owner: str, lease_s: float) -> bool:
        """Extend the lease; False if it is lost (another replica took the chunk) or the
        job is no longer active (cancelled, failed): the grading should stop."""
        with self._pool.connection() as db:
            row = db.execute(
                """
                UPDATE chunks c
                SET lease_until = clock_timestamp() + make_interval(secs => %s)
                FROM jobs j
                WHERE c.job_id = %s AND c.chunk = %s AND c.owner = %s AND NOT c.done
                  AND j.id = c.job_id AND j.status IN ('queued', 'running')
                RETURNING c.chunk
                """,
                (lease_s, claim.job.id, claim.chunk, owner),
            ).fetchone()
        return row is not None

    def release(self, claim: Claim, owner: str) -> None:
        """Give the lease back now (a server stopping): another replica takes the chunk."""
        with self._pool.connection() as db:
            db.execute(
                "UPDATE chunks SET owner = NULL, lease_until = NULL "
                "WHERE job_id = %s AND chunk = %s AND owner = %s AND NOT done",
                (claim.job.id, claim.chunk, owner),
            )

    def commit(self, claim: Claim, owner: str, records: list[str], run: dict[str, Any]) -> bool:
        """Store the chunk's records (one per case, in order) if this replica still owns
        it; False, nothing written, if the lease went to another replica meanwhile."""
        with self._pool.connection() as db, db.transaction():
            held = db.execute(
                "SELECT chunk FROM chunks WHERE job_id = %s AND chunk = %s AND owner = %s "
                "AND NOT done FOR UPDATE",
                (claim.job.id, claim.chunk, owner),
            ).fetchone()
            if held is None:
                return False
            added = db.execute(
                "INSERT INTO records (job_id, case_index, record) "
                "SELECT %s, i, r FROM unnest(%s::integer[], %s::text[]) AS t (i, r) "
                "ON CONFLICT DO NOTHING",
                (claim.job.id, list(range(claim.first, claim.first + len(records))), records),
            ).rowcount
            db.execute(
                "UPDATE chunks SET done = TRUE, owner = NULL, lease_until = NULL, run = %s "
                "WHERE job_id = %s AND chunk = %s",
                (json.dumps(run), claim.job.id, claim.chunk),
            )
            db.execute(
                "UPDATE jobs SET done = done + %s, updated_at = %s WHERE id = %s",
                (added, time.time(), claim.job.id),
            )
        return True

    def finish_next(
        self,
        conclude: Callable[[Job, list[str], list[dict[str, Any]], str | None], Ending],
    ) -> Job | None:
        """End one active job whose chunks are all done (any replica may: the row lock says
        which), with what `conclude(job, records, runs, human_labels)` decides; the job, or
        None when no job is ready."""
        with self._pool.connection() as db, db.transaction():
            row = db.execute(
                """
                SELECT * FROM jobs j WHERE status IN ('queued', 'running')
                  AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.job_id = j.id AND NOT c.done)
                ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED
                """
            ).fetchone()
            if row is None:
                return None
            job = _job(row)
            records = db.execute(
                "SELECT record FROM records WHERE job_id = %s ORDER BY case_index", (job.id,)
            ).fetchall()
            runs = db.execute(
                "SELECT run FROM chunks WHERE job_id = %s ORDER BY chunk", (job.id,)
            ).fetchall()
            ending = conclude(
                job,
                [r["record"] for r in records],
                [json.loads(r["run"]) for r in runs if r["run"]],
                row["human_labels"],
            )
            db.execute(
                "UPDATE jobs SET status = %s, done = %s, summary = %s, error = %s, "
                "updated_at = %s WHERE id = %s",
                (
                    ending.status,
                    ending.done,
                    json.dumps(ending.summary, allow_nan=False) if ending.summary else None,
                    ending.error,
                    time.time(),
                    job.id,
                ),
            )
        return job

    def _one(self, sql: str, value: str) -> Job | None:
        with self._pool.connection() as db:
            row = db.execute(sql, (value,)).fetchone()
        return _job(row) if row is not None else None


@dataclass(frozen=True)
class Ending:
    """How a job whose chunks are all done ends."""

    status: str
    done: int
    summary: dict[str, Any] | None = None
    error: str | None = None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _row(job: Job) -> list[Any]:
    values = list(dataclasses.astuple(job))
    at = _COLUMNS.index("summary")
    values[at] = json.dumps(job.summary, allow_nan=False) if job.summary is not None else None
    return values


def _job(row: dict[str, Any]) -> Job:
    data = {name: row[name] for name in _COLUMNS}
    data["summary"] = json.loads(data["summary"]) if data["summary"] else None
    return Job(**data)
