"""Reading answer sets: JSONL or CSV, validated in full before anything is graded.

Rows come from `calibration.io.rows`, the one reader (and one set of rules: BOM, blank lines,
line numbers, UTF-8, line length, nesting depth, a JSON array file, CSV header and row
length) that label files use too; this module adds what makes a row a case: field
aliases, Ragas' names and row-number ids, CSV list cells, and validation.

Validation streams the file once and keeps only the ids' hashes (for uniqueness); grading
streams it again, or (`CaseReader`) grades the cases of the same pass, throwing what it
graded away when a line fails. Every problem names the file and line; nothing graded from a
file that fails is kept.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from calibration.io.rows import TOO_DEEP, csv_header, is_csv, nested_too_deep
from calibration.io.rows import iter_rows as read_any_rows
from judge.engine._inputs_csv import case_cells
from judge.engine.frames import frame_rows, is_parquet, parquet_rows
from judge.errors import InputError
from judge.rubric import Rubric
from judge.schemas import CASE_ALIASES, Case

MAX_PROBLEMS = 20
# Ragas' column names: a file that uses them may have no `id` (ids then come from row numbers)
RAGAS_COLUMNS = frozenset({"user_input", "retrieved_contexts", "response"})


@dataclass
class Validated:
    """What validation learnt about a file: how many cases, and that they are fine."""

    path: Path
    count: int


def iter_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line, row) for each row (`calibration.io.rows`, the one reader of JSONL and CSV); row
    is a problem message when unreadable. CSV cells become case values (`case_cells`).

    A file in Ragas' column names with no `id` gets ids from row numbers (`row-1`, ...),
    decided on its first row so that every pass over the file agrees."""
    return with_derived_ids(_raw_rows(path, is_csv(path)))


def with_derived_ids(
    rows: Iterable[tuple[int, dict[str, Any] | str]],
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """The rows, with ids from row numbers (`row-1`, ...) when the first row is in Ragas'
    names and has no id."""
    derive: bool | None = None
    for index, (number, row) in enumerate(rows, 1):
        if isinstance(row, dict):
            if derive is None:
                derive = _derives_ids(row)
            if derive and _lacks_id(row):
                row = {"id": f"row-{index}", **{k: v for k, v in row.items() if k != "id"}}
        yield number, row


def _raw_rows(path: Path, csv_file: bool) -> Iterator[tuple[int, dict[str, Any] | str]]:
    if is_parquet(path):
        yield from parquet_rows(path)
        return
    for number, row in read_any_rows(path):
        if csv_file and isinstance(row, dict):
            row = case_cells(row)  # a metadata cell is JSON: the depth rule applies to it too
            if nested_too_deep(row):
                row = TOO_DEEP
        yield number, row


def _lacks_id(row: dict[str, Any]) -> bool:
    return row.get("id") in (None, "")


def derived_ids_note(path: Path) -> str | None:
    """One line to print when the file's ids come from row numbers, else None."""
    try:
        rows = _raw_rows(path, is_csv(path))
        first = next((row for _, row in rows if isinstance(row, dict)), None)
    except OSError:
        return None  # validation says what is wrong with the file
    if first is not None and _derives_ids(first):
        return "no id column in Ragas' names: ids are the row numbers (row-1, row-2, ...)"
    return None


def _derives_ids(first_row: dict[str, Any]) -> bool:
    return _lacks_id(first_row) and bool(RAGAS_COLUMNS & first_row.keys())


Rubrics = Rubric | Sequence[Rubric]


def _listed(rubrics: Rubrics | None) -> list[Rubric]:
    if rubrics is None:
        return []
    return [rubrics] if isinstance(rubrics, Rubric) else list(rubrics)


def to_case(row: dict[str, Any], rubrics: Rubrics | None = None) -> tuple[Case | None, str | None]:
    """A case, or the reason the row is not one (naming the fields, and which rubric needs
    a missing one)."""
    try:
        case = Case.model_validate(row)
    except ValidationError as exc:
        parts = []
        for err in exc.errors()[:4]:
            where = ".".join(str(p) for p in err["loc"]) or "case"
            said = err["msg"].removeprefix("Value error, ")  # pydantic's prefix says nothing
            msg = "unknown field" if err["type"] == "extra_forbidden" else said.lower()
            parts.append(f"{where}: {msg}")
        return None, "; ".join(parts)
    wanting = [
        _wanting(case, rubric, missing)
        for rubric in _listed(rubrics)
        if (missing := rubric.missing_inputs(case))
    ]
    return (None, "; ".join(wanting)) if wanting else (case, None)


def _wanting(case: Case, rubric: Rubric, missing: list[str]) -> str:
    """What a case lacks for a rubric. A case with neither an answer nor a conversation says
    so too: it is most likely a row of the wrong file, not a row missing one field."""
    said = f"missing {', '.join(missing)} (needed by rubric {rubric.ref})"
    if case.answer is None and case.messages is None and {"answer", "messages"} & set(missing):
        said += ": a case with neither answer nor messages"
    return said


def validate_file(path: Path, rubric: Rubrics, *, max_problems: int = MAX_PROBLEMS) -> Validated:
    """Check every line: syntax, fields the rubric (every rubric, when several grade the
    file in one pass) needs, types, unique ids. Raise InputError listing the problems (up
    to `max_problems`) if any; nothing is graded from a bad file.

    Ids are checked for uniqueness through 8-byte hashes (8 bytes a case, so memory stays
    flat); only when two hashes collide is the file read again to name the lines."""
    reader = CaseReader(path, rubric, max_problems=max_problems)
    for _ in reader:
        pass
    return reader.finish()


class CaseReader:
    """A file's cases, read and checked once, as `validate_file` checks them: iterate it for
    the valid cases in input order (none once a problem was found: the rest of the file is
    still read, for its problems), then call `finish`, which raises the InputError listing
    every problem (duplicate ids included) or returns what was read.

    One pass both validates and feeds the grader (`judge.engine.files`): what was graded
    before a problem showed is the caller's to throw away, so nothing graded from a file
    that does not validate is ever kept."""

    def __init__(self, path: Path, rubric: Rubrics, *, max_problems: int = MAX_PROBLEMS) -> None:
        _check_readable(path)
        self.path, self.rubric, self.max_problems = path, rubric, max_problems
        self.problems: list[tuple[int | None, str | None, str]] = []
        self.hashes = array("Q")
        if is_csv(path) and not is_parquet(path):  # Parquet has a schema, not a CSV header
            self.problems.extend(_check_csv_header(path, rubric))

    def __iter__(self) -> Iterator[Case]:
        problems, hashes = self.problems, self.hashes
        for number, row in iter_rows(self.path):
            if len(problems) >= self.max_problems:
                problems.append((None, None, f"stopped after {self.max_problems} problems"))
                break
            if isinstance(row, str):
                problems.append((number, None, row))
                continue
            case, problem = to_case(row, self.rubric)
            if case is None:
                case_id = str(row.get("id")) if row.get("id") not in (None, "") else None
                problems.append((number, case_id, problem or "invalid case"))
                continue
            hashes.append(_id_hash(case.id))
            if not problems:
                yield case

    def finish(self) -> Validated:
        """What was read, once the whole file was; InputError if any line failed."""
        problems = self.problems
        if len(problems) < self.max_problems:
            limit = self.max_problems - len(problems)
            problems.extend(_duplicates(self.path, self.hashes, limit))
        if not problems and not self.hashes:
            problems.append((None, None, "empty file: no cases to grade"))
        if problems:
            raise InputError(str(self.path), problems)
        return Validated(path=self.path, count=len(self.hashes))


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise InputError(str(path), [(None, None, "no such file")])
    if path.is_dir():
        raise InputError(str(path), [(None, None, "is a folder, not a file")])
    try:
        path.open("rb").close()
    except OSError as exc:
        raise InputError(str(path), [(None, None, f"cannot be read ({exc.strerror})")]) from None


def _id_hash(case_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(case_id.encode(), digest_size=8).digest(), "big")


def _duplicates(
    path: Path, hashes: array[int], limit: int
) -> list[tuple[int | None, str | None, str]]:
    ordered = np.sort(np.frombuffer(hashes, dtype=np.uint64))
    repeated = set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())
    if not repeated:
        return []
    problems: list[tuple[int | None, str | None, str]] = []
    first_line: dict[str, int] = {}
    for number, row in iter_rows(path):
        if not isinstance(row, dict) or len(problems) >= limit:
            continue
        case, _ = to_case(row)
        if case is None or _id_hash(case.id) not in repeated:
            continue
        if case.id in first_line:
            message = f"duplicate id (first on line {first_line[case.id]})"
            problems.append((number, case.id, message))
        else:
            first_line[case.id] = number
    return problems


