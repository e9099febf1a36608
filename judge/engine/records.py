"""The graded-records file: append as records complete, resume, and finish in input order.

Every line is written whole and flushed before the event loop next waits (once per loop
turn, not once per record), so a run killed at any moment leaves a file whose complete lines
are valid records (a torn last line, one that begins as a record does, is cut off on the
next run) and loses at most the records its last turn finished, which the next run grades
again. Running the same command again keeps the records already `ok` or `abstained` for the
same rubric file and grades the rest; the file is then rewritten atomically in input order,
one line per case.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.engine.atomic import replacing
from judge.engine.identity import describe_record_judge, judge_differences
from judge.errors import OutputConflictError, OutputWriteError
from judge.schemas import GradedRecord

KEEP_STATUSES = ("ok", "abstained")


def loads_bounded(text: str | bytes) -> Any:
    """`calibration.io.jsontext.loads_bounded`, imported on first use: `judge --help` and
    `judge rubrics` reach this module and must not load calibration."""
    from calibration.io.jsontext import loads_bounded as bounded

    return bounded(text)


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(byte offset, record) for every line; None for a torn or unreadable one."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        offset = 0
        for raw in handle:
            start, offset = offset, offset + len(raw)
            data = None  # a line torn by a kill mid-write is not JSON: None
            with contextlib.suppress(ValueError):  # JSONDecodeError, UnicodeDecodeError, too deep
                data = loads_bounded(raw)
            ok = isinstance(data, dict) and isinstance(data.get("id"), str)
            yield start, data if ok else None


def scan_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(byte offset, record) for every complete, parseable line; torn lines are skipped."""
    for start, data in _lines(path):
        if data is not None:
            yield start, data


def finished_ids(path: Path, rubric_sha256: str, keep: tuple[str, ...] = KEEP_STATUSES) -> set[str]:
    """Ids with a record worth keeping: `ok` or `abstained` (the statuses `keep`) from this
    exact rubric file."""
    return {
        data["id"]
        for _, data in scan_records(path)
        if data.get("status") in keep and data.get("rubric_sha256") == rubric_sha256
    }


def finished_inputs(
    path: Path, rubric_sha256: str, keep: tuple[str, ...] = KEEP_STATUSES
) -> dict[str, str | None]:
    """`finished_ids`, each with the `inputs_sha256` its record holds (None: a record
    written before the field), so a rerun can tell a changed case (judge.engine.resume)."""
    return {
        data["id"]: data.get("inputs_sha256")
        if isinstance(data.get("inputs_sha256"), str)
        else None
        for _, data in scan_records(path)
        if data.get("status") in keep and data.get("rubric_sha256") == rubric_sha256
    }


def cut_torn_tail(path: Path) -> None:
    """Drop a last line without its newline, left by a process killed mid-write; a last
    line that is a whole record (a file saved without its final newline) gets the newline
    instead."""
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
                start = position - step + cut + 1
                break
            position -= step
        else:
            start = 0
        handle.seek(start)
        if _whole_record(handle.read()):
            handle.write(b"\n")
        else:
            handle.truncate(start)


def _whole_record(raw: bytes) -> bool:
    try:
        data = loads_bounded(raw)
    except ValueError:
        return False
    return isinstance(data, dict) and _is_record(data) and record_problem(data) is None


UNORDERED = (
    "every record is kept in it, not yet in input order: free space and run the same "
    "command again to finish"
)
RESUME = "the records written before are kept whole: free space and run the same command again"


