"""What every command's run shares, whichever job it is: the outputs it checked stay
locked until it ends (judge.engine.outlock), the one line a write that found no space
becomes, and the version line (the package and its rubric set)."""

from __future__ import annotations

import errno
from contextlib import AbstractContextManager

from judge.engine.outlock import holding_locks
from judge.rubric import DEFAULT_RUBRICS_DIR, lock_sha256

NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})


def command_run() -> AbstractContextManager[None]:
    """Enter around a command's run: every output it checks is held until it ends."""
    return holding_locks()


def no_space_line(exc: OSError) -> str | None:
    """The one line a write that found no space says (a summary, a report), as the
    records' own; None for any other OSError."""
    if exc.errno not in NO_SPACE:
        return None
    from judge.engine.records import RESUME  # here: --help must not load the engine

    where = f"{exc.filename}: " if exc.filename else ""
    return f"error: {where}cannot write ({exc.strerror}); {RESUME}"


def version_text() -> str:
    """`judge 0.1.0 (rubrics.lock sha256 1a2b3c4d5e6f)`: the package and the rubric set."""
    import judge

    lock = lock_sha256(DEFAULT_RUBRICS_DIR)
    return f"judge {judge.__version__} (rubrics.lock sha256 {lock[:12] if lock else 'missing'})"
