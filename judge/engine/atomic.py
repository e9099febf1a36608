"""Replace a file atomically through a temporary file of its own, never a fixed name.

The temporary file is created beside the target (same file system, so `os.replace` is
atomic) with a unique name (`tempfile.mkstemp`): two writers of one path can never write
into, rename or delete each other's half-written file. On any error the temporary file is
removed and the target is left as it was.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def replacing(path: Path) -> Iterator[IO[bytes]]:
    """A binary handle whose content replaces `path` (flushed and fsynced) when the block
    ends without an error."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def replace_text(path: Path, text: str) -> Path:
    """Replace `path` with `text` (UTF-8) atomically; returns the path."""
    with replacing(path) as handle:
        handle.write(text.encode("utf-8"))
    return path


def open_private(path: Path) -> IO[bytes]:
    """`path` opened for writing from empty, readable by its owner alone (0600) whatever
    the umask: files that hold case text (a service's job input and records)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # a file that was there keeps its mode through O_CREAT
    return os.fdopen(fd, "wb")


def touch_private(path: Path) -> Path:
    """`path` created empty if missing (its content kept if not), readable by its owner
    alone (0600) whatever the umask: a file that is appended to later."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return path
