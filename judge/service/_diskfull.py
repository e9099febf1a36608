"""A full disk under the service's data dir: recognised, said, and recovered from.

A write that fails for want of space (ENOSPC, EDQUOT, or SQLite's "database or disk is
full") is not a bug of the job: the job ends `failed` with the reason (`DISK_FULL` ...),
visible through GET even when the reason itself cannot be written (the runner holds it in
memory), and it is retried by itself, with a growing pause, until space returns; a job
whose failure for space was stored is taken up again when the service restarts. A
submission that meets a full disk is a 507 that says so and leaves no folder behind.
"""

from __future__ import annotations

import errno
import sqlite3

DISK_FULL = "the service's data dir is full"
NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
FIRST_RETRY_S = 5.0
LAST_RETRY_S = 60.0


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether `exc` (or an error it was raised from) is a write that found no space."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, OSError) and exc.errno in NO_SPACE_ERRNOS:
            return True
        if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc).lower():
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def disk_full_reason(exc: BaseException) -> str:
    """The job's error: what failed, and that the job resumes by itself."""
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return (
        f"{DISK_FULL} ({detail}); the records so far are kept and the job resumes by "
        "itself when space returns, or when the service restarts"
    )


def retry_delay(attempt: int, first: float = FIRST_RETRY_S) -> float:
    """Seconds before retry number `attempt` (0-based): doubling from `first`, at most a
    minute."""
    return float(min(first * 2**attempt, max(first, LAST_RETRY_S)))
