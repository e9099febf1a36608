"""Reading answer sets: JSONL or CSV, validated in full before anything is graded.

Validation streams the file once and keeps only the ids (for uniqueness); grading streams it
again. Every problem names the file and line; nothing is graded from a file that fails.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from judge.engine._inputs_csv import csv_header, iter_csv
from judge.errors import InputError
from judge.rubric import Rubric
from judge.schemas import CASE_ALIASES, Case

MAX_PROBLEMS = 20
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64  # a case is a few levels deep; deeper JSON only serves to exhaust a parser
# Ragas' column names: a file that uses them may have no `id` (ids then come from row numbers)
RAGAS_COLUMNS = frozenset({"user_input", "retrieved_contexts", "response"})
NOT_JSONL = (
    "expected JSONL, one object per line; this looks like one JSON document over several "
    "lines (an array or a pretty-printed object). Write one case per line, e.g. "
    "jq -c '.[]' FILE.json > FILE.jsonl"
)


@dataclass
class Validated:
    """What validation learnt about a file: how many cases, and that they are fine."""

    path: Path
    count: int


def is_csv(path: Path) -> bool:
    return path.suffix.lower() in (".csv", ".tsv")


def iter_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line, row) for each non-blank entry; row is a problem message when unreadable.

    A file in Ragas' column names with no `id` gets ids from row numbers (`row-1`, ...),
    decided on its first row so that every pass over the file agrees."""
    derive: bool | None = None
    for index, (number, row) in enumerate(_raw_rows(path), 1):
        if isinstance(row, dict):
            if derive is None:
                derive = _derives_ids(row)
            if derive and _lacks_id(row):
                row = {"id": f"row-{index}", **{k: v for k, v in row.items() if k != "id"}}
            if _depth_over(row, MAX_DEPTH):
                row = f"nested more than {MAX_DEPTH} levels deep"
        yield number, row


def _lacks_id(row: dict[str, Any]) -> bool:
    return row.get("id") in (None, "")


def derived_ids_note(path: Path) -> str | None:
    """One line to print when the file's ids come from row numbers, else None."""
    try:
        first = next((row for _, row in _raw_rows(path) if isinstance(row, dict)), None)
    except OSError:
        return None  # validation says what is wrong with the file
    if first is not None and _derives_ids(first):
        return "no id column in Ragas' names: ids are the row numbers (row-1, row-2, ...)"
    return None


def _derives_ids(first_row: dict[str, Any]) -> bool:
    return _lacks_id(first_row) and bool(RAGAS_COLUMNS & first_row.keys())


def _raw_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    return _iter_csv(path) if is_csv(path) else _iter_jsonl(path)


def _depth_over(data: Any, limit: int) -> bool:
    """Whether containers nest more than `limit` deep (iterative: no recursion to exhaust)."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = (
            node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        )
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _decoded_lines(path: Path) -> Iterator[tuple[int, str | None, str]]:
    """(line number, text or None, problem) for each line of the file, byte-exact."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if len(raw) > MAX_LINE_BYTES:
                yield (
                    number,
                    None,
                    f"line is {len(raw)} bytes, over the {MAX_LINE_BYTES}-byte limit",
                )
                continue
            try:
                yield number, raw.decode("utf-8"), ""
            except UnicodeDecodeError as exc:
                yield (
                    number,
                    None,
                    f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
                )


def _iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    first = True
    for number, text, problem in _decoded_lines(path):
        if text is None:
            yield number, problem
            continue
        if not text.strip():
            continue
        if number == 1:
            text = text.lstrip("\ufeff")
        was_first, first = first, False
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if was_first and (text.strip() == "{" or text.lstrip().startswith("[")):
                yield number, NOT_JSONL  # one message, not one per line of the document
                return
            yield number, f"not valid JSON: {exc.msg} (column {exc.colno})"
            continue
        except RecursionError:
            yield number, f"nested more than {MAX_DEPTH} levels deep"
            continue
        if isinstance(data, dict):
            yield number, data
        elif isinstance(data, list):
            yield number, "expected a JSON object, got list (JSONL has one case object per line)"
        else:
            yield number, f"expected a JSON object, got {type(data).__name__}"


def _iter_csv(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    return iter_csv(path, _decoded_lines(path))


def to_case(row: dict[str, Any], rubric: Rubric | None = None) -> tuple[Case | None, str | None]:
    """A case, or the reason the row is not one (naming the fields)."""
    try:
        case = Case.model_validate(row)
    except ValidationError as exc:
        parts = []
        for err in exc.errors()[:4]:
            where = ".".join(str(p) for p in err["loc"]) or "case"
            msg = "unknown field" if err["type"] == "extra_forbidden" else err["msg"].lower()
            parts.append(f"{where}: {msg}")
        return None, "; ".join(parts)
    if rubric is not None:
        missing = rubric.missing_inputs(case)
        if missing:
            return None, f"missing {', '.join(missing)} (needed by rubric {rubric.ref})"
    return case, None


def validate_file(path: Path, rubric: Rubric, *, max_problems: int = MAX_PROBLEMS) -> Validated:
    """Check every line: syntax, fields the rubric needs, types, unique ids. Raise InputError
    listing the problems (up to `max_problems`) if any; nothing is graded from a bad file.

    Ids are checked for uniqueness through 8-byte hashes (8 bytes a case, so memory stays
    flat); only when two hashes collide is the file read again to name the lines."""
    if not path.exists():
        raise InputError(str(path), [(None, None, "no such file")])
    if path.is_dir():
        raise InputError(str(path), [(None, None, "is a folder, not a file")])
    try:
        path.open("rb").close()
    except OSError as exc:
        raise InputError(str(path), [(None, None, f"cannot be read ({exc.strerror})")]) from None
    problems: list[tuple[int | None, str | None, str]] = []
    hashes = array("Q")
    if is_csv(path):
        problems.extend(_check_csv_header(path, rubric))
    for number, row in iter_rows(path):
        if len(problems) >= max_problems:
            problems.append((None, None, f"stopped after {max_problems} problems"))
            break
        if isinstance(row, str):
            problems.append((number, None, row))
            continue
        case, problem = to_case(row, rubric)
        if case is None:
            case_id = str(row.get("id")) if row.get("id") not in (None, "") else None
            problems.append((number, case_id, problem or "invalid case"))
            continue
        hashes.append(_id_hash(case.id))
    if len(problems) < max_problems:
        problems.extend(_duplicates(path, hashes, max_problems - len(problems)))
    if not problems and not hashes:
        problems.append((None, None, "empty file: no cases to grade"))
    if problems:
        raise InputError(str(path), problems)
    return Validated(path=path, count=len(hashes))


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


def _check_csv_header(path: Path, rubric: Rubric) -> list[tuple[int | None, str | None, str]]:
    columns = set(csv_header(path))
    header = {CASE_ALIASES.get(h, h) for h in columns}
    if not header:
        return []
    derived = "id" not in columns and RAGAS_COLUMNS & columns  # ids from row numbers
    needed = [*([] if derived else ["id"]), *rubric.behaviour.required_inputs(rubric)]
    missing = [name for name in needed if name not in header]
    if missing:
        return [
            (1, None, f"CSV has no column {', '.join(missing)} (needed by rubric {rubric.ref})")
        ]
    return []


def iter_cases(path: Path) -> Iterator[Case]:
    """Cases of a file that `validate_file` accepted, streamed in order."""
    for _, row in iter_rows(path):
        if isinstance(row, dict):
            case, _ = to_case(row)
            if case is not None:
                yield case
