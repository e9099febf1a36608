"""The watch's checkpoint (DIR/checkpoint.json) and its one-watch-per-folder lock.

The checkpoint is small whatever the traffic: the source's position, the spend and the
window tallies, the counts, the last `RECENT` ids decided, and `records_size`, the
records file's length when it was saved. It is rewritten once a poll, not once a record:
the records file is the append-only log of what was graded, and the records past
`records_size` are what a killed run graded after its last save (`judge.traces.watch`
counts their spend on restart). A checkpoint of the first form (`decided`, every id ever
seen) is read too: its last ids become the recent ones.

A checkpoint that is not one (not JSON, a field of the wrong type) is an InputError naming
it: one line, exit 2, never a traceback.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judge.engine.atomic import replace_text
from judge.engine.records import loads_bounded
from judge.errors import InputError, UsageError
from judge.traces.sampling import Spend
from judge.traces.spans import open_regular

__all__ = ["LOCK", "RECENT", "WatchState", "folder_lock", "private_file", "private_folder"]

RECENT = 10_000  # ids decided lately: a span exported twice within this many is read once
LOCK = ".watch.lock"
# the checkpoint's most: its waiting spans (judge.traces.sources, 256 MiB) and the rest
MAX_BYTES = 320 * 1024 * 1024
_HELD: set[Path] = set()  # folders this process holds (the job's, then the loop's, lock)


# what a spend and a tally can be: a negative, NaN or infinite amount, or a window stamp
# that is not one (any letter sorts after every date: that window would never end), would
# lift or stop the budget for good, so such a checkpoint is damaged, not read
_COUNT = Field(default=0, ge=0)
_USD = Field(default=0.0, ge=0.0, allow_inf_nan=False)


class _SpendForm(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    hour: str = Field(default="", pattern=r"^(\d{4}-\d{2}-\d{2}T\d{2})?$")
    day: str = Field(default="", pattern=r"^(\d{4}-\d{2}-\d{2})?$")
    hour_usd: float = _USD
    day_usd: float = _USD
    hour_cases: int = _COUNT
    day_cases: int = _COUNT


class _TallyForm(BaseModel):
    """One window's tally: both counts, never more passed than graded."""

    model_config = ConfigDict(extra="forbid", strict=True)
    graded: int = Field(ge=0)
    passed: int = Field(ge=0)

    @model_validator(mode="after")
    def _at_most_graded(self) -> _TallyForm:
        if self.passed > self.graded:
            raise ValueError("more passed than graded")
        return self


class _Form(BaseModel):
    """The checkpoint's fields and their types (both forms)."""

    model_config = ConfigDict(strict=True)
    position: dict[str, Any]
    spend: _SpendForm
    windows: dict[str, _TallyForm]
    counts: dict[str, Annotated[int, Field(ge=0)]]
    recent: list[str] | None = None
    records_size: int | None = None
    decided: dict[str, str] | None = None  # the first form


