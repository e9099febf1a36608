"""The files of ``judge certify``: one records file per rung (graded records, or any JSONL
or CSV with ``id``, ``label`` and ``confidence``) and the people's labels.

Refused (:class:`CalibrationInputError`, exit 2, naming file, line and id): a file that
cannot be read, a row without an id or with an id seen before, a verdict (status ``ok``,
``abstained`` or ``escalated``, with a label) without a confidence or with one outside
[0, 1], rungs of different rubrics (id, version or hash), a labelled case that a later
rung has no record of, human labels that are graded records, and a labels file that
matches no record. A record without a verdict (a parse or API error, an empty label) has
no confidence: that rung cannot decide the case, which goes on to the next.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from calibration.agreement.annotators import consolidate_annotators
from calibration.errors import CalibrationInputError
from calibration.io.labels import LabelSet, as_number, normalise_label, read_labels
from calibration.io.rows import read_label_rows
from calibration.io.vocabulary import check_human_file, label_key

__all__ = ["CertifyInputs", "Rung", "read_certify_inputs"]

VERDICT_STATUSES = frozenset({"", "ok", "abstained", "escalated"})
RULES_JUDGE = (
    "the rules judge writes no confidence: judge certify needs a model judge's confidence "
    "(logprobs, --samples K votes, or a rubric that asks for one)"
)


@dataclass(frozen=True)
class Rung:
    """One rung's records: each id's label (``None``: no verdict) and confidence (``nan``:
    none), in file order, with what the certificate says of the judge."""

    path: str
    ids: list[str]
    labels: dict[str, str | None]
    confidence: dict[str, float]
    judge: dict[str, Any]
    rubric: dict[str, Any] | None
    confidence_source: str | None
    tokens: tuple[int, int] | None  # prompt and completion tokens; None: no usage given
    records: int

    def confidences(self, ids: Sequence[str]) -> np.ndarray:
        return np.array([self.confidence.get(i, math.nan) for i in ids], dtype=float)

    def agrees(self, ids: Sequence[str], human: Sequence[str]) -> np.ndarray:
        return np.array(
            [_same(self.labels.get(i), h) for i, h in zip(ids, human, strict=True)], dtype=bool
        )


def _same(judge: str | None, human: str) -> bool:
    return judge is not None and label_key(judge) == label_key(human)


@dataclass(frozen=True)
class CertifyInputs:
    """The rungs, and the labelled cases (the first rung's ids people labelled)."""

    rungs: list[Rung]
    ids: list[str]
    human: list[str]
    labels_path: str
    human_only: int  # labelled ids no rung-1 record has

    @property
    def rubric(self) -> dict[str, Any] | None:
        return next((r.rubric for r in self.rungs if r.rubric is not None), None)


def read_certify_inputs(
    records: Sequence[str | Path], labels: str | Path | LabelSet
) -> CertifyInputs:
    """Read, check and join the files (see the module docstring)."""
    rungs = [_read_rung(Path(p)) for p in records]
    _same_rubric(rungs)
    human = labels if isinstance(labels, LabelSet) else read_labels(labels)
    human = consolidate_annotators(human)
    check_human_file(human, rungs[0].path)
    by_id = {r.id: normalise_label(r.value) for r in human.records}
    ids = [i for i in rungs[0].ids if i in by_id]
    if not ids:
        raise CalibrationInputError(
            f"no id in common with the {rungs[0].records} records of {rungs[0].path}",
            path=human.path,
        )
    for rung in rungs[1:]:
        missing = [i for i in ids if i not in rung.labels]
        if missing:
            raise CalibrationInputError(
                f"no record of labelled case {missing[0]!r} ({len(missing)} such): each rung "
                f"must grade every labelled case of the first ({rungs[0].path})",
                path=rung.path,
            )
    return CertifyInputs(
        rungs=rungs,
        ids=ids,
        human=[by_id[i] for i in ids],
        labels_path=human.path,
        human_only=len(by_id) - len(ids),
    )


def _read_rung(path: Path) -> Rung:
    ids: list[str] = []
    labels: dict[str, str | None] = {}
    confidence: dict[str, float] = {}
    judges: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    first: dict[str, Any] = {}
    rubric: dict[str, Any] | None = None
    tokens = [0, 0]
    priced = False
    for line, row in read_label_rows(path):
        case_id = _id(row, path, line, labels)
        label, conf = _verdict(row, path, line, case_id, first)
        ids.append(case_id)
        labels[case_id], confidence[case_id] = label, conf
        rubric = _rubric_of(row, path, line, rubric)
        first = first or row
        sources.update([str(row["confidence_source"])] if row.get("confidence_source") else [])
        judges.update([_model(row)])
        usage = row.get("usage")
        if isinstance(usage, dict):
            priced = True
            for k, key in enumerate(("prompt_tokens", "completion_tokens")):
                tokens[k] += int(as_number(usage.get(key)) or 0)
    if not ids:
        raise CalibrationInputError("no records", path=path)
    judge = first.get("judge") if isinstance(first.get("judge"), dict) else None
    return Rung(
        path=str(path),
        ids=ids,
        labels=labels,
        confidence=confidence,
        judge=judge or {"model": _foreign_model(judges, path)},
        rubric=rubric,
        confidence_source=sources.most_common(1)[0][0] if sources else None,
        tokens=(tokens[0], tokens[1]) if priced else None,
        records=len(ids),
    )


def _id(row: dict[str, Any], path: Path, line: int, seen: dict[str, Any]) -> str:
    raw = row.get("id")
    if raw is None or not str(raw).strip():
        raise CalibrationInputError("missing id", path=path, line=line)
    case_id = str(raw).strip()
    if case_id in seen:
        raise CalibrationInputError(f"duplicate id {case_id!r}", path=path, line=line)
    return case_id


def _verdict(
    row: dict[str, Any], path: Path, line: int, case_id: str, first: dict[str, Any]
) -> tuple[str | None, float]:
    """The record's label and confidence; ``(None, nan)`` when it holds no verdict."""
    status = str(row.get("status") or "").strip()
    label = row.get("label")
    if status == "abstained" and (label is None or str(label).strip() == ""):
        label = "abstained"
    if status not in VERDICT_STATUSES or label is None or str(label).strip() == "":
        return None, math.nan
    if isinstance(label, list | dict):
        raise CalibrationInputError(
            f"id {case_id!r}: label must be one value", path=path, line=line
        )
    raw = row.get("confidence")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        why = RULES_JUDGE if _model(row) == "rules" else (
            "a verdict without a confidence; judge certify needs one on every verdict "
            "(the records' confidence field, 0 to 1)"
        )  # fmt: skip
        raise CalibrationInputError(f"id {case_id!r}: {why}", path=path, line=line)
    conf = as_number(raw)
    if conf is None or not 0 <= conf <= 1:
        raise CalibrationInputError(
            f"id {case_id!r}: confidence {raw!r} is not a number from 0 to 1", path=path, line=line
        )
    return normalise_label(label), conf


def _model(row: dict[str, Any]) -> str:
    judge = row.get("judge")
    if isinstance(judge, dict) and judge.get("model"):
        return str(judge["model"])
    return str(row.get("model") or row.get("judge") or "")


def _foreign_model(seen: Counter[str], path: Path) -> str:
    """Another tool's judge: its `model` (or `judge`) column, else the file's name."""
    name = seen.most_common(1)[0][0]
    return name or path.stem


def _rubric_of(
    row: dict[str, Any], path: Path, line: int, seen: dict[str, Any] | None
) -> dict[str, Any] | None:
    if not row.get("rubric"):
        return seen
    mine = {
        "id": str(row["rubric"]),
        "version": row.get("rubric_version"),
        "sha256": row.get("rubric_sha256"),
    }
    if seen is not None and mine != seen:
        raise CalibrationInputError(
            f"id {row.get('id')!r}: rubric {_name(mine)}, but earlier records are {_name(seen)}: "
            "one rubric per rung",
            path=path,
            line=line,
        )
    return mine


def _name(rubric: dict[str, Any] | None) -> str:
    if rubric is None:
        return "none (not graded records)"
    return f"{rubric['id']}@{rubric['version']} (sha256 {str(rubric['sha256'])[:12]})"


def _same_rubric(rungs: list[Rung]) -> None:
    known = [r for r in rungs if r.rubric is not None]  # a foreign file's rubric is unknown
    for rung in known[1:]:
        if rung.rubric != known[0].rubric:
            raise CalibrationInputError(
                f"this rung's rubric is {_name(rung.rubric)}, that of "
                f"{known[0].path} {_name(known[0].rubric)}: the rungs of a cascade grade "
                "with one rubric",
                path=rung.path,
            )
