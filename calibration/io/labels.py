"""Read judge and human label files (JSONL or CSV) and join them on ``id``.

Rows are read by :mod:`calibration.io.rows`, the one reader of JSONL and CSV (the same rules
as for answer sets); this module gives them their meaning as labels.

A file is a list of records with an ``id`` and a label field (``label`` by default, or
``score``). Graded records from this project work as they are: records whose ``status`` is
not ``ok`` are excluded and counted, never graded as a label. A human file may hold several
labels per id with an ``annotator`` column. Nothing is dropped silently: excluded records
and ids present on one side only are counted and listed.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from calibration.errors import CalibrationInputError
from calibration.io.rows import read_label_rows

__all__ = [
    "JoinedLabels",
    "LabelRecord",
    "LabelSet",
    "as_number",
    "join_labels",
    "labels_from_rows",
    "normalise_label",
    "read_labels",
]

ANNOTATOR_FIELD = "annotator"
# The fields of every row that has none beyond id and label: one shared empty dict, so a
# file of millions of id,label rows does not hold millions of them. Never mutated.
NO_FIELDS: dict[str, Any] = {}
ABSTAINED = "abstained"
# Fields every graded record of this project carries; a label file written by people has
# no reason to hold three of them.
GRADED_RECORD_FIELDS = frozenset({"rubric", "rubric_sha256", "status", "judge"})


@dataclass(frozen=True, slots=True)
class LabelRecord:
    """One usable label: its id, its value, the other fields of its row and where it was."""

    id: str
    value: Any
    fields: dict[str, Any]
    line: int


@dataclass
class LabelSet:
    """The usable labels of one file, and what was left out of it and why."""

    path: str
    field: str
    records: list[LabelRecord]
    excluded: dict[str, list[str]] = dataclass_field(default_factory=dict)
    has_annotators: bool = False
    graded_fields: frozenset[str] = frozenset()  # graded-record fields seen, when 3 or more
    # Ids whose several annotators' labels were settled by a rule (a tied majority...),
    # by the rule: kept, counted and listed, never dropped.
    adjudicated: dict[str, list[str]] = dataclass_field(default_factory=dict)

    def excluded_count(self) -> int:
        return sum(len(ids) for ids in self.excluded.values())

    def check_not_all_excluded(self) -> None:
        """A :class:`CalibrationInputError` saying why, when every record was left out
        (a run where no verdict parsed): never "no id in common" for a file of failures."""
        if self.records or not self.excluded:
            return
        why = ", ".join(f"{reason} {len(ids)}" for reason, ids in self.excluded.items())
        raise CalibrationInputError(
            f"no usable {self.field}: every one of its {self.excluded_count()} records was "
            f"left out ({why}); nothing to compare",
            path=self.path,
        )


@dataclass
class JoinedLabels:
    """Labels of the ids present on both sides, in the human file's order."""

    ids: list[str]
    human: list[Any]
    judge: list[Any]
    fields: list[dict[str, Any]]
    judge_only: list[str]
    human_only: list[str]
    judge_only_values: list[Any] = dataclass_field(default_factory=list)
    judge_only_fields: list[dict[str, Any]] = dataclass_field(default_factory=list)


def normalise_label(value: Any) -> str:
    """A label as text: ``True`` -> ``"true"``, ``4``, ``4.0`` and ``"4.0"`` -> ``"4"``.

    Remembered for the last values seen (a label file of millions of rows holds a handful
    of labels, each normalised once instead of once a row); a value that cannot
    be remembered (unhashable) is normalised, or refused, as it comes."""
    try:
        return _normalised(value)
    except TypeError:  # unhashable: the uncached form raises the message for it
        return _normalise(value)


@functools.lru_cache(maxsize=1 << 12, typed=True)  # typed: 1, 1.0 and True stay apart
def _normalised(value: Any) -> str:
    return _normalise(value)


def _normalise(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    number = as_number(value)
    if number is not None and number.is_integer():
        return str(int(number))
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int | str):
        return str(value).strip()
    raise TypeError(f"a label must be text, a number or a boolean, got {type(value).__name__}")


def as_number(value: Any) -> float | None:
    """The value as a finite float, or ``None`` when it is not a number."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def read_labels(path: str | Path, *, field: str = "label") -> LabelSet:
    """Read one label file; raise :class:`CalibrationInputError` naming file and line.

    Errors: unreadable file, a line that is not JSON, a missing ``id``, a row without
    ``field``, a duplicate id (or id and annotator), a label that is a list or an object.
    Excluded and counted: records whose ``status`` is not ``ok`` and records whose label is
    empty or null. A record whose ``status`` is ``abstained`` counts as the label
    ``abstained`` (for the ``label`` field), so abstentions are compared, not dropped.
    """
    return _collect(Path(path), read_label_rows(path), field)


def labels_from_rows(
    rows: Iterable[Mapping[str, Any]], *, field: str = "label", source: str = "rows"
) -> LabelSet:
    """:func:`read_labels` for rows already in memory (graded records, a service job's
    human labels); errors name ``source`` and the row's 1-based position."""
    numbered = ((i, dict(row)) for i, row in enumerate(rows, start=1))
    return _collect(Path(source), numbered, field)


