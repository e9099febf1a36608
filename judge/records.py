"""The graded-records file: append as records complete, resume, and finish in input order.

Every line is written whole and flushed, so a run killed at any moment leaves a file whose
complete lines are valid records (a torn last line is cut off on the next run). Running the
same command again keeps the records already `ok` or `abstained` for the same rubric file and
grades the rest; the file is then rewritten atomically in input order, one line per case.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from judge.schemas import GradedRecord

KEEP_STATUSES = ("ok", "abstained")


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(byte offset, record) for every line; None for a torn or unreadable one."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        offset = 0
        for raw in handle:
            start, offset = offset, offset + len(raw)
            data = None
            if raw.endswith(b"\n"):  # else torn by a kill mid-write
                with contextlib.suppress(json.JSONDecodeError, UnicodeDecodeError):
                    data = json.loads(raw)
            ok = isinstance(data, dict) and isinstance(data.get("id"), str)
            yield start, data if ok else None


def scan_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(byte offset, record) for every complete, parseable line; torn lines are skipped."""
    for start, data in _lines(path):
        if data is not None:
            yield start, data


def finished_ids(path: Path, rubric_sha256: str) -> set[str]:
    """Ids with a record worth keeping: `ok` or `abstained` from this exact rubric file."""
    return {
        data["id"]
        for _, data in scan_records(path)
        if data.get("status") in KEEP_STATUSES and data.get("rubric_sha256") == rubric_sha256
    }


def cut_torn_tail(path: Path) -> None:
    """Drop a last line without its newline, left by a process killed mid-write."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        position = size
        while position > 0:
            step = min(position, 1 << 16)
            handle.seek(position - step)
            chunk = handle.read(step)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                handle.truncate(position - step + cut + 1)
                return
            position -= step
        handle.truncate(0)


class RecordWriter:
    """Appends records to the output file, one flushed line each."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        cut_torn_tail(path)
        self._handle: IO[str] = path.open("a", encoding="utf-8")

    def write(self, record: GradedRecord) -> None:
        self._handle.write(record.model_dump_json() + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def finalize(path: Path, ids: Callable[[], Iterable[str]]) -> None:
    """Make the file hold exactly one record per id, in the order `ids()` yields them (the
    last record written for an id wins). `ids` is called again if a rewrite is needed, so the
    id list is streamed, never held. Cheap when the file is already right; else an atomic
    rewrite through a temporary file."""
    if _in_order(path, ids()):
        return
    latest: dict[str, int] = {}
    for offset, data in scan_records(path):
        latest[data["id"]] = offset
    tmp = path.with_name(path.name + ".tmp")
    with path.open("rb") as source, tmp.open("wb") as target:
        for case_id in ids():
            if case_id not in latest:
                raise RuntimeError(f"{path}: no record for id {case_id!r}")
            source.seek(latest[case_id])
            target.write(source.readline())
        target.flush()
        os.fsync(target.fileno())
    os.replace(tmp, path)


def _in_order(path: Path, ids: Iterable[str]) -> bool:
    """One pass: every line a record, and the ids exactly `ids`, in order."""
    expected = iter(ids)
    for _, data in _lines(path):
        if data is None or next(expected, None) != data["id"]:
            return False
    return next(expected, None) is None
