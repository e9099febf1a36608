"""The grading service's job stores behind one interface: SQLite (the embedded default, one
server per data dir: judge.service._store) and PostgreSQL (any number of `judge serve`
replicas on one database: judge.service.stores.postgres).

`open_store(config)` picks by `database:`; psycopg is imported only for a postgresql:// URL.
Routes see a `Store`; the runner that grades its jobs is a `Runner` (judge.service._jobs for
SQLite, judge.service._replicas for PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from judge.service._store import Job
from judge.service.config import ServiceConfig

__all__ = ["Job", "Runner", "Store", "open_store"]


class Store(Protocol):
    """What the routes ask of a job store."""

    data_dir: Path  # this server's own folder (scratch, staged uploads)
    jobs_dir: Path  # where an upload is staged before `admit`
    shared: bool  # other servers grade its jobs too (PostgreSQL)

    def admit(self, job: Job, folder: Path) -> Job | None: ...

    def get(self, job_id: str) -> Job | None: ...

    def by_key(self, key: str) -> Job | None: ...

    def listing(self, *, status: str | None, limit: int, before: Job | None) -> list[Job]: ...

    def open_records(self, job: Job) -> Iterator[bytes]: ...

    def records_file(self, job: Job, scratch: Path) -> Path: ...

    def close(self) -> None: ...


class Runner(Protocol):
    """What the routes ask of the runner that grades a store's jobs."""

    def resume(self) -> int: ...

    def start(self, job_id: str) -> None: ...

    def current(self, job: Job) -> Job: ...

    def progress(self, job: Job) -> int: ...

    async def cancel(self, job_id: str) -> None: ...

    async def join(self) -> None: ...

    async def stop(self) -> None: ...


def open_store(config: ServiceConfig) -> Store:
    """The store `config` names: PostgreSQL for a `database` URL, else SQLite in the data dir."""
    if config.database is None:
        from judge.service.stores.sqlite import SqliteStore

        return SqliteStore(config.data_dir)
    from judge.service.stores.postgres import PostgresStore

    return PostgresStore(config.database, config.data_dir, chunk_cases=config.replicas.chunk_cases)
