"""The files of ``judge drift``: graded records (one file or several, read in order), the
people's labels, each pair's time, and a reference calibration.

Refused (:class:`CalibrationInputError`, exit 2, naming file and line): a file that cannot
be read, human labels that are graded records,
continuous scores (drift compares labels), a pair without a readable time when windows
are by time, a reference file without a confusion table.

Time of a pair, for windows by day, week or month, from its graded record (or, failing
that, its human label row): ``--time-field F`` when given (a dotted path such as
``metadata.trace_time``); else the case's own time (``case_time``: the case's ``time``, a
pulled trace's start), else the record's grading time (``graded_at``), else a trace time
another tool wrote (``trace_time``, ``metadata.trace_time``, ``start_time``): the first of
these that every pair carries (else the first that any carries, whose gaps are then an
error). The output states which one was used.

Repeats are dropped before windowing, the first kept, and counted: a record whose id came
before (in any of the records files), and a record whose ``inputs_sha256`` (the hash of
what was graded) came before under another id. The alarm's null takes the pairs as
independent; a case graded and labelled twice in a row is the same evidence twice, and
left in, it made false alarms three times as common (each case twice in a row: 0.14 of
streams at alpha = 0.05). Where pairs are related by design (a conversation's turns),
``--group-field F`` names each pair's group (a dotted path in the record or its label
row; a pair without one is a group of its own) and the null resamples whole groups.
``--slice-field F`` names each pair's slice the same way (a pair without one is in the
slice ``(none)``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from calibration.agreement.annotators import consolidate_annotators
from calibration.drift.stream import ReferenceTable
from calibration.drift.windows import parse_time
from calibration.errors import CalibrationInputError
from calibration.io.labels import LabelRecord, LabelSet, _collect, normalise_label, read_labels
from calibration.io.rows import read_label_rows
from calibration.io.vocabulary import check_human_file, unify_labels
from calibration.pairs.analysis import scale_of

__all__ = ["DriftInputs", "read_drift_inputs", "read_reference", "TIME_FIELDS"]

# The fields a time is looked for in, in order, and what each is.
TIME_FIELDS = (
    ("case_time", "case time"),
    ("graded_at", "record grading time"),
    ("trace_time", "case trace time"),
    ("metadata.trace_time", "case trace time"),
    ("start_time", "case trace time"),
)


@dataclass(frozen=True)
class DriftInputs:
    """The labelled pairs in records order, with their times when asked for."""

    ids: list[str]
    human: list[str]
    judge: list[str]
    times: list[datetime] | None
    time_source: str | None
    files: dict[str, Any]
    unlabelled: int  # graded records no person labelled
    repeats: dict[str, int] = field(default_factory=dict)  # dropped: "ids", "inputs"
    groups: list[str] | None = None  # each pair's group (--group-field)
    slices: list[str] | None = None  # each pair's slice (--slice-field)


def read_drift_inputs(
    records: Sequence[str | Path],
    labels: str | Path | LabelSet,
    *,
    by_time: bool = False,
    time_field: str | None = None,
    group_field: str | None = None,
    slice_field: str | None = None,
) -> DriftInputs:
    """Read, check and join the files (see the module docstring)."""
    judged, repeats = _read_records(records)
    human = labels if isinstance(labels, LabelSet) else read_labels(labels)
    human = consolidate_annotators(human)
    check_human_file(human, str(records[0]))
    by_id = {r.id: r for r in human.records}
    pairs = [(r, by_id[r.id]) for r in judged if r.id in by_id]
    if not pairs:
        raise CalibrationInputError(
            f"no id in common with the {len(judged)} graded records", path=human.path
        )
    h_raw, j_raw = [p[1].value for p in pairs], [p[0].value for p in pairs]
    if scale_of(h_raw, j_raw) == "continuous":
        raise CalibrationInputError(
            "continuous scores: judge drift compares labels", path=human.path
        )
    h, j, _, _ = unify_labels(h_raw, j_raw, [], judge_path=str(records[0]), human_path=human.path)
    times, source = _times(pairs, time_field) if by_time else (None, None)
    return DriftInputs(
        ids=[p[0].id for p in pairs],
        human=h,
        judge=j,
        times=times,
        time_source=source,
        files={"records": [str(p) for p in records], "labels": human.path},
        unlabelled=len(judged) - len(pairs),
        repeats=repeats,
        groups=_values(pairs, group_field, None) if group_field else None,
        slices=_values(pairs, slice_field, "(none)") if slice_field else None,
    )


def _values(pairs, name: str, missing: str | None) -> list[str]:
    """Each pair's value of the field ``name`` (record first, then label row) as text;
    ``missing`` where it has none (``None``: the pair's own id, a group of one)."""
    out = []
    for record, label in pairs:
        value = _lookup(record.fields, name)
        value = _lookup(label.fields, name) if value is None else value
        if value is None:
            value = f"\x00{record.id}" if missing is None else missing
        out.append(value if isinstance(value, str) else json.dumps(value, sort_keys=True))
    return out


def _read_records(paths: Sequence[str | Path]) -> tuple[list[LabelRecord], dict[str, int]]:
    """Every usable record of the files, in order, repeats dropped (module docstring), and
    how many of each kind were dropped."""
    seen: dict[str, set[str]] = {"ids": set(), "inputs": set()}
    repeats = {"ids": 0, "inputs": 0}
    out: list[LabelRecord] = []
    for path in paths:
        # the file's numbered rows, repeats left out, so errors still name its own lines
        kept = _first_of_each(read_label_rows(path), seen, repeats)
        for record in _collect(Path(path), kept, "label").records:
            out.append(
                record.__class__(
                    record.id, record.value, {**record.fields, "_file": str(path)}, record.line
                )
            )
    return out, repeats


def _first_of_each(rows, seen: dict[str, set[str]], repeats: dict[str, int]):
    """The rows whose id, and whose ``inputs_sha256``, no row before had; the others
    counted in ``repeats``."""
    for line, row in rows:
        key = str(row.get("id")) if isinstance(row, dict) and row.get("id") is not None else None
        digest = row.get("inputs_sha256") if isinstance(row, dict) else None
        if key is not None and key in seen["ids"]:
            repeats["ids"] += 1
            continue
        if isinstance(digest, str) and digest in seen["inputs"]:
            repeats["inputs"] += 1
            continue
        if key is not None:
            seen["ids"].add(key)
        if isinstance(digest, str):
            seen["inputs"].add(digest)
        yield line, row


def _lookup(fields: dict[str, Any], dotted: str) -> Any:
    value: Any = fields
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _times(pairs, time_field: str | None) -> tuple[list[datetime], str]:
    """Each pair's time, from one field for all of them, and what that field is."""
    candidates = [(time_field, f"field {time_field}")] if time_field else list(TIME_FIELDS)
    carried = {name: _has(pairs, name) for name, _ in candidates}
    everywhere = [c for c in candidates if all(carried[c[0]])]
    somewhere = [c for c in candidates if any(carried[c[0]])]
    for name, what in (everywhere or somewhere)[:1]:
        assert name is not None
        times = []
        for record, label in pairs:
            raw = _lookup(record.fields, name)
            raw = _lookup(label.fields, name) if raw is None else raw
            moment = parse_time(raw)
            if moment is None:
                raise CalibrationInputError(
                    f"id {record.id!r}: no readable time in {name} ({raw!r})",
                    path=record.fields.get("_file"),
                    line=record.line,
                )
            times.append(moment)
        return times, f"{what} ({name})" if time_field is None else f"field {name}"
    looked = ", ".join(n for n, _ in candidates if n)
    raise CalibrationInputError(
        f"windows by time need a time on each record; none of {looked} was found: use "
        "--window N (file order) or --time-field FIELD",
        path=pairs[0][0].fields.get("_file"),
    )


def _has(pairs, name: str | None) -> list[bool]:
    """Whether each pair's record (or label row) carries `name`."""
    assert name is not None
    return [
        _lookup(r.fields, name) is not None or _lookup(h.fields, name) is not None for r, h in pairs
    ]


def read_reference(path: str | Path) -> ReferenceTable:
    """The confusion table of a calibration (``calibration.json`` of ``judge calibrate -o
    DIR``, or that folder), or of a drift report's reference."""
    file = Path(path)
    if file.is_dir():
        file = file / "calibration.json"
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CalibrationInputError(f"cannot read the reference: {exc}", path=file) from None
    table = data.get("confusion_matrix") if isinstance(data, dict) else None
    if not isinstance(table, dict) or "labels" not in table or "matrix" not in table:
        raise CalibrationInputError(
            "no confusion_matrix {labels, matrix}: give the calibration.json of "
            "`judge calibrate -o DIR`",
            path=file,
        )
    labels = tuple(normalise_label(v) for v in table["labels"])
    matrix = tuple(tuple(int(c) for c in row) for row in table["matrix"])
    return ReferenceTable(labels, matrix, str(file))
