"""Issue 33 item 7: a full disk under `judge grade -o`.

Before: two raw ENOSPC tracebacks (one from the write, one from closing the file) and a
torn last line. Now: one line naming the file and the cause, exit 1 (the run failed), the
file cut back to its last whole record, and the same command, once space returns,
finishes the run with the records of a run that never failed.

The disk is simulated in-process (the records file takes `quota` bytes, then a short
write, then ENOSPC, as a file system does), and, where this machine lets a test mount
one, a real tmpfs of 64 KiB is filled.
"""

from __future__ import annotations

import errno
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from tests.helpers import read_jsonl

CASES = 120
VOLATILE = {"latency_ms", "graded_at"}


class FullDisk(io.RawIOBase):
    """A file that takes `quota` more bytes, then fails as a full disk does."""

    def __init__(self, raw: io.FileIO, quota: list[int]) -> None:
        self.raw, self.quota = raw, quota

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self.quota[0] <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        taken = self.raw.write(bytes(memoryview(data)[: self.quota[0]])) or 0
        self.quota[0] -= taken
        return taken

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()

    def fileno(self) -> int:
        return self.raw.fileno()

    def close(self) -> None:
        self.raw.close()
        super().close()


def fill_after(monkeypatch: pytest.MonkeyPatch, target: Path, quota: int) -> list[int]:
    """Every open of `target` for writing goes to a disk with `quota` bytes left."""
    left = [quota]
    real_open = Path.open

    def open_(self: Path, mode: str = "r", buffering: int = -1, **kwargs: Any) -> Any:
        if self != target or not set(mode) & set("wa"):
            return real_open(self, mode, buffering, **kwargs)
        raw = FullDisk(io.FileIO(str(self), mode.replace("b", "").replace("t", "")), left)
        if "b" in mode and buffering == 0:
            return raw
        buffered = io.BufferedWriter(raw)
        return buffered if "b" in mode else io.TextIOWrapper(buffered, **kwargs)

    monkeypatch.setattr(Path, "open", open_)
    return left


def write_cases(path: Path, count: int = CASES) -> Path:
    with path.open("w") as handle:
        for n in range(count):
            case = {
                "id": f"case-{n:04d}",
                "question": "How long is the refund window?",
                "contexts": ["Refunds are accepted within 30 days of purchase. " * 4],
                "answer": f"Refunds are accepted within 30 days (case {n}).",
            }
            handle.write(json.dumps(case) + "\n")
    return path


def comparable(path: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in read_jsonl(path)]


def grade(cases: Path, out: Path) -> int:
    return main(
        ["grade", str(cases), "--rubric", "faithfulness", "-o", str(out), "--offline"], env={}
    )


@pytest.mark.parametrize("quota", [0, 1, 5_000, 30_000, 60_000])
def test_a_full_disk_is_one_line_exit_1_and_the_rerun_resumes(
    quota: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    cases = write_cases(tmp_path / "cases.jsonl")
    clean = tmp_path / "clean.jsonl"
    assert grade(cases, clean) == 0
    out = tmp_path / "graded.jsonl"
    capsys.readouterr()
    with monkeypatch.context() as patch:
        fill_after(patch, out, quota)
        assert grade(cases, out) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error" in line.lower()]
    assert "Traceback" not in err and len(errors) == 1, err
    assert errors[0].startswith(f"error: {out}: cannot write (No space left on device)")
    data = out.read_bytes()
    assert data == b"" or data.endswith(b"\n")  # no torn last line
    kept = read_jsonl(out) if data else []
    assert len(kept) < CASES and all(r["status"] == "ok" for r in kept)
    assert grade(cases, out) == 0  # space is back: the same command finishes the run
    assert comparable(out) == comparable(clean)


def test_a_full_disk_in_the_rewrite_keeps_every_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last step rewrites the file in input order through a temporary copy: with no
    space for it, the file is left as it was, and the rerun puts it in order."""
    from judge.engine import records

    cases = write_cases(tmp_path / "cases.jsonl")
    out = tmp_path / "graded.jsonl"
    clean = tmp_path / "clean.jsonl"
    assert grade(cases, clean) == 0
    lines = clean.read_text().splitlines(keepends=True)
    out.write_text("".join(reversed(lines[:50])))  # a resumed file, out of order

    def no_room(path: Path) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(records, "replacing", no_room)
        assert grade(cases, out) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"error: {out}: cannot write" in err
    assert sorted(comparable(out), key=lambda r: r["id"]) == comparable(clean)
    assert grade(cases, out) == 0
    assert comparable(out) == comparable(clean)


def _mount_tmpfs(where: Path) -> bool:
    if not shutil.which("mount") or sys.platform != "linux":
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)], capture_output=True
    )
    return done.returncode == 0


def test_a_real_full_tmpfs(tmp_path: Path) -> None:
    """The same on a real file system of 64 KiB, in a subprocess (needs mount rights)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if not _mount_tmpfs(disk):
        pytest.skip("this machine does not let the test mount a tmpfs")
    try:
        cases = write_cases(tmp_path / "cases.jsonl", 400)
        out = disk / "graded.jsonl"
        args = [sys.executable, "-m", "judge.cli", "grade", str(cases), "--rubric", "faithfulness"]
        done = subprocess.run([*args, "--offline", "-o", str(out)], capture_output=True, text=True)
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
        assert f"error: {out}: cannot write (No space left on device)" in done.stderr
        assert out.read_bytes().endswith(b"\n")
        kept = len(read_jsonl(out))
        moved = tmp_path / "graded.jsonl"
        shutil.copy(out, moved)  # space returns: the same run, where there is room
        done = subprocess.run(
            [*args, "--offline", "-o", str(moved)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert 0 < kept < 400 == len(read_jsonl(moved))
    finally:
        subprocess.run(["umount", str(disk)], check=False)