@dataclass
class WatchState:
    """The checkpoint: source position, recent decisions, spend, window tallies, counts."""

    position: dict[str, Any] = field(default_factory=dict)
    recent: dict[str, None] = field(default_factory=dict)  # an ordered set, oldest first
    records_size: int | None = None  # None: unknown (a new or first-form checkpoint)
    spend: Spend = field(default_factory=Spend)
    windows: dict[str, dict[str, int]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    # a first-form checkpoint's every id (read once on start, never saved again): which
    # records it had counted, however old
    first_form: set[str] = field(default_factory=set)

    @classmethod
    def load(cls, path: Path) -> WatchState:
        if not path.exists() and not path.is_symlink():
            return cls()
        try:
            form = _Form.model_validate(loads_bounded(_read_bounded(path)))
        except ValidationError as exc:
            where = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "the top"
            raise _damaged(path, f"{where}: {exc.errors()[0]['msg']}") from None
        except (ValueError, OSError) as exc:
            raise _damaged(path, str(exc).splitlines()[0][:200]) from None
        if form.records_size is not None and form.records_size < 0:
            raise _damaged(path, "records_size is negative")
        ids = form.recent if form.recent is not None else list(form.decided or {})
        state = cls(
            position=form.position,
            records_size=form.records_size,
            spend=Spend(**form.spend.model_dump()),
            windows={start: tally.model_dump() for start, tally in form.windows.items()},
            counts=form.counts,
            first_form=set(form.decided or ()),
        )
        for case_id in ids[-RECENT:]:
            state.remember(case_id)
        return state

    def save(self, path: Path) -> None:
        data = {
            "version": 2,
            "position": self.position,
            "recent": list(self.recent),
            "records_size": self.records_size,
            "spend": self.spend.__dict__,
            "windows": self.windows,
            "counts": self.counts,
        }
        replace_text(path, json.dumps(data, sort_keys=True))

    def remember(self, case_id: str) -> None:
        """`case_id` decided: kept among the last RECENT."""
        self.recent[case_id] = None
        if len(self.recent) > RECENT:
            del self.recent[next(iter(self.recent))]

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n


def _read_bounded(path: Path) -> bytes:
    """The checkpoint's bytes: a regular file (a FIFO would be waited on, a link to
    /dev/zero read until memory ran out) of at most MAX_BYTES; else an OSError or
    ValueError saying why."""
    try:
        handle = open_regular(path)
    except InputError as exc:
        raise ValueError(str(exc).rsplit(": ", 1)[-1]) from None
    with handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"over {MAX_BYTES} bytes")
    return data


def _damaged(path: Path, why: str) -> InputError:
    return InputError(
        str(path), [(None, None, f"not a watch checkpoint ({why}); move it aside to start over")]
    )


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold DIR/.watch.lock (an exclusive `flock`) while the block runs: a second watch of
    the same folder is a UsageError at once, naming the first one's process. The kernel
    lets go of the lock when its process ends, however it ends (kill -9 included). Taken
    again by the process that holds it (the job, then its loop), it is already held."""
    import fcntl

    key = folder.resolve()
    if key in _HELD:
        yield
        return
    fd = _open_lock(folder)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            raise UsageError(
                f"another judge watch (pid {holder}) is running on {folder}: one watch a folder"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _HELD.add(key)
        try:
            yield
        finally:
            _HELD.discard(key)
    finally:
        os.close(fd)


def _open_lock(folder: Path) -> int:
    """The lock file, created 0600 in `folder` (made if need be). Never through a link: a
    lock name pre-made as a link to another file would have that file truncated and the
    pid written into it. A link, a folder or anything not a regular file there, or a
    folder that cannot be made, is a UsageError naming it."""
    import stat

    path = folder / LOCK
    try:
        private_folder(folder)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        why = "a link" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise UsageError(f"-o {folder}: cannot hold the watch lock {path} ({why})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError(f"-o {folder}: cannot hold the watch lock {path} (not a regular file)")
    return fd


def private_folder(folder: Path) -> None:
    """Make the watch's folder 0700 when this makes it: what it holds (records, the
    checkpoint's waiting spans) is case text, as the service's data folder holds. A folder
    that was there is not ours to chmod."""
    if not folder.is_dir():
        folder.mkdir(parents=True, mode=0o700)
        folder.chmod(0o700)  # mkdir's mode is filtered by the umask


def private_file(path: Path) -> None:
    """Create `path` empty and 0600 when it is not there (an append-only log opened later
    with the umask's mode would be readable by every user); one that is there is kept."""
    import stat

    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be the watch's records ({exc.strerror})") from None
    regular = stat.S_ISREG(os.fstat(fd).st_mode)
    os.close(fd)
    if not regular:  # a link to /dev/zero: reading the records back would never end
        raise UsageError(f"{path}: cannot be the watch's records (not a regular file)")
