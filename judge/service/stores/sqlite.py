"""The SQLite job store (the embedded default): an index over job folders in the data dir,
one server per data dir. It lives in judge.service._store; this is its name behind the
`Store` interface."""

from judge.service._store import JobStore as SqliteStore

__all__ = ["SqliteStore"]
