"""Finding runs under the paths `judge view` is given, and naming them stably.

A PATH is a records file (JSONL from `judge grade`, or its `--parquet` table), a run
folder (a multi-rubric pass: RUBRIC.jsonl each; a jury run: RUBRIC.jsonl and
jurors/NAME.jsonl) or a folder of many runs; folders are searched to MAX_DEPTH levels,
hidden ones skipped. Only regular files are read (a link is followed to one): a device
(a link to /dev/zero), a FIFO or a socket is passed over, whatever its name, since reading
it never ends or never starts. Every records file is one run (one rubric); the runs of
one folder form a group (a pass), whose two-by-two the RAG page shows. JSON files beside them are
recognised by their keys: a grade summary, a probe's result, `judge compare --json`,
`judge calibrate`'s calibration.json. A cases file beside the records (a JSONL whose
first line is a case: an id and a question, an answer or messages) is joined to them, so a case
page shows its question, contexts and answer; `--cases FILE` names one for every run.

**Run ids** are `STEM-HASH`: the records file's name without its suffix, and the first 8
hex digits of the sha256 of its path relative to the folder holding PATH, with `/`
separators (`judge view runs/` names `runs/a/faithfulness.jsonl`). They do not change
across restarts, nor when the folder is moved or served from elsewhere; a second run
that would take an id already given gets the hash of its absolute path instead.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import stat
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from judge.errors import UsageError
from judge.view.index import GLOB_CHARACTERS, quoted

MAX_DEPTH = 4
RECORD_KEYS = frozenset({"id", "rubric", "status", "rubric_sha256"})
CASE_TEXT_KEYS = frozenset(
    {"question", "answer", "user_input", "response", "answer_a", "messages", "messages_a"}
)
JSON_LIMIT = 64 << 20  # recognised outputs are read whole: not past this size


@dataclass
class Output:
    """A recognised file beside the runs: `kind` is summary, probe, compare or calibrate."""

    id: str
    kind: str
    path: Path

    def read(self) -> Any:
        return json.loads(self.path.read_text(encoding="utf-8"))


@dataclass
class ViewRun:
    """One records file, what it is joined with, and the group (folder) it belongs to."""

    id: str
    path: Path
    group: str
    cases: Path | None = None
    outputs: list[Output] = field(default_factory=list)


@dataclass
class Catalog:
    """Every run and recognised output found under the paths."""

    runs: dict[str, ViewRun] = field(default_factory=dict)
    outputs: dict[str, Output] = field(default_factory=dict)

    def run(self, run_id: str) -> ViewRun | None:
        return self.runs.get(run_id)

    def refresh(self) -> None:
        """Look for runs again (the paths' runs are found once; a service's jobs come and go)."""


class WatchedCatalog(Catalog):
    """The runs under the paths `judge view` was given, looked for again when the runs are
    listed or an unknown run is asked for: a run graded into a watched folder since the
    start appears without a restart. Runs already found keep their id, and stay listed
    (with their error) if their file goes; only folders holding a new records file are
    read again (their outputs and cases file), so a refresh costs a walk and first lines."""

    def __init__(self, paths: Sequence[Path], cases: Path | None) -> None:
        super().__init__()
        self.paths = list(paths)
        self.cases = cases
        self._lock = threading.Lock()

    def refresh(self) -> None:
        with self._lock:
            for path in self.paths:
                if path.exists():
                    _discover_one(path, self, self.cases, new_only=True)

    def run(self, run_id: str) -> ViewRun | None:
        if run_id not in self.runs:
            self.refresh()
        return self.runs.get(run_id)


def discover(paths: Sequence[Path], cases: Path | None = None) -> Catalog:
    """The catalog of `paths`; UsageError (one line) for a path that is not there or
    holds no run."""
    if cases is not None and not cases.is_file():
        raise UsageError(f"--cases {cases}: no such file")
    catalog = WatchedCatalog(paths, cases)
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder")
        if not path.is_dir() and not regular(path):
            raise UsageError(f"{path}: not a regular file (a device, FIFO or socket is not read)")
        found = _discover_one(path, catalog, cases)
        if not found and path.is_file():
            raise UsageError(f"{path} is not a records file (from judge grade)")
        if not found:
            raise UsageError(f"{path}: no records file in it")
    return catalog


def _discover_one(
    path: Path, catalog: Catalog, cases: Path | None, *, new_only: bool = False
) -> int:
    base = path.resolve().parent
    folders = [(path.parent, [path])] if path.is_file() else list(_folders(path))
    known = {run.path for run in catalog.runs.values()}
    found = 0
    for folder, files in folders:
        runs = [f for f in files if f not in known and _is_records(f)]
        if new_only and not runs:
            continue
        beside = cases or _cases_file(folder, files, runs)
        group = _relative(folder.resolve(), base) or folder.name
        outputs = [o for f in files if (o := _output(f, base)) is not None]
        for output in outputs:
            catalog.outputs[output.id] = output
        for file in runs:
            run_id = _run_id(file, base, catalog)
            catalog.runs[run_id] = ViewRun(run_id, file, group, beside, outputs)
            found += 1
    return found


def _folders(root: Path) -> Iterator[tuple[Path, list[Path]]]:
    start = len(root.parts)
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if len(here.parts) - start >= MAX_DEPTH:
            dirs[:] = []
        yield here, [here / n for n in sorted(names) if not n.startswith(".") and regular(here / n)]


def regular(path: Path) -> bool:
    """Whether `path` is (or links to) a regular file: the only kind the viewer reads."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def _run_id(file: Path, base: Path, catalog: Catalog) -> str:
    stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in file.stem)[:40] or "run"
    rel = _relative(file.resolve(), base)
    run_id = f"{stem}-{hashlib.sha256(rel.encode()).hexdigest()[:8]}"
    if run_id in catalog.runs:
        absolute = file.resolve().as_posix()
        run_id = f"{stem}-{hashlib.sha256(absolute.encode()).hexdigest()[:8]}"
    return run_id


