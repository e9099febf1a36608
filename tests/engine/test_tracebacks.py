"""Issue 20 item 14: what used to end in a traceback is a clear error (or, for a damaged
cache entry, a miss): `judge rubrics show ... | head` (BrokenPipeError) and a truncated
large cache entry (since the cache holds JSON in its rows, a row cut short). The label, record and batch-line cases are in
test_label_export_safety.py, test_rerun_keeps_work.py and test_batch_import_checks.py."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import diskcache
import pytest

from judge.engine.cache import VerdictCache
from tests.helpers import REPO


def test_a_closed_pipe_is_one_line_not_a_traceback() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader (head) has already gone
    try:
        done = subprocess.run(
            [sys.executable, "-m", "judge.cli", "rubrics", "show", "faithfulness"],
            stdout=write,
            stderr=subprocess.PIPE,
            cwd=REPO,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert err.strip() == "judge: the output was closed before it ended (broken pipe)"


def test_a_truncated_large_cache_entry_is_a_miss(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The cache keeps every entry, however large, as JSON bytes in its database row (no
    file of its own: see test_cache_safety.py), so the damage to check is a row cut short;
    and a large entry an older version kept in a file of its own is never read, a miss."""
    folder = tmp_path / "cache"
    cache = VerdictCache(folder)
    cache.set("k", {"raw": "x" * 200_000})
    assert not list(folder.rglob("*.val"))
    assert cache.get("k") == {"raw": "x" * 200_000}
    with sqlite3.connect(folder / "cache.db") as db:
        db.execute("UPDATE Cache SET value = substr(value, 1, 1000) WHERE key = 'k'")
    assert cache.get("k") is None
    assert "unreadable" in caplog.text
    cache.close()

    with diskcache.Cache(str(folder)) as old:  # diskcache's default Disk: a pickle in a file
        old.set("big", {"raw": "y" * 200_000})
    (value,) = folder.rglob("*.val")
    value.write_bytes(value.read_bytes()[:1000])
    with VerdictCache(folder) as cache:
        assert cache.get("big") is None
