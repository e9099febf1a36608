"""Per-case covariates that may explain a judge's errors, read from the cases file.

Only the fields needed are kept: the answer (or the two answers of a pair), the contexts,
the slices and, for pairs, the order they were shown in. Common aliases are read too
(Ragas' ``response`` and ``retrieved_contexts``). Each covariate becomes a column:

- ``answer_words``: answer length, per 100 words, or per 10 when the lengths' standard
  deviation is under :data:`SHORT_SPREAD` words (pairs: answer A minus answer B);
- ``contexts``: number of contexts;
- ``slice:NAME``: 1 for the cases in slice NAME (slices that hold at least
  :data:`MIN_SLICE` cases and leave at least as many out), against every other case;
- ``b_shown_first``: pairs shown in the order ``ba`` (from an ``order`` field).

A column that does not vary is left out with a note.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from calibration.errors import CalibrationInputError
from calibration.io.rows import read_rows

__all__ = ["Covariate", "Design", "build_design", "read_cases"]

MIN_SLICE = 5
SHORT_SPREAD = 30  # words: below this standard deviation, length is counted per 10 words
_ALIASES = {
    "response": "answer",
    "retrieved_contexts": "contexts",
    "context": "contexts",
    "response_a": "answer_a",
    "response_b": "answer_b",
    "slice": "slices",
}
_KEPT = ("answer", "answer_a", "answer_b", "contexts", "slices", "order")


@dataclass(frozen=True)
class Covariate:
    """One column: its name, what a unit of it is, and how to say it in a sentence."""

    name: str
    unit: str
    kind: str  # "per_unit" or "indicator"
    description: str


@dataclass
class Design:
    """The design matrix (intercept first), its columns, and the cases it covers."""

    ids: list[str]
    x: np.ndarray
    covariates: list[Covariate]
    notes: list[str] = field(default_factory=list)


def _as_list(value: Any) -> list[str]:
    if value in (None, ""):
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    text = str(value).strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
            if isinstance(parsed, list):
                return [str(v) for v in parsed]
        except json.JSONDecodeError:
            pass
    return [text]


def _slices(value: Any) -> list[str]:
    names = _as_list(value)
    if len(names) == 1 and not isinstance(value, list):  # CSV cells: "a|b" or "a;b"
        names = [n.strip() for n in names[0].replace(";", "|").split("|") if n.strip()]
    return names


def read_cases(path: str | Path) -> dict[str, dict[str, Any]]:
    """id -> the covariate fields of each case in a JSONL or CSV cases file."""
    cases: dict[str, dict[str, Any]] = {}
    for line, row in read_rows(path):
        case_id = row.get("id")
        if case_id in (None, ""):
            raise CalibrationInputError("missing id", path=path, line=line)
        kept: dict[str, Any] = {}
        for key, value in row.items():
            name = _ALIASES.get(key, key)
            if name in _KEPT and (name not in kept or name == key):
                kept[name] = value
        kept["contexts"] = _as_list(kept.get("contexts"))
        kept["slices"] = _slices(kept.get("slices"))
        cases[str(case_id).strip()] = kept
    return cases


def _words(text: Any) -> float | None:
    return None if text in (None, "") else float(len(str(text).split()))


def _length(case: Mapping[str, Any]) -> float | None:
    if case.get("answer") not in (None, ""):
        return _words(case["answer"])
    a, b = _words(case.get("answer_a")), _words(case.get("answer_b"))
    return None if a is None or b is None else a - b


def _columns(rows: Sequence[Mapping[str, Any]]) -> tuple[list[Covariate], list[np.ndarray]]:
    pairwise = all(r.get("answer") in (None, "") for r in rows)
    words = np.array([_length(r) for r in rows], dtype=float)
    # Per 100 words, or per 10 when answers are short and vary little (a 100-word step
    # would lie far outside the data).
    step = 100 if len(words) and words.std() >= SHORT_SPREAD else 10
    what = "answer A minus answer B" if pairwise else "answer"
    covariates = [Covariate("answer_words", f"{step} words", "per_unit", f"{what} length")]
    columns = [words / step]
    covariates.append(Covariate("contexts", "context", "per_unit", "the number of contexts"))
    columns.append(np.array([len(r.get("contexts") or []) for r in rows], dtype=float))
    order = [str(r.get("order") or "").strip().lower() for r in rows]
    if any(o in ("ab", "ba") for o in order):
        covariates.append(Covariate("b_shown_first", "", "indicator", "answer B is shown first"))
        columns.append(np.array([o == "ba" for o in order], dtype=float))
    return covariates, columns


def _slice_columns(rows, disagree, notes) -> tuple[list[Covariate], list[np.ndarray]]:
    names = sorted({n for r in rows for n in r.get("slices") or []})
    covariates, columns = [], []
    for name in names:
        member = np.array([name in (r.get("slices") or []) for r in rows])
        inside = int(member.sum())
        if inside < MIN_SLICE or len(rows) - inside < MIN_SLICE:
            notes.append(f"slice {name!r}: {inside} of {len(rows)} cases, too few on one side")
            continue
        errors = int(disagree[member].sum())
        if errors in (0, inside):
            which = "agrees" if errors == 0 else "disagrees"
            notes.append(
                f"slice {name!r}: the judge {which} with people on all {inside} of its cases, "
                "which no odds ratio can express (separation); left out of the model"
            )
            continue
        covariates.append(Covariate(f"slice:{name}", "", "indicator", f"slice {name!r}"))
        columns.append(member.astype(float))
    return covariates, columns


def build_design(
    ids: Sequence[str],
    disagree: Sequence[bool],
    cases: Mapping[str, Mapping[str, Any]],
    extra: Sequence[Mapping[str, Any]] | None = None,
) -> tuple[Design, np.ndarray]:
    """Design matrix and 0/1 outcome for the labelled cases found in ``cases``.

    ``extra``: other fields of each case (the label files' rows), searched for an
    ``order`` when the cases file has none. Cases missing from the file, or with no
    answer text, are left out and counted in the notes.
    """
    rows, kept, notes = [], [], []
    for i, case_id in enumerate(ids):
        case = cases.get(case_id)
        if case is None:
            continue
        row = dict(case)
        if not row.get("order") and extra is not None:
            row["order"] = extra[i].get("order")
        if _length(row) is None:
            continue
        rows.append(row)
        kept.append(i)
    if len(kept) < len(ids):
        notes.append(
            f"{len(ids) - len(kept)} of {len(ids)} labelled cases left out: not in the cases "
            "file, or no answer text"
        )
    y = np.asarray(disagree, dtype=float)[kept]
    covariates, columns = _columns(rows)
    more, more_columns = _slice_columns(rows, y, notes)
    covariates += more
    columns += more_columns
    design = Design([ids[i] for i in kept], np.ones((len(kept), 1)), [], notes)
    for covariate, column in zip(covariates, columns, strict=True):
        if len(column) and np.ptp(column) > 0:
            design.covariates.append(covariate)
            design.x = np.column_stack([design.x, column])
        elif covariate.kind == "per_unit":
            notes.append(f"{covariate.description} does not vary: left out")
    return design, y
