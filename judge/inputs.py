"""Reading answer sets: JSONL or CSV, validated in full before anything is graded.

Validation streams the file once and keeps only the ids (for uniqueness); grading streams it
again. Every problem names the file and line; nothing is graded from a file that fails.
"""

from __future__ import annotations

import csv
import hashlib
import json
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from judge.errors import InputError
from judge.rubric import Rubric
from judge.schemas import CASE_ALIASES, Case

MAX_PROBLEMS = 20
MAX_LINE_BYTES = 8 * 1024 * 1024
_LIST_FIELDS = ("contexts", "slices")


@dataclass
class Validated:
    """What validation learnt about a file: how many cases, and that they are fine."""

    path: Path
    count: int


def is_csv(path: Path) -> bool:
    return path.suffix.lower() in (".csv", ".tsv")


def iter_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line, row) for each non-blank entry; row is a problem message when unreadable."""
    if is_csv(path):
        yield from _iter_csv(path)
    else:
        yield from _iter_jsonl(path)


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
    for number, text, problem in _decoded_lines(path):
        if text is None:
            yield number, problem
            continue
        if not text.strip():
            continue
        if number == 1:
            text = text.lstrip("\ufeff")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            yield number, f"not valid JSON: {exc.msg} (column {exc.colno})"
            continue
        yield (
            number,
            data
            if isinstance(data, dict)
            else f"expected a JSON object, got {type(data).__name__}",
        )


def _iter_csv(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    problems: list[tuple[int, str]] = []
    last = [0]

    def lines() -> Iterator[str]:
        for number, text, problem in _decoded_lines(path):
            last[0] = number
            if text is None:
                problems.append((number, problem))
                yield "\n"
            else:
                yield text.lstrip("\ufeff") if number == 1 else text

    reader = csv.reader(lines(), delimiter=_delimiter(path))
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        yield last[0], f"unreadable CSV header ({exc})"
        return
    while True:
        start = last[0] + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            yield last[0], f"unreadable CSV ({exc})"
            break
        while problems:
            yield problems.pop(0)
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            yield start, f"has {len(row)} fields, the header has {len(header)}"
            continue
        yield start, _csv_row(dict(zip(header, row, strict=True)))
    while problems:
        yield problems.pop(0)


def _delimiter(path: Path) -> str:
    return "\t" if path.suffix.lower() == ".tsv" else ","


def csv_header(path: Path) -> list[str]:
    with path.open("r", encoding="utf-8", errors="replace", newline="") as handle:
        header = next(csv.reader(handle, delimiter=_delimiter(path)), [])
    return [h.lstrip("\ufeff") for h in header]


def _csv_row(row: dict[str, str]) -> dict[str, Any]:
    """CSV cells are text: list fields may hold a JSON array (or one plain text / a|b|c)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = CASE_ALIASES.get(key, key)
        if name in _LIST_FIELDS:
            out[key] = _cell_list(value, split=name == "slices")
        elif name == "metadata":
            out[key] = _cell_object(value)
        elif value == "" and name not in ("id",):
            continue
        else:
            out[key] = value
    return out


def _cell_object(value: str) -> Any:
    if not value.strip():
        return {}
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value  # validation then says metadata must be an object


def _cell_list(value: str, *, split: bool) -> list[str]:
    text = value.strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            parsed = json.loads(text)
            if isinstance(parsed, list):
                return [str(v) for v in parsed]
        except json.JSONDecodeError:
            pass
    if split:
        return [part.strip() for part in text.replace(";", "|").split("|") if part.strip()]
    return [value]


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
    header = {CASE_ALIASES.get(h, h) for h in csv_header(path)}
    if not header:
        return []
    needed = ["id", *rubric.inputs]
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
