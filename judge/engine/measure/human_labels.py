"""Human labels of some graded cases: read and checked before the first request.

`judge grade --human-labels FILE`, `Judge.grade_file(..., human_labels=...)` and a service
job's `human_labels` give the same thing: rows with `id` and `label` (and `score`,
`annotator`, `inclusion_probability` when they have them), for some of the cases graded.
This module reads them (CSV or JSONL, as `judge label export` writes them, or rows in
memory) and checks them against the rubric and the input, every problem listed at once,
before anything is sent. What the summary makes of them is in
`judge.engine.measure.estimates`.

An `inclusion_probability` column (the chance each case had of being chosen for
labelling, which `judge label export` writes) turns on reweighting: each labelled case
stands for 1 / inclusion_probability cases (calibration.estimates.ppi.ppi_mean_sampled).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from calibration.errors import CalibrationInputError
from calibration.io.jsontext import JsonLimitError, loads_bounded
from calibration.io.labels import GRADED_RECORD_FIELDS, as_number, normalise_label
from calibration.io.rows import read_label_rows, unescape_cell
from calibration.io.vocabulary import label_key
from judge.errors import InputError
from judge.rubric import Rubric

__all__ = [
    "HumanLabel",
    "HumanLabels",
    "check_human_labels",
    "human_labels_from_rows",
    "human_labels_from_text",
    "read_human_labels",
    "to_human_labels",
]

INCLUSION = "inclusion_probability"
ANNOTATOR = "annotator"
MAX_PROBLEMS = 20
Problem = tuple[int | None, str | None, str]


@dataclass(frozen=True)
class HumanLabel:
    """One human label: the case id, the label, its score when the row gives one, who gave
    it, the case's inclusion probability when the file has the column, and its line."""

    id: str
    label: str
    line: int
    score: float | None = None
    annotator: str | None = None
    inclusion_probability: float | None = None

    def row(self) -> dict[str, Any]:
        """The label as a row for calibration (id, label, and score/annotator if any)."""
        out: dict[str, Any] = {"id": self.id, "label": self.label}
        if self.score is not None:
            out["score"] = self.score
        if self.annotator:
            out[ANNOTATOR] = self.annotator
        return out


@dataclass(frozen=True)
class HumanLabels:
    """The human labels of one file (or request), checked to be a label file."""

    source: str
    labels: tuple[HumanLabel, ...]
    positive_label: str | None = None  # `--positive-label`: else the rubric's pass label

    @property
    def ids(self) -> set[str]:
        return {label.id for label in self.labels}

    def rows(self) -> list[dict[str, Any]]:
        return [label.row() for label in self.labels]

    def weights(self) -> dict[str, float] | None:
        """id -> 1 / inclusion probability, or None when the labels carry no probability
        (a simple random sample)."""
        if all(label.inclusion_probability is None for label in self.labels):
            return None
        return {
            label.id: 1.0 / label.inclusion_probability
            for label in self.labels
            if label.inclusion_probability is not None
        }

    def check(self, rubric: Rubric, case_ids: Iterable[str]) -> int:
        """:func:`check_human_labels` (grade_file calls it before the first request)."""
        return check_human_labels(self, rubric, case_ids)

    def as_jsonl(self) -> str:
        """The labels as JSONL (what a service job stores), inclusion probability kept."""
        lines = []
        for label in self.labels:
            row = label.row()
            if label.inclusion_probability is not None:
                row[INCLUSION] = label.inclusion_probability
            lines.append(json.dumps(row, ensure_ascii=False) + "\n")
        return "".join(lines)


def read_human_labels(path: str | Path) -> HumanLabels:
    """Read a human-label file (CSV or JSONL); InputError listing every problem."""
    source = str(path)
    try:
        numbered = list(read_label_rows(path))
    except CalibrationInputError as exc:
        raise InputError(source, [(exc.line, None, exc.reason)]) from None
    return _parse(numbered, source)


def human_labels_from_rows(rows: Iterable[Mapping[str, Any]], *, source: str) -> HumanLabels:
    """Human labels from rows in memory (a request's list); lines are 1-based positions."""
    return _parse([(i, dict(row)) for i, row in enumerate(rows, start=1)], source)


def human_labels_from_text(text: str, *, source: str) -> HumanLabels:
    """Human labels from a file's text (CSV with a header, or JSONL), as uploaded."""
    head = text.lstrip()
    if head.startswith("{"):
        return _parse(list(_jsonl(text, source)), source)
    reader = csv.DictReader(io.StringIO(text))
    rows = [(reader.line_num, _unescaped(row)) for row in reader]
    return _parse(rows, source)


def _unescaped(row: Mapping[str, Any]) -> dict[str, Any]:
    """A CSV row with `judge label export`'s spreadsheet escapes undone."""
    return {k: unescape_cell(v) if isinstance(v, str) else v for k, v in row.items()}


def to_human_labels(value: HumanLabels | str | Path | Iterable[Mapping[str, Any]]) -> HumanLabels:
    """What the Python API accepts: checked labels, a file path, or rows."""
    if isinstance(value, HumanLabels):
        return value
    if isinstance(value, str | Path):
        return read_human_labels(value)
    return human_labels_from_rows(value, source="human_labels")


