"""Finished runs read for `judge compare`: per rubric, per metric, each case's value.

A run is a folder of records files (a pass of several rubrics, `judge grade --rubric A,B
-o RUN/`) or one records file. Each rubric gives the metric `RUBRIC_ID.score` (the
record's score, for `ok` records) and, where its kind has per-case figures
(`Kind.case_figures`, e.g. a criteria rubric's criteria), `RUBRIC_ID.FIGURE`. Pairing two
runs keeps every case id both graded with a value on both sides, and counts, never
drops silently, the ids one run has and the other lacks and the cases left out because
one side has no value (parse_error, api_error, abstained).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.engine.measure.estimates import rubric_scale
from judge.engine.records import is_records_file, scan_records
from judge.errors import RubricError, UsageError
from judge.rubric import Rubric, RubricLibrary
from judge.schemas import GradedRecord

MAX_LISTED_IDS = 50  # ids named per side in the JSON; the counts are always whole


@dataclass
class RubricRecords:
    """One rubric's records in a run: its ids in file order and each metric's values."""

    path: Path
    refs: set[str] = field(default_factory=set)
    sha256: set[str] = field(default_factory=set)
    judge_ids: set[str] = field(default_factory=set)
    ids: list[str] = field(default_factory=list)
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    statuses: dict[str, str] = field(default_factory=dict)  # those that are not "ok"
    records: bool = True  # a records file of ours (False: another tool's output)
    labels: dict[str, int] = field(default_factory=dict)  # ok records' labels, counted
    pass_label: str | None = None  # a two-label rubric's (Kind.pass_label), when found

    def outcomes(self) -> Outcomes:
        """Each case's (status, score), in file order (`calibration.compare.changes`)."""
        return Outcomes(self)


class Outcomes(Mapping[str, tuple[str, float | None]]):
    """A read-only view of a rubric's cases as id -> (status, score): no copy of a
    million-case run is made to find which cases moved."""

    def __init__(self, records: RubricRecords) -> None:
        self._records = records
        self._scores = records.values.get("score", {})
        self._ids = set(records.ids)

    def __getitem__(self, case_id: str) -> tuple[str, float | None]:
        if case_id not in self._ids:
            raise KeyError(case_id)
        return self._records.statuses.get(case_id, "ok"), self._scores.get(case_id)

    def __contains__(self, case_id: object) -> bool:
        return case_id in self._ids

    def __iter__(self) -> Iterator[str]:
        return iter(self._records.ids)

    def __len__(self) -> int:
        return len(self._records.ids)


@dataclass
class Run:
    """A run: its rubrics by id, and notes on what was skipped."""

    name: str
    rubrics: dict[str, RubricRecords] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def read_run(path: Path, library: RubricLibrary) -> Run:
    """Every records file of a run folder (other .jsonl files are skipped with a note), or
    one records file. UsageError when there is none, or two files grade one rubric."""
    run = Run(str(path))
    for file in _files(path, run):
        for rubric_id, records in _read_file(file, library, run).items():
            if rubric_id in run.rubrics:
                raise UsageError(
                    f"{path}: rubric {rubric_id!r} is graded in two files "
                    f"({run.rubrics[rubric_id].path.name} and {file.name}); keep one"
                )
            run.rubrics[rubric_id] = records
    if not run.rubrics:
        raise UsageError(f"{path}: no graded records in it")
    return run


def _files(path: Path, run: Run) -> Iterator[Path]:
    if path.is_dir():
        for file in sorted(path.glob("*.jsonl")):
            if is_records_file(file):
                yield file
            else:
                run.notes.append(f"{file.name} skipped: not a records file")
        return
    if not path.is_file():
        raise UsageError(f"{path}: no such file or folder")
    if not is_records_file(path):
        raise UsageError(f"{path} is not a records file (from judge grade)")
    yield path


