"""Open a labelling set: read and sample the cases on first use, check them on reuse.

A store remembers its plan (input file hash, rubric and hash, records file hash, sample
size, seed, overlap). Starting again with the same plan resumes where everyone left off;
a different plan is refused, naming what changed, so labels never silently mix two sets.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.engine.inputs import iter_cases, validate_file
from judge.engine.records import scan_records
from judge.errors import InputError, UsageError
from judge.label.choices import case_view
from judge.label.sampling import select_items, stratum_of
from judge.label.store import LabelStore
from judge.rubric import Rubric, file_sha256


@dataclass(frozen=True)
class LabelPlan:
    """What a labelling set is made of."""

    input: Path
    rubric: Rubric
    records: Path | None = None
    sample: int | None = None
    seed: int = 0
    overlap: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "input_sha256": file_sha256(self.input),
            "rubric": self.rubric.ref,
            "rubric_sha256": self.rubric.sha256,
            "records_sha256": file_sha256(self.records) if self.records else None,
            "sample": self.sample,
            "seed": self.seed,
            "overlap": self.overlap,
            "input": str(self.input),
        }


def open_label_store(db: Path, plan: LabelPlan) -> LabelStore:
    """The store at `db`, created from `plan` or checked against it. Bad input raises
    before the store is touched."""
    validate_file(plan.input, plan.rubric)  # InputError naming file and line
    strata = _strata(plan.records) if plan.records else None
    if strata is not None:
        _check_records(plan.records, strata, [case.id for case in iter_cases(plan.input)])
    escalated = _escalated(plan.records) if plan.records else set()
    try:
        store = LabelStore(db)
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"--db {db}: not a label store SQLite can read ({exc})") from None
    try:
        stored = store.plan()
        if stored is None:
            _initialise(store, plan, strata, escalated)
        else:
            _check_same(db, stored, plan.as_dict())
    except BaseException:
        store.close()
        raise
    return store


def _initialise(
    store: LabelStore, plan: LabelPlan, strata: dict[str, str] | None, escalated: set[str]
) -> None:
    cases = {case.id: case for case in iter_cases(plan.input)}
    items = select_items(
        list(cases),
        strata=strata,
        sample=plan.sample,
        seed=plan.seed,
        overlap=plan.overlap,
        escalated=escalated,
    )
    views = [(item, case_view(plan.rubric, cases[item.case_id])) for item in items]
    store.initialise(plan.as_dict(), views)


def _check_same(db: Path, stored: dict[str, Any], wanted: dict[str, Any]) -> None:
    changed = [k for k in wanted if k != "input" and stored.get(k) != wanted[k]]
    if changed:
        raise UsageError(
            f"{db} holds a labelling set made with other settings ({', '.join(changed)} "
            f"differ): use the same ones to resume, or another --db to start a new set"
        )


def _strata(records: Path) -> dict[str, str]:
    """case id -> stratum (judge label x first slice), read server-side only."""
    if not records.is_file():
        raise InputError(str(records), [(None, None, "no such file")])
    out: dict[str, str] = {}
    for _, record in scan_records(records):
        label = record.get("label")
        slices = record.get("slices") or []
        out[record["id"]] = stratum_of(
            str(label) if label is not None else None, str(record.get("status")), slices
        )
    return out


def _escalated(records: Path) -> set[str]:
    """The ids a certified cascade escalated to people (status `escalated`): first in line."""
    return {r["id"] for _, r in scan_records(records) if r.get("status") == "escalated"}


def _check_records(records: Path | None, strata: dict[str, str], case_ids: list[str]) -> None:
    missing = [case_id for case_id in case_ids if case_id not in strata]
    if missing:
        raise InputError(
            str(records),
            [(None, missing[0], f"{len(missing)} cases of the input have no record here")],
        )


def describe(store: LabelStore) -> str:
    items, overlap = store.count_items()
    return f"{items} cases to label ({overlap} of them by two annotators)"