def _jsonl(text: str, source: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = loads_bounded(line)
        except JsonLimitError as exc:
            raise InputError(source, [(number, None, f"JSON {exc}")]) from None
        except json.JSONDecodeError as exc:
            raise InputError(source, [(number, None, f"not valid JSON ({exc.msg})")]) from None
        if not isinstance(row, dict):
            raise InputError(source, [(number, None, "expected a JSON object")])
        yield number, row


def _parse(numbered: list[tuple[int, dict[str, Any]]], source: str) -> HumanLabels:
    """Check every row is a human label; InputError listing each problem (up to 20)."""
    problems: list[Problem] = []
    labels: list[HumanLabel] = []
    seen: dict[tuple[str, str], int] = {}
    for line, row in numbered:
        label, problem = _label(line, row)
        if problem is not None:
            problems.append(problem)
            continue
        if label is None:
            continue  # a blank label: not given (a skip), as calibration counts it
        key = (label.id, label.annotator or "")
        if key in seen:
            problems.append((line, label.id, f"duplicate id (first on line {seen[key]})"))
            continue
        seen[key] = line
        labels.append(label)
    if not numbered:
        problems.append((None, None, "no labels: the file is empty"))
    elif not labels and not problems:
        problems.append((None, None, "no labels: every row's label is blank"))
    problems.extend(_inclusion_problems(labels))
    if problems:
        raise InputError(source, _capped(problems))
    return HumanLabels(source, tuple(labels))


def _label(line: int, row: dict[str, Any]) -> tuple[HumanLabel | None, Problem | None]:
    graded = GRADED_RECORD_FIELDS.intersection(row)
    case_id = _text(row.get("id"))
    if len(graded) >= 3:
        message = (
            f"this is a judge's graded record (fields {', '.join(sorted(graded))}), "
            "not a human label: give the human labels (id, label) here"
        )
        return None, (line, case_id, message)
    if case_id is None:
        return None, (line, None, f"missing id (fields: {', '.join(map(str, row)) or 'none'})")
    if "label" not in row:
        return None, (line, case_id, f"no label field (fields: {', '.join(map(str, row))})")
    value = row["label"]
    if isinstance(value, list | dict):
        return None, (line, case_id, f"label must be a single value, got {value!r}")
    if _text(value) is None:
        return None, None
    score = row.get("score")
    if _text(score) is not None and as_number(score) is None:
        return None, (line, case_id, f"score {score!r} is not a number")
    probability, problem = _probability(line, case_id, row.get(INCLUSION))
    if problem is not None:
        return None, problem
    return (
        HumanLabel(
            id=case_id,
            label=normalise_label(value),
            line=line,
            score=as_number(score),
            annotator=_text(row.get(ANNOTATOR)),
            inclusion_probability=probability,
        ),
        None,
    )


def _probability(line: int, case_id: str, value: Any) -> tuple[float | None, Problem | None]:
    if _text(value) is None:
        return None, None
    number = as_number(value)
    if number is None or not 0 < number <= 1:
        return None, (line, case_id, f"{INCLUSION} must be a number in (0, 1], got {value!r}")
    return number, None


def _inclusion_problems(labels: list[HumanLabel]) -> list[Problem]:
    """Every label or none carries an inclusion probability, one per case."""
    given = [label for label in labels if label.inclusion_probability is not None]
    if not given:
        return []
    problems: list[Problem] = [
        (label.line, label.id, f"no {INCLUSION}, though other rows have one")
        for label in labels
        if label.inclusion_probability is None
    ]
    first: dict[str, float] = {}
    for label in given:
        p = first.setdefault(label.id, label.inclusion_probability or 0.0)
        if abs(p - (label.inclusion_probability or 0.0)) > 1e-12:
            problems.append((label.line, label.id, f"{INCLUSION} differs from the id's first row"))
    return problems


def check_human_labels(labels: HumanLabels, rubric: Rubric, case_ids: Iterable[str]) -> int:
    """InputError listing every label the rubric does not have, checked before the first
    request; the number of labels whose id is not among `case_ids` (the input's,
    streamed). Those are ignored, as the labels of cases outside `--limit` are (a trimmed
    input with the fuller label file), and counted in the estimates (`human_only`); only
    when no labelled id at all is in the input is the file refused (another input's)."""
    problems = _vocabulary_problems(labels, rubric)
    wanted = labels.ids
    every = len(wanted)
    for case_id in case_ids:
        wanted.discard(case_id)
    if every and len(wanted) == every:
        first = next(label.id for label in labels.labels)
        problems.append(
            (
                None,
                None,
                f"none of its {every} labelled ids is a case of the input (first: "
                f"{first!r}): the labels of another input?",
            )
        )
    if problems:
        raise InputError(labels.source, _capped(problems))
    return sum(label.id in wanted for label in labels.labels)


def _vocabulary_problems(labels: HumanLabels, rubric: Rubric) -> list[Problem]:
    choices = [c.name for c in rubric.behaviour.choices(rubric)]
    if not choices:
        return []  # a kind that names no labels: nothing to hold them to
    known = {label_key(normalise_label(name)) for name in choices}
    unknown = [label for label in labels.labels if label_key(label.label) not in known]
    if not unknown:
        return []
    listed = ", ".join(choices)
    if len(unknown) == len(labels.labels):
        seen = sorted({label.label for label in unknown})[:8]
        return [
            (
                None,
                None,
                f"the labels ({', '.join(seen)}) share nothing with rubric {rubric.ref}'s "
                f"labels ({listed}): is this another rubric's label file?",
            )
        ]
    return [
        (u.line, u.id, f"label {u.label!r} is not one of rubric {rubric.ref}'s labels ({listed})")
        for u in unknown
    ]


def _capped(problems: list[Problem]) -> list[Problem]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    more = len(problems) - MAX_PROBLEMS
    return [*problems[:MAX_PROBLEMS], (None, None, f"and {more} more problems")]


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None
