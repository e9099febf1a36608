"""Grade under a certificate: a cascade of judges, cheapest first, a person last.

Rung 1's judge grades every selected case; a case it decides (judge.engine.certificate:
a verdict whose confidence is at or above the rung's certified threshold) is done; only
the others go to rung 2's judge, and so on. A case no rung decides is `escalated`: its
record is the last rung's, with status `escalated` and why in `error` (each rung's
reason: "confidence 0.62 below rung 2's certified threshold 0.81"), its verdict and
confidence kept but no score or label, so it is never counted as decided. A case whose last rung failed (`parse_error`,
`api_error`) keeps that status. Every record cites the certificate's hash; a decided one
names its rung (`decided_by`: {"rung": 1-based, "model": its judge's model}).

Each rung writes an ordinary records file of its own (`Rung.records`: a single judge's
file, with its resume, cache and parse rules), and the cascade's records are rebuilt
from those files, in input order, by an atomic rewrite at the end of every run: a rerun
asks no rung again about a case it answered, and a new certificate is applied afresh.

The summary is the cascade's records' summary plus `cascade`: the coverage (the share of
cases decided), what each rung reached, decided and cost, the certified agreement, and
the cost of grading every case with the last rung instead (its cost per case it graded,
from its records' token usage, times the cases; the certificate's `cost_per_1000` when it
graded none).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.engine.certificate import VERDICTS, Certificate, check_binding, undecided_reason
from judge.engine.files import ProgressHook, Selection, grade_file
from judge.engine.grader import Grader
from judge.engine.identity import describe_identity
from judge.engine.inputs import iter_cases, validate_file
from judge.engine.pricing import estimate_cost
from judge.engine.records import KEEP_STATUSES, check_resumable, scan_records
from judge.engine.summary import summarise
from judge.errors import UsageError
from judge.schemas import GradedRecord, Usage


@dataclass(frozen=True)
class Rung:
    """One rung of a cascade: its grader, the records file it writes, its token prices."""

    grader: Grader
    records: Path
    prices: tuple[float, float] | None = None


def check_cascade(certificate: Certificate, rungs: list[Rung]) -> None:
    """The certificate's binding (rubric and judges, in order) checked against the rungs."""
    rubric = rungs[0].grader.rubric
    check_binding(certificate, rubric, [r.grader.identity for r in rungs])


async def grade_cascade(
    rungs: list[Rung],
    certificate: Certificate,
    input_path: Path,
    output: Path,
    *,
    selection: Selection | None = None,
    overwrite: bool = False,
    use_cache: bool = True,
    keep: tuple[str, ...] = KEEP_STATUSES,
    progress: bool | ProgressHook = False,
) -> dict[str, Any]:
    """Grade `input_path` down the cascade into `output` (the module's rules); its summary.
    The certificate is checked against the rungs, the input validated and every rung's
    file checked for a resume before any judge is asked anything."""
    check_cascade(certificate, rungs)
    rubric = rungs[0].grader.rubric
    validated = await asyncio.to_thread(validate_file, input_path, [rubric])
    chosen = (selection or Selection()).indices(validated.count)
    ids = await asyncio.to_thread(lambda: [c.id for c in iter_cases(input_path)])
    positions = list(range(len(ids))) if chosen is None else sorted(chosen)
    if overwrite:
        for rung in rungs:
            rung.records.unlink(missing_ok=True)
    for rung in rungs:
        await asyncio.to_thread(_check_resumable, rung, keep)
    reaching = positions
    decided_at: dict[str, int] = {}  # case id -> the rung (1-based) that decided it
    why: dict[str, list[str]] = {}  # case id -> each rung's reason for not deciding it
    reached: list[int] = []
    for number, rung in enumerate(rungs, 1):
        reached.append(len(reaching))
        await grade_file(
            rung.grader,
            input_path,
            rung.records,
            selection=Selection(only=frozenset(reaching)),
            use_cache=use_cache,
            prices=rung.prices,
            keep=keep,
            progress=progress,
        )
        wanted = {ids[p] for p in reaching}
        for record in await asyncio.to_thread(_records_of, rung.records, wanted):
            reason = undecided_reason(record, certificate.rungs[number - 1], number)
            if reason is None:
                decided_at[record.id] = number
            else:
                why.setdefault(record.id, []).append(reason)
        reaching = [p for p in reaching if ids[p] not in decided_at]
    wanted_ids = [ids[p] for p in positions]
    usage = await asyncio.to_thread(
        _write_cascade, rungs, certificate, output, wanted_ids, decided_at, why
    )
    summary = await asyncio.to_thread(_summarise, output, rubric)
    summary["cascade"] = cascade_summary(
        rungs, certificate, output, reached, decided_at, usage, len(positions)
    )
    total = [r["cost_usd"] for r in summary["cascade"]["rungs"]]
    summary["tokens"] = {
        "prompt": sum(u.prompt_tokens for u in usage),
        "completion": sum(u.completion_tokens for u in usage),
    }
    summary["estimated_cost_usd"] = None if None in total else round(sum(total), 6)
    summary["cascade"]["escalated"] = summary["status"].get("escalated", 0)
    return summary