def _check_csv_header(path: Path, rubrics: Rubrics) -> list[tuple[int | None, str | None, str]]:
    columns = set(csv_header(path))
    header = {CASE_ALIASES.get(h, h) for h in columns}
    if not header:
        return []
    derived = "id" not in columns and RAGAS_COLUMNS & columns  # ids from row numbers
    problems: list[tuple[int | None, str | None, str]] = []
    for rubric in _listed(rubrics):
        needed = [*([] if derived else ["id"]), *rubric.behaviour.required_inputs(rubric)]
        missing = [name for name in needed if name not in header]
        if missing:
            text = f"CSV has no column {', '.join(missing)} (needed by rubric {rubric.ref})"
            problems.append((1, None, text))
    return problems


def frame_cases(
    frame: Any, rubric: Rubrics | None = None, *, name: str = "DataFrame"
) -> list[Case]:
    """The cases of a pandas or polars DataFrame or an Arrow table, by a file's rules
    (column names, aliases, Ragas' names with ids from row numbers, list cells as text);
    every row checked first, as a file's: InputError naming each bad row (from 1) and id,
    duplicate ids included."""
    cases: list[Case] = []
    problems: list[tuple[int | None, str | None, str]] = []
    first_row: dict[str, int] = {}
    for number, row in with_derived_ids(enumerate(frame_rows(frame), 1)):
        if len(problems) >= MAX_PROBLEMS:
            problems.append((None, None, f"stopped after {MAX_PROBLEMS} problems"))
            break
        assert isinstance(row, dict)
        case, problem = to_case(row, rubric)
        if case is None:
            case_id = str(row.get("id")) if row.get("id") not in (None, "") else None
            problems.append((None, case_id, f"row {number}: {problem or 'invalid case'}"))
        elif case.id in first_row:
            message = f"row {number}: duplicate id (first on row {first_row[case.id]})"
            problems.append((None, case.id, message))
        else:
            first_row[case.id] = number
            cases.append(case)
    if not problems and not cases:
        problems.append((None, None, "empty frame: no cases to grade"))
    if problems:
        raise InputError(name, problems)
    return cases


def iter_cases(path: Path) -> Iterator[Case]:
    """Cases of a file that `validate_file` accepted, streamed in order."""
    for _, row in iter_rows(path):
        if isinstance(row, dict):
            case, _ = to_case(row)
            if case is not None:
                yield case
