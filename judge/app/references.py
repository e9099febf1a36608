"""`--references REFS --join-on FIELD`: fields a case lacks, joined in from a file keyed by
one of its fields (on `judge grade`, `judge traces pull` and `judge watch`).

REFS is JSONL or CSV, one reference a row. A reference's key is the value at FIELD (a
dotted path: `goal`, `metadata.task_id`), or, when it has none there, at FIELD less its
leading parts (`task_id`; `app.task_id` for `metadata.app.task_id`): a file of expected
calls keyed `task_id` joins on `metadata.task_id`. A name holding dots (a span attribute
kept in `metadata` under its own name) is found whole. Keys
compare as text (`3` and `"3"` are one key). Every other field of a reference is a case
field (`expected_tool_calls`, `goal`, `reference`, `tools`, `contexts`, `metadata`, ...);
the case gets each one it lacks (absent or null; `metadata` key by key) and keeps its own
where it has one. The case's `metadata.reference_key` records the key it was joined by, and
each record keeps it as `reference_key`.

Bad input (exit 2, nothing graded): a reference without the key, two references with one
key, a field that is not a case field. A case with no key, or a key no reference has, is
graded as it is, counted and named (the first few ids) in one line.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from calibration.io.rows import is_csv
from calibration.io.rows import iter_rows as read_any_rows
from judge.app.edge import note
from judge.engine._inputs_csv import case_cells
from judge.engine.inputs import iter_rows
from judge.errors import InputError, UsageError
from judge.schemas import CASE_ALIASES, Case

__all__ = [
    "JoinCount",
    "References",
    "check_references_option",
    "join_case",
    "joined",
    "load_references",
]

KEY_FIELD = "reference_key"  # in the case's metadata, and in each record
NAMED = 5  # unmatched case ids named in the line
JOINABLE = (set(Case.model_fields) | set(CASE_ALIASES)) - {"id"}


@dataclass(frozen=True)
class References:
    """The references by key, and the path of the field they join on."""

    path: Path
    join_on: tuple[str, ...]
    by_key: Mapping[str, dict[str, Any]]


@dataclass
class JoinCount:
    """What a join did: cases joined, cases without a key, cases whose key no reference has
    (their ids, the first few), and the references used."""

    joined: int = 0
    no_key: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)

    def line(self, refs: References) -> str:
        on = ".".join(refs.join_on)
        text = (
            f"references: {self.joined} cases joined by {on} from {refs.path.name} "
            f"({len(self.used)} of {len(refs.by_key)} references used)"
        )
        for ids, what in ((self.unmatched, "a key no reference has"), (self.no_key, f"no {on}")):
            if ids:
                shown = ", ".join(ids[:NAMED]) + (", ..." if len(ids) > NAMED else "")
                text += f"; {len(ids)} with {what}: {shown}"
        return text


def check_references_option(references: Path | None, join_on: str | None) -> None:
    """Both or neither; the file exists. UsageError before anything is read or sent."""
    if (references is None) != (join_on is None):
        raise UsageError("--references REFS and --join-on FIELD go together: give both")
    if references is not None and not references.is_file():
        raise UsageError(f"--references {references}: no such file")
    if join_on is not None and not all(join_on.split(".")):
        raise UsageError(f"--join-on {join_on!r}: a field name or a dotted path (metadata.task_id)")


def key_text(value: Any) -> str | None:
    """A key as text: 3, 3.0 and "3" are one key; None for no value."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def value_at(row: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The value at a dotted path; a key that itself holds dots (a span attribute kept in
    `metadata` under its name, `metadata.session.id`) is found whole, longest first."""
    if not path:
        return row
    for cut in range(len(path), 0, -1):
        name = ".".join(path[:cut])
        if name in row:
            value = row[name]
            if cut == len(path):
                return value
            return value_at(value, path[cut:]) if isinstance(value, Mapping) else None
    return None


def load_references(path: Path, join_on: str) -> References:
    """The references of REFS by key; InputError naming each bad line (module docstring)."""
    on = tuple(join_on.split("."))
    by_key: dict[str, dict[str, Any]] = {}
    lines: dict[str, int] = {}
    problems: list[tuple[int | None, str | None, str]] = []
    csv_file = is_csv(path)
    for number, row in read_any_rows(path):
        if isinstance(row, str):
            problems.append((number, None, row))
            continue
        row = case_cells(row) if csv_file else row
        # the key at FIELD, else at FIELD less its leading parts (`metadata.task_id`: task_id)
        where = next((on[k:] for k in range(len(on)) if value_at(row, on[k:]) is not None), on)
        key = key_text(value_at(row, where))
        if key is None:
            problems.append((number, None, f"no {join_on} (nor {on[-1]}): no key to join on"))
            continue
        if key in by_key:
            problems.append(
                (number, key, f"{join_on} {key!r} is the key of line {lines[key]} too: which?")
            )
            continue
        fields = _fields_of(row, where)
        unknown = sorted(set(fields) - JOINABLE)
        if unknown:
            problems.append((number, key, f"not case fields: {', '.join(unknown)}"))
            continue
        by_key[key], lines[key] = fields, number
    if problems:
        raise InputError(str(path), problems[:20])
    return References(path, on, by_key)


def _fields_of(row: dict[str, Any], key_path: tuple[str, ...]) -> dict[str, Any]:
    """The reference's fields, its key left out (the whole field when the key is a top-level
    one; the one entry of `metadata` when it is nested there)."""
    whole = ".".join(key_path)
    if whole in row:  # a top-level key, dotted or not (`task_id`, `app.task_id`)
        return {k: v for k, v in row.items() if k != whole}
    fields = dict(row)
    top = fields.get(key_path[0])
    if isinstance(top, dict):
        rest = {k: v for k, v in top.items() if k != key_path[1]}
        fields[key_path[0]] = rest
        if not rest:
            del fields[key_path[0]]
    return fields


def join_row(row: dict[str, Any], refs: References, count: JoinCount) -> dict[str, Any]:
    """The case row with the fields it lacks from its reference (module docstring)."""
    key = key_text(value_at(row, refs.join_on))
    case_id = str(row.get("id"))
    if key is None:
        count.no_key.append(case_id)
        return row
    reference = refs.by_key.get(key)
    if reference is None:
        count.unmatched.append(case_id)
        return row
    out = dict(row)
    for name, value in reference.items():
        if name == "metadata" and isinstance(value, dict):
            out["metadata"] = {**value, **_metadata(out)}
        elif out.get(name) is None:
            out[name] = value
    out["metadata"] = {**_metadata(out), KEY_FIELD: key}
    count.joined += 1
    count.used.add(key)
    return out


def _metadata(row: dict[str, Any]) -> dict[str, Any]:
    value = row.get("metadata")
    return value if isinstance(value, dict) else {}


@contextmanager
def joined(path: Path, references: Path | None, join_on: str | None) -> Iterator[Path]:
    """The cases file with the references joined in (a temporary JSONL file, one line per
    row of `path`, so a line number names the same case), or `path` itself without
    references. Says what it joined in one line."""
    if references is None or join_on is None:
        yield path
        return
    refs = load_references(references, join_on)
    count = JoinCount()
    with tempfile.TemporaryDirectory(prefix="judge-joined-") as folder:
        out = Path(folder) / f"{path.stem}.jsonl"
        _write_joined(path, out, refs, count)
        note(f"judge: {count.line(refs)}")
        try:
            yield out
        except InputError as error:  # name the user's file, not the joined copy
            raise InputError(str(path), error.problems) from None


def _write_joined(path: Path, out: Path, refs: References, count: JoinCount) -> None:
    """Each row joined, on the line it had (blank lines fill the gaps: readers skip them),
    so validation's line numbers name the user's lines. An unreadable row is bad input."""
    problems: list[tuple[int | None, str | None, str]] = []
    written = 0
    with out.open("w", encoding="utf-8") as handle:
        for number, row in iter_rows(path):
            if isinstance(row, str):
                problems.append((number, None, row))
                continue
            handle.write("\n" * max(0, number - 1 - written))
            handle.write(json.dumps(join_row(row, refs, count), ensure_ascii=False, default=str))
            handle.write("\n")
            written = max(written + 1, number)
    if problems:
        raise InputError(str(path), problems[:20])


def join_case(case: Case, refs: References, count: JoinCount) -> Case:
    """A case (a pulled trace's, a watched one's) with what it lacks from its reference."""
    row = case.model_dump(mode="json", exclude_defaults=True)
    joined_row = join_row(row, refs, count)
    if joined_row is row:
        return case
    try:
        return Case.model_validate(joined_row)
    except ValueError as exc:  # a reference's value the case cannot hold
        raise InputError(
            str(refs.path), [(None, case.id, f"joined onto case {case.id}: {exc}")]
        ) from None