def _collect(file: Path, rows: Iterable[tuple[int, dict[str, Any]]], field: str) -> LabelSet:
    result = LabelSet(path=str(file), field=field, records=[])
    seen: set[tuple[str, str]] = set()
    for line, row in rows:
        graded = GRADED_RECORD_FIELDS.intersection(row)
        if len(graded) >= 3 and not result.graded_fields:
            result.graded_fields = graded
        record = _record(file, line, row, field, result)
        if record is None:
            continue
        key = (record.id, str(record.fields.get(ANNOTATOR_FIELD) or ""))
        if key in seen:
            raise CalibrationInputError(f"duplicate id {record.id!r}", path=file, line=line)
        seen.add(key)
        result.records.append(record)
    result.has_annotators = any(
        not _is_blank(r.fields.get(ANNOTATOR_FIELD)) for r in result.records
    )
    return result


def _record(
    file: Path, line: int, row: dict[str, Any], field: str, result: LabelSet
) -> LabelRecord | None:
    if _is_blank(row.get("id")):
        raise CalibrationInputError("missing id", path=file, line=line)
    case_id = str(row["id"]).strip()
    status = row.get("status")
    if str(status).strip() == ABSTAINED and field == "label" and _is_blank(row.get(field)):
        # Abstaining is an outcome of its own that humans label too, never a pass or a fail.
        row = {**row, field: ABSTAINED}
    elif not _is_blank(status) and str(status).strip() != "ok":
        result.excluded.setdefault(f"status {status}", []).append(case_id)
        return None
    if field not in row:
        raise CalibrationInputError(
            f"no field {field!r} (fields: {', '.join(map(str, row))})", path=file, line=line
        )
    value = row[field]
    if _is_blank(value):
        result.excluded.setdefault(f"no {field}", []).append(case_id)
        return None
    if isinstance(value, list | dict):
        raise CalibrationInputError(
            f"{field} must be a single value, got {value!r}", path=file, line=line
        )
    fields = {k: v for k, v in row.items() if k not in {"id", field}} or NO_FIELDS
    if isinstance(value, str):
        value = sys.intern(value)  # a few distinct labels over millions of rows: one copy each
    return LabelRecord(id=case_id, value=value, fields=fields, line=line)


ROW_NUMBER_ID = re.compile(r"row-[1-9][0-9]*")


def row_number_hint(judge: LabelSet, human: LabelSet) -> str:
    """What to say after "no id in common" when one side's ids are all row numbers (`row-1`,
    ...) and the other's are not: the ids a CSV in Ragas' columns with no id column gets (a
    Ragas result CSV, or cases graded from one), which people never label by; "" else."""
    sides = [(name, [r.id for r in s.records]) for name, s in (("judge", judge), ("human", human))]
    numbered = [(name, ids) for name, ids in sides if ids and _all_row_numbers(ids)]
    if len(numbered) != 1:
        return ""
    name, ids = numbered[0]
    rows = sorted(int(i.removeprefix("row-")) for i in ids)
    return (
        f": the {name} ids are row numbers (row-{rows[0]} to row-{rows[-1]}), the ids a CSV "
        "in Ragas' columns gets when it has no id column, as a Ragas result CSV never has; add "
        "one to that CSV, your dataset's ids in the order it was evaluated (pandas: "
        "df.insert(0, 'id', ids) before df.to_csv), or label the other file by row number"
    )


def _all_row_numbers(ids: list[str]) -> bool:
    return all(ROW_NUMBER_ID.fullmatch(i) for i in ids)


def join_labels(judge: LabelSet, human: LabelSet) -> JoinedLabels:
    """Pair judge and human labels by id; list the ids found on one side only.

    Both sides must have one label per id (consolidate several annotators first). Fields
    other than the labels are merged, the human file's value winning on a clash.
    """
    for side in (judge, human):
        if side.has_annotators:
            raise CalibrationInputError("several labels per id: consolidate first", path=side.path)
    by_id = {r.id: r for r in judge.records}
    human_ids = {r.id for r in human.records}
    joined = JoinedLabels([], [], [], [], judge_only=[], human_only=[])
    for record in human.records:
        match = by_id.get(record.id)
        if match is None:
            joined.human_only.append(record.id)
            continue
        joined.ids.append(record.id)
        joined.human.append(record.value)
        joined.judge.append(match.value)
        both = {**match.fields, **record.fields} if match.fields or record.fields else NO_FIELDS
        joined.fields.append(both)
    # An id excluded on the other side (not ok, no label) is counted there,
    # not again as unmatched.
    human_ids |= {i for ids in human.excluded.values() for i in ids}
    judge_excluded = {i for ids in judge.excluded.values() for i in ids}
    joined.human_only = [i for i in joined.human_only if i not in judge_excluded]
    unlabelled = [r for r in judge.records if r.id not in human_ids]
    joined.judge_only = [r.id for r in unlabelled]
    joined.judge_only_values = [r.value for r in unlabelled]
    joined.judge_only_fields = [r.fields for r in unlabelled]
    return joined
