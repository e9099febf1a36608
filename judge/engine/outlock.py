"""One writer per output file: an exclusive lock on a sidecar file, held for a whole run.

`<dir>/.<name>.lock` is created beside the output and locked with `flock` (non-blocking):
a second run on the same output is refused at once (OutputLockedError, naming the process
that holds it) instead of racing the first through the same file. The OS drops the lock
when its process ends, even by SIGKILL, so a killed run never leaves the output locked; a
lock file left behind by such a run is simply locked again by the next one.

Releasing unlinks the lock file while still holding it. A run that opened the old file
just before the unlink would then lock a file no longer at that path, so `acquire` checks
that the path still names the file it locked (device and inode) and tries again if not.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from pathlib import Path

from judge.errors import UsageError

ATTEMPTS = 20


class _Scope:
    """The locks one command holds, by the output's absolute path."""

    def __init__(self, stack: ExitStack) -> None:
        self.stack = stack
        self.held: set[str] = set()


_SCOPE: ContextVar[_Scope | None] = ContextVar("output_locks", default=None)


class OutputLockedError(UsageError):
    """Another run is writing the same output (it holds the output's lock)."""


def lock_path(output: Path) -> Path:
    """The sidecar lock file of `output`: `.NAME.lock` in the same folder."""
    return output.with_name(f".{output.name}.lock")


class OutputLock:
    """The lock of one output, held from `acquire` until `release` (or the process ends)."""

    def __init__(self, output: Path, flag: str = "-o") -> None:
        self.output = output
        self.flag = flag
        self.path = lock_path(output)
        self._fd: int | None = None
        self._made: list[Path] = []  # folders made for the lock file, removed if left empty

    def acquire(self) -> OutputLock:
        blocker = next((p for p in self.path.parents if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            raise UsageError(f"{self.flag} {self.output}: {blocker} is a file, not a folder")
        try:
            self._made = _make_folders(self.path.parent)
        except OSError as exc:
            raise UsageError(f"{self.flag} {self.output}: cannot write there ({exc})") from None
        for _ in range(ATTEMPTS):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                self._remove_folders()
                raise UsageError(
                    f"{self.flag} {self.output}: cannot write there ({exc.strerror})"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = _holder(fd)
                os.close(fd)
                self._remove_folders()
                raise OutputLockedError(
                    f"{self.flag} {self.output} is being written by another judge run"
                    f"{holder}; wait for it to finish, or choose another path"
                ) from None
            if _same_file(fd, self.path):
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                self._fd = fd
                return self
            os.close(fd)  # the holder released and unlinked it meanwhile: lock the new one
        self._remove_folders()
        raise OutputLockedError(f"{self.flag} {self.output}: its lock file keeps changing")

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            if _same_file(self._fd, self.path):
                self.path.unlink()
        except OSError:
            pass  # a lock file left behind is harmless: the next run locks it again
        os.close(self._fd)
        self._fd = None
        self._remove_folders()

    def _remove_folders(self) -> None:
        """The folders `acquire` made, deepest first, where the run left them empty (a run
        refused before it wrote anything leaves no trace)."""
        for folder in reversed(self._made):
            try:
                folder.rmdir()
            except OSError:
                break  # not empty: the run wrote there
        self._made = []

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _make_folders(folder: Path) -> list[Path]:
    """Make `folder` and its missing parents; the ones made, outermost first."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()][::-1]
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _holder(fd: int) -> str:
    """` (pid N)` when the lock file names its holder."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (pid {text})" if text.isdigit() else ""


@contextmanager
def holding_locks() -> Iterator[None]:
    """The scope of a command: every lock `hold` takes inside it is released at its end."""
    with ExitStack() as stack:
        token = _SCOPE.set(_Scope(stack))
        try:
            yield
        finally:
            _SCOPE.reset(token)


def hold(output: Path, flag: str = "-o") -> None:
    """Lock `output` until the enclosing `holding_locks` ends (OutputLockedError if another
    run holds it); outside any such scope (a library call) nothing is locked. Locking the
    same file twice in one scope is a no-op."""
    scope = _SCOPE.get()
    if scope is None:
        return
    key = os.path.abspath(output)
    if key not in scope.held:
        scope.stack.enter_context(OutputLock(output, flag))
        scope.held.add(key)