def _check_resumable(rung: Rung, keep: tuple[str, ...]) -> None:
    grader = rung.grader
    check_resumable(
        rung.records,
        rubric_sha256=grader.rubric.sha256,
        rubric_ref=grader.rubric.ref,
        judge_id=grader.judge_id,
        judge=describe_identity(grader.identity),
        identity=grader.identity,
        keep=keep,
    )


def _records_of(path: Path, wanted: set[str]) -> list[GradedRecord]:
    return [GradedRecord.model_validate(d) for _, d in scan_records(path) if d["id"] in wanted]


def _write_cascade(
    rungs: list[Rung],
    certificate: Certificate,
    output: Path,
    ids: list[str],
    decided_at: dict[str, int],
    why: dict[str, list[str]],
) -> list[Usage]:
    """Write the cascade's records (input order, atomically); each rung's tokens spent on
    these cases."""
    readers = [_Reader(r.records) for r in rungs]
    usage = [Usage() for _ in rungs]
    tmp = output.with_name(output.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for case_id in ids:
            last = decided_at.get(case_id, len(rungs))
            records = [readers[n].get(case_id) for n in range(last)]
            for n, record in enumerate(records):
                usage[n] = usage[n] + record.usage
            final = cascade_record(records[-1], certificate, last, decided_at.get(case_id), why)
            handle.write(final.model_dump_json() + "\n")
    os.replace(tmp, output)
    return usage


def cascade_record(
    record: GradedRecord,
    certificate: Certificate,
    rung: int,
    decided: int | None,
    why: dict[str, list[str]],
) -> GradedRecord:
    """The cascade's record of a case from the record of the last rung it reached."""
    update: dict[str, Any] = {"certificate": certificate.sha256}
    if decided is not None:
        update["decided_by"] = {"rung": rung, "model": record.judge.model}
    elif record.status in VERDICTS:
        reason = "; ".join(why.get(record.id, []))
        # the verdict and its confidence stay for the audit; no score or label, so nothing
        # that reads the record can count an undecided verdict as one
        update.update(status="escalated", error=reason, score=None, label=None)
    return record.model_copy(update=update)


def settle_one(certificate: Certificate) -> Callable[[GradedRecord], GradedRecord]:
    """A cascade of one applied to each record as it comes (`judge watch --certificate`):
    decided by rung 1 at its certified threshold, or escalated saying why."""
    rung = certificate.rungs[0]

    def settle(record: GradedRecord) -> GradedRecord:
        reason = undecided_reason(record, rung, 1)
        why = {} if reason is None else {record.id: [reason]}
        return cascade_record(record, certificate, 1, None if reason else 1, why)

    return settle


class _Reader:
    """A rung's records file read forward (it is in input order, as the cascade's ids)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._records: Iterator[tuple[int, dict[str, Any]]] = scan_records(path)

    def get(self, case_id: str) -> GradedRecord:
        for _, data in self._records:
            if data["id"] == case_id:
                return GradedRecord.model_validate(data)
        raise UsageError(f"{self.path}: no record of case {case_id!r}, which it was to grade")


def _summarise(output: Path, rubric: Any) -> dict[str, Any]:
    records = (GradedRecord.model_validate(d) for _, d in scan_records(output))
    return summarise(records, rubric)


def cascade_summary(
    rungs: list[Rung],
    certificate: Certificate,
    output: Path,
    reached: list[int],
    decided_at: dict[str, int],
    usage: list[Usage],
    cases: int,
) -> dict[str, Any]:
    """The summary's `cascade` (the module's docstring)."""
    decided = [sum(1 for n in decided_at.values() if n == k) for k in range(1, len(rungs) + 1)]
    rows = []
    for number, (rung, spent) in enumerate(zip(rungs, usage, strict=True), 1):
        cost = estimate_cost(spent.prompt_tokens, spent.completion_tokens, rung.prices)
        rows.append(
            {
                "rung": number,
                "model": str(rung.grader.identity.get("model") or rung.grader.identity),
                "records": str(rung.records),
                "threshold": certificate.rungs[number - 1].threshold,
                "reached": reached[number - 1],
                "decided": decided[number - 1],
                "tokens": {"prompt": spent.prompt_tokens, "completion": spent.completion_tokens},
                "cost_usd": None if cost is None else round(cost, 6),
            }
        )
    return {
        "certificate": certificate.summary(),
        "certified_agreement": certificate.body.agreement,
        "records": str(output),
        "cases": cases,
        "decided": sum(decided),
        "coverage": round(sum(decided) / cases, 6) if cases else None,
        "rungs": rows,
        "cost_all_last_rung_usd": _all_last(rungs[-1], certificate, rows[-1], usage[-1], cases),
    }


def _all_last(
    rung: Rung, certificate: Certificate, row: dict[str, Any], spent: Usage, cases: int
) -> float | None:
    """What grading every case with the last rung would have cost: its cost per case it
    graded here, times the cases; from the certificate's `cost_per_1000` when it graded
    none; None when neither is known."""
    if row["reached"]:
        per_case = estimate_cost(spent.prompt_tokens, spent.completion_tokens, rung.prices)
        return None if per_case is None else round(per_case / row["reached"] * cases, 6)
    per_1000 = certificate.rungs[-1].cost_per_1000
    return None if per_1000 is None else round(per_1000 * cases / 1000, 6)