def _read_file(file: Path, library: RubricLibrary, run: Run) -> dict[str, RubricRecords]:
    out: dict[str, RubricRecords] = {}
    rubrics: dict[str, Rubric | None] = {}
    seen: set[tuple[str, str]] = set()
    for _, data in scan_records(file):
        try:
            record = GradedRecord.model_validate(data)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(map(str, problem["loc"])) or "record"
            raise UsageError(
                f"{file}: the record of id {data.get('id')!r} is not a graded record "
                f"({where}: {problem['msg'].lower()})"
            ) from None
        into = out.setdefault(record.rubric, RubricRecords(file))
        ref = f"{record.rubric}@{record.rubric_version}"
        into.refs.add(ref)
        into.sha256.add(record.rubric_sha256)
        into.judge_ids.add(record.judge_id or "")
        if (record.rubric, record.id) in seen:
            raise UsageError(f"{file}: id {record.id!r} has two records of {record.rubric}")
        seen.add((record.rubric, record.id))
        into.ids.append(record.id)
        if record.status != "ok":  # kept for the others only: a million ok cases cost nothing
            into.statuses[record.id] = record.status
        if record.status != "ok" or record.score is None:
            continue
        into.values.setdefault("score", {})[record.id] = record.score
        if record.label is not None:
            into.labels[record.label] = into.labels.get(record.label, 0) + 1
        if ref not in rubrics:
            rubrics[ref] = _rubric(ref, record.rubric_sha256, library, run)
        rubric = rubrics[ref]
        if rubric is not None:
            into.pass_label = into.pass_label or rubric_scale(rubric)[1]  # two labels only
            for name, value in rubric.behaviour.case_figures(rubric, record).items():
                into.values.setdefault(name, {})[record.id] = value
    return out


def _rubric(ref: str, sha256: str, library: RubricLibrary, run: Run) -> Rubric | None:
    """The rubric file the records came from, to ask its kind for per-case figures; None
    (with a note) when it is not found or is another file than the records say."""
    try:
        rubric = library.load(ref)
    except RubricError:
        run.notes.append(f"{ref}: rubric not found, its kind's figures are left out "
                         "(pass --rubrics-dir for your own rubrics)")  # fmt: skip
        return None
    if rubric.sha256 != sha256:
        run.notes.append(f"{ref}: the rubric file differs from the records' (sha256), its "
                         "kind's figures are left out")  # fmt: skip
        return None
    return rubric


def paired(a: Run, b: Run) -> tuple[dict[str, tuple[list[float], list[float]]], dict[str, Any]]:
    """Each metric both runs have, as paired value lists (case ids in A's order), and the
    coverage: per rubric the paired ids, the ids on one side only, the cases a metric
    left out, rubrics only one run has, and notes (a rubric file or judge that differs)."""
    metrics: dict[str, tuple[list[float], list[float]]] = {}
    coverage: dict[str, Any] = {"rubrics": {}, "left_out": {}, "notes": []}
    coverage["rubrics_only_in_a"] = sorted(set(a.rubrics) - set(b.rubrics))
    coverage["rubrics_only_in_b"] = sorted(set(b.rubrics) - set(a.rubrics))
    for rubric_id, ra in a.rubrics.items():
        rb = b.rubrics.get(rubric_id)
        if rb is None:
            continue
        in_b = set(rb.ids)
        both = [i for i in ra.ids if i in in_b]
        in_a = set(ra.ids)
        only_a = [i for i in ra.ids if i not in in_b]
        only_b = [i for i in rb.ids if i not in in_a]
        coverage["rubrics"][rubric_id] = {
            "cases_in_both": len(both),
            "only_a": len(only_a),
            "only_b": len(only_b),
            "only_a_ids": only_a[:MAX_LISTED_IDS],
            "only_b_ids": only_b[:MAX_LISTED_IDS],
        }
        coverage["notes"].extend(_differences(rubric_id, ra, rb))
        for name in [*ra.values, *(n for n in rb.values if n not in ra.values)]:
            va, vb = ra.values.get(name, {}), rb.values.get(name, {})
            keep = [i for i in both if i in va and i in vb]
            metrics[f"{rubric_id}.{name}"] = ([va[i] for i in keep], [vb[i] for i in keep])
            coverage["left_out"][f"{rubric_id}.{name}"] = len(both) - len(keep)
    return metrics, coverage


def _differences(rubric_id: str, a: RubricRecords, b: RubricRecords) -> list[str]:
    notes = []
    if a.sha256 != b.sha256:
        notes.append(
            f"{rubric_id}: graded with different rubric files ({', '.join(sorted(a.refs))} vs "
            f"{', '.join(sorted(b.refs))}): a difference may be the rubric's, not the systems'"
        )
    if a.judge_ids != b.judge_ids:
        notes.append(
            f"{rubric_id}: graded by different judges: a difference may be the judge's, not "
            "the systems'"
        )
    return notes