class RecordWriter:
    """Appends records to the output file, whole lines, flushed before the event loop
    next waits: the records of one burst (those an event-loop turn finishes) go to the
    file in one write, not one each, and none waits longer than that turn. Outside an
    event loop each record is written at once.

    A write that fails (a full disk: ENOSPC) cuts the file back to its last whole line
    (cutting needs no space) and is an OutputWriteError naming the file, raised at once
    or at the next write or close; nothing is written after it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        cut_torn_tail(path)
        self._handle = path.open("ab", buffering=0)
        self._whole = self._handle.seek(0, os.SEEK_END)  # bytes of whole lines in the file
        self._pending: list[bytes] = []
        self._flush_due = False
        self._failed: OutputWriteError | None = None

    def write(self, record: GradedRecord) -> None:
        if self._failed is not None:  # said at the next write, as an immediate flush would
            raise self._failed
        self._pending.append((record.model_dump_json() + "\n").encode("utf-8"))
        if self._flush_due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._write_pending()
            return
        self._flush_due = True
        loop.call_soon(self.flush)

    def flush(self) -> None:
        self._flush_due = False
        with contextlib.suppress(OutputWriteError):  # kept in _failed: a loop callback's
            self._write_pending()  # error would only be logged

    def _write_pending(self) -> None:
        if self._failed is not None or self._handle.closed or not self._pending:
            return
        data = memoryview(b"".join(self._pending))
        self._pending.clear()
        try:
            while data:
                written = self._handle.write(data)
                if not written:  # never loop on a file that takes nothing
                    raise OSError(errno.EIO, "the file took no more bytes")
                data = data[written:]
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._handle.fileno(), self._whole)  # no torn last line
            self._failed = OutputWriteError(str(self.path), exc, resume=RESUME)
            raise self._failed from exc
        self._whole = self._handle.tell()

    def close(self) -> None:
        try:
            self._write_pending()
        finally:
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
    try:
        with path.open("rb") as source, replacing(path) as target:
            for case_id in ids():
                if case_id not in latest:
                    raise RuntimeError(f"{path}: no record for id {case_id!r}")
                source.seek(latest[case_id])
                target.write(source.readline())
    except OSError as exc:  # the rewrite needs a second copy's space; the file is as it was
        raise OutputWriteError(str(path), exc, resume=UNORDERED) from exc


def _in_order(path: Path, ids: Iterable[str]) -> bool:
    """One pass: every line a record, and the ids exactly `ids`, in order."""
    expected = iter(ids)
    for _, data in _lines(path):
        if data is None or next(expected, None) != data["id"]:
            return False
    return next(expected, None) is None


WAYS_OUT = "pass --overwrite to grade every case again, or -o another file"


def check_resumable(
    path: Path,
    *,
    rubric_sha256: str,
    rubric_ref: str,
    judge_id: str,
    judge: str,
    identity: dict[str, Any] | None = None,
    keep: tuple[str, ...] = KEEP_STATUSES,
) -> None:
    """Refuse to resume into `path` unless every record in it that this run would keep
    (the statuses `keep`) comes from this rubric file and this judge (`judge_id`, a hash
    of the judge `identity`; `judge` says it in words). Another judge's failed records
    are no conflict: the run asks those cases again and the new record replaces the old
    (`finalize`), so the advice of a cut-off reply, raise --max-tokens, is a rerun that
    works. A file that is not a records file is refused too. A torn last line (a kill
    mid-write) is allowed: the writer cuts it. Raises OutputConflictError; reads only."""
    problem = _first_conflict(path, rubric_sha256, judge_id, keep)
    if problem is None:
        return
    conflict, count, line, data = problem
    if conflict == "not_records":
        raise OutputConflictError(
            f"{path} exists and is not a records file (line {line} is not a graded record); "
            f"{WAYS_OUT}"
        )
    if conflict == "invalid":
        raise OutputConflictError(
            f"{path}:{line} (id {data.get('id')!r}) is not a valid graded record "
            f"({data['problem']}); fix or delete that line, or {WAYS_OUT}"
        )
    where = f"{path} holds {count} record(s)"
    if conflict == "rubric":
        theirs = f"{data.get('rubric')}@{data.get('rubric_version')}"
        message = (
            f"{where} of another rubric file ({theirs}, sha256 "
            f"{str(data.get('rubric_sha256'))[:12]}), not {rubric_ref} (sha256 {rubric_sha256[:12]})"
        )
    elif conflict == "legacy":
        message = (
            f"{where} without a judge_id (written by an older llm-judge), so they cannot be "
            f"matched to this run's judge, {judge}"
        )
    else:
        info = data["judge"] if isinstance(data.get("judge"), dict) else {}
        differences = judge_differences(identity, info) if identity else []
        if differences:  # only what differs, the record's value -> this run's
            message = f"{where} from another judge ({', '.join(differences)})"
        else:  # what differs is not written in a record: the endpoint, say
            message = (
                f"{where} from another judge, {describe_record_judge(info)} (judge_id "
                f"{data.get('judge_id')}); this run grades with {judge} (judge_id {judge_id})"
            )
    raise OutputConflictError(f"{message}; {WAYS_OUT}", rerun="--overwrite")


def _first_conflict(
    path: Path, rubric_sha256: str, judge_id: str, keep: tuple[str, ...] = KEEP_STATUSES
) -> tuple[str, int, int, dict[str, Any]] | None:
    """(kind, how many records conflict that way, first line, first record) or None."""
    counts: dict[str, int] = {}
    first: dict[str, tuple[int, dict[str, Any]]] = {}
    for number, (data, complete) in enumerate(_raw_lines(path), 1):
        if data is None or not _is_record(data):
            if complete:
                return "not_records", 1, number, {}
            continue
        if not complete:
            continue  # a torn record: the writer cuts it
        invalid = record_problem(data)
        if invalid is not None:
            return "invalid", 1, number, {"id": data.get("id"), "problem": invalid}
        kind = _conflict(data, rubric_sha256, judge_id)
        if kind == "judge" and data.get("status") not in keep:
            continue  # asked again, and replaced: no conflict
        if kind is not None:
            counts[kind] = counts.get(kind, 0) + 1
            first.setdefault(kind, (number, data))
    for kind in ("rubric", "legacy", "judge"):
        if kind in counts:
            return kind, counts[kind], *first[kind]
    return None


def _conflict(data: dict[str, Any], rubric_sha256: str, judge_id: str) -> str | None:
    if data.get("rubric_sha256") != rubric_sha256:
        return "rubric"
    if data.get("judge_id") is None:
        return "legacy"
    return "judge" if data.get("judge_id") != judge_id else None


def _is_record(data: dict[str, Any]) -> bool:
    return all(isinstance(data.get(k), str) for k in ("id", "rubric_sha256", "status"))


def record_problem(data: dict[str, Any]) -> str | None:
    """Why a parsed line is not a graded record this tool can read back (a hand-edited
    score of the wrong type, say), as `field: message`; None when it is one."""
    try:
        GradedRecord.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(map(str, error["loc"])) or "record"
        return f"{where}: {error['msg']}"
    return None


# What RecordWriter starts every line with: a last line without its newline is a record
# torn by a kill only when it begins so (else it is someone's file, never cut).
RECORD_START = b'{"id":'


def _raw_lines(path: Path) -> Iterator[tuple[dict[str, Any] | None, bool]]:
    """(record or None, whether the line was complete) for every line of the file; a last
    line without its newline counts as incomplete only when it can be a torn record."""
    if not path.is_file():
        return
    with path.open("rb") as handle:
        for raw in handle:
            data = None
            with contextlib.suppress(ValueError):  # JSONDecodeError, UnicodeDecodeError, too deep
                data = loads_bounded(raw)
            complete = raw.endswith(b"\n") or not _torn_record(raw)
            yield (data if isinstance(data, dict) else None), complete


def _torn_record(raw: bytes) -> bool:
    """Whether a line without its newline can be the start of a record RecordWriter wrote."""
    head = raw[: len(RECORD_START)]
    return (
        RECORD_START.startswith(head) if len(head) < len(RECORD_START) else (head == RECORD_START)
    )


def is_records_file(path: Path) -> bool:
    """Whether every complete line of `path` is a graded record (a torn last line allowed)."""
    return all(
        (data is not None and _is_record(data)) or not complete
        for data, complete in _raw_lines(path)
    )
