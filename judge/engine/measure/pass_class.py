"""Which label counts as a pass, for every command that prints a pass rate (calibrate,
drift, compare, grade --human-labels, the viewer, the HTML reports): one answer, said.

In order: `--positive-label L`; else the rubric the records name (`rubric`,
`rubric_version`): its kind's pass label (`Kind.pass_label`: the label scored 1.0,
`faithful`, `match`, `completed`, `pass`...); else, for records of a rubric this
installation does not hold (a team's own folder), the label their scores put on top (each
record keeps the score its rubric gave its label); else, for a file without a rubric
(another tool's, a plain `id,label` file), calibration's documented rule for two classes
(`calibration.io.classes.choose_positive`: the larger number, else the one label that reads
as a pass, else the last in alphabetical order), which the output then names (FILE_RULE).
Never a word list for a rubric's records.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.errors import JudgeError

__all__ = ["FILE_RULE", "PassClass", "among", "pass_class_of", "pass_class_of_rows", "said"]

FILE_RULE = "no rubric in the file: the rule for two classes; --positive-label L chooses"


@dataclass(frozen=True)
class PassClass:
    """The pass label (None: the file rule picks it, from the labels) and where it came
    from, in words for the output."""

    label: str | None
    source: str
    seen: frozenset[str] = frozenset()  # the labels of the records read (scored ones)


def pass_class_of(path: Path | None, explicit: str | None = None) -> PassClass:
    """The pass class of a records (or labels) file, read as the module docstring says."""
    if explicit is not None:
        return PassClass(explicit, "--positive-label")
    return pass_class_of_rows(_rows(path) if path is not None else ())


def pass_class_of_rows(rows: Iterable[Mapping[str, Any]]) -> PassClass:
    """The pass class of graded records given as dicts (the same rule, no file)."""
    named: tuple[str, int] | None = None
    tops: dict[str, float] = {}
    for row in rows:
        if named is None and isinstance(row.get("rubric"), str):
            with contextlib.suppress(TypeError, ValueError):
                named = (row["rubric"], int(row.get("rubric_version") or 0))
        label, score = row.get("label"), row.get("score")
        if isinstance(label, str) and isinstance(score, int | float) and label != "abstained":
            tops[label] = max(tops.get(label, float("-inf")), float(score))
    if named is None:
        return PassClass(None, FILE_RULE)
    rubric_id, version = named
    ref = f"{rubric_id}@{version}" if version else rubric_id
    label = _rubric_pass_label(ref)
    if label is not None:
        return PassClass(label, f"rubric {ref}: the label it scores 1.0", frozenset(tops))
    if len(tops) == 2 and len(set(tops.values())) == 2:
        top = max(tops, key=tops.__getitem__)
        source = f"rubric {ref} (not installed here): its records' higher score"
        return PassClass(top, source, frozenset(tops))
    return PassClass(None, FILE_RULE)


def said(label: str | None, source: str) -> str:
    """`pass = 'match' (rubric trajectory@1: the label it scores 1.0)`: the line every
    command prints beside its pass rates."""
    return f"pass = {label!r} ({source})" if label is not None else f"pass: none ({source})"


def _rubric_pass_label(ref: str) -> str | None:
    """The built-in rubric's pass label; None when this installation has no such rubric."""
    from judge.rubric import load_rubric

    try:
        rubric = load_rubric(ref)
    except (JudgeError, OSError, ValueError):
        return None
    return rubric.behaviour.pass_label(rubric)


def _rows(path: Path) -> Iterable[dict[str, Any]]:
    """The graded records of a JSONL records file (nothing for CSV or another tool's file)."""
    if path.suffix.lower() in (".csv", ".tsv") or not path.is_file():
        return ()
    from judge.engine.records import scan_records

    return (data for _, data in scan_records(path))


def among(found: PassClass, labels: Iterable[str]) -> PassClass:
    """`found`, unless its label is none of `labels` (both sides' labels, as calibration
    spells them): a rubric's pass label the data never uses (two other classes of a
    three-label rubric) leaves the choice to the file rule, which the output then names."""
    if found.label is None or found.source == "--positive-label":
        return found
    from calibration.io.labels import normalise_label

    if normalise_label(found.label).lower() in {normalise_label(v).lower() for v in labels}:
        return found
    return PassClass(None, f"{found.source}, {found.label!r}, is not among the labels; {FILE_RULE}")