def first_line(path: Path) -> dict[str, Any] | None:
    """The first line of a JSONL file as an object, or None."""
    try:
        with path.open("rb") as handle:
            line = handle.readline(1 << 20)
        data = json.loads(line)
    except (OSError, ValueError, RecursionError):  # deep nesting: not a record either
        return None
    return data if isinstance(data, dict) else None


def _is_records(path: Path) -> bool:
    if path.suffix.lower() == ".parquet":
        return _is_records_parquet(path)
    if path.suffix.lower() != ".jsonl":
        return False
    data = first_line(path)
    return data is not None and data.keys() >= RECORD_KEYS


def _is_records_parquet(path: Path) -> bool:
    """A Parquet table of records (`judge grade --parquet`), by its columns: not a table of
    cases (`judge grade cases.parquet` leaves one beside the runs). One that cannot be read
    is taken for a run, and listed with its error."""
    if GLOB_CHARACTERS & set(str(path)):  # DuckDB would read a glob: the index reads it
        return True
    try:
        with duckdb.connect() as db:
            rows = db.execute(f"SELECT name FROM parquet_schema({quoted(path)})").fetchall()
    except duckdb.Error:
        return True
    return {"id", "rubric", "status"} <= {str(row[0]) for row in rows}


def _cases_file(folder: Path, files: list[Path], runs: list[Path]) -> Path | None:
    """The one cases file in `folder` (or else in its parent, for a pass folder) holding
    the first case id the runs graded."""
    first = next((d["id"] for r in runs if (d := first_line(r)) and "id" in d), None)
    if first is None:
        return None
    for where in (files, _listing(folder.parent)):
        found = [f for f in where if f.suffix.lower() == ".jsonl" and _is_cases(f)]
        found = [f for f in found if _mentions(f, str(first))]
        if len(found) == 1:
            return found[0]
    return None


def _mentions(path: Path, case_id: str) -> bool:
    """Whether the file holds `case_id` as a JSON string (a byte search, not a parse)."""
    needle = json.dumps(case_id).encode()
    try:
        with (
            path.open("rb") as handle,
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data,
        ):
            return data.find(needle) >= 0
    except (OSError, ValueError):  # an empty file cannot be mapped
        return False


def _listing(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if regular(p) and not p.name.startswith("."))
    except OSError:
        return []


def _is_cases(path: Path) -> bool:
    data = first_line(path)
    return (
        data is not None
        and "id" in data
        and not data.keys() >= RECORD_KEYS
        and bool(CASE_TEXT_KEYS & data.keys())
    )


def _output(path: Path, base: Path) -> Output | None:
    if path.suffix.lower() != ".json":
        return None
    try:
        if path.stat().st_size > JSON_LIMIT:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    kind = output_kind(data)
    if kind is None:
        return None
    rel = _relative(path.resolve(), base)
    return Output(f"{kind}-{hashlib.sha256(rel.encode()).hexdigest()[:8]}", kind, path)


def output_kind(data: Any) -> str | None:
    """What a JSON file is, by its keys: summary, probe, compare, calibrate or None."""
    if not isinstance(data, dict):
        return None
    if "probe" in data and "rubric" in data:
        return "probe"
    if "comparisons" in data and "baseline" in data:
        return "compare"
    if "confusion_matrix" in data and "observed_agreement" in data:
        return "calibrate"
    if ("rubric" in data and "status" in data and "cases" in data) or (
        "rubrics" in data and "cases" in data
    ):
        return "summary"
    return None
