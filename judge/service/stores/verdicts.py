"""The verdict cache in the PostgreSQL job database (table `verdicts`), so that every
replica on it shares one cache: a case judged on one replica is a hit on all of them.

Same keys and entries as the folder cache (judge.engine.cache: `cache_key`, the
`llm-judge-verdict/2` JSON entry, never unpickled, authenticated by its HMAC); an entry that
is not ours, or that the replica's cache secret does not vouch for, is a miss. Replicas
share their entries when they share the secret: `$JUDGE_CACHE_KEY`, the same on every
replica (on one host, the service user's key file serves them all). A database that fails
is a miss (`get`) or not written (`set`), with one warning: a cache must never fail a run.
"""

from __future__ import annotations

import logging
from pathlib import Path

import psycopg
from psycopg.rows import DictRow
from psycopg_pool import ConnectionPool

from judge.engine.cache import VerdictCache

log = logging.getLogger(__name__)


class PostgresVerdictCache(VerdictCache):
    """A `VerdictCache` whose entries are rows of `verdicts` (key TEXT PRIMARY KEY, entry
    BYTEA); it has no folder of its own, and the job store's pool owns the connections."""

    def __init__(self, pool: ConnectionPool[psycopg.Connection[DictRow]], where: str) -> None:
        self._pool = pool
        self.directory = Path(where)  # only named in messages
        self._where = where
        self._warned = False
        self._init_trust(None)

    def _read(self, key: str) -> bytes | None:
        try:
            with self._pool.connection() as db:
                row = db.execute("SELECT entry FROM verdicts WHERE key = %s", (key,)).fetchone()
        except psycopg.Error as exc:
            self._warn(exc)
            return None
        return None if row is None else bytes(row["entry"])

    def _write(self, key: str, entry: bytes) -> None:
        try:
            with self._pool.connection() as db:
                db.execute(
                    "INSERT INTO verdicts (key, entry) VALUES (%s, %s) "
                    "ON CONFLICT (key) DO UPDATE SET entry = EXCLUDED.entry",
                    (key, entry),
                )
        except psycopg.Error as exc:
            self._warn(exc)

    def keys(self) -> list[str]:
        with self._pool.connection() as db:
            return [row["key"] for row in db.execute("SELECT key FROM verdicts").fetchall()]

    def __len__(self) -> int:
        with self._pool.connection() as db:
            row = db.execute("SELECT count(*) AS n FROM verdicts").fetchone()
        return int(row["n"]) if row else 0

    def close(self) -> None:
        """Nothing to close (the connections are the job store's); says what was refused."""
        self.report_rejected()

    def _warn(self, exc: BaseException) -> None:
        if not self._warned:
            self._warned = True
            log.warning("the verdict cache in %s failed (%s): grading without it", self._where, exc)
