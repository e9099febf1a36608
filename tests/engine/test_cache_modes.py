"""The verdict cache holds case text: the folder the grader creates is 0700 and the
database files in it 0600, whatever the umask (issue 45, item 7)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from judge.engine.cache import VerdictCache


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_cache_folder_and_its_files_are_private(tmp_path) -> None:
    old = os.umask(0o002)  # a permissive umask: group-writable, world-readable
    try:
        folder = tmp_path / "team" / "verdicts"
        cache = VerdictCache(folder, secret=b"k" * 32)
        cache.set("a" * 64, {"id": "case-7", "question": "what is in the contract?"})
        files = sorted(p for p in folder.iterdir() if p.is_file())
        modes = {p.name: _mode(p) for p in files}
        cache.close()
    finally:
        os.umask(old)
    assert _mode(folder) == 0o700
    assert "cache.db" in modes and set(modes.values()) == {0o600}, modes
