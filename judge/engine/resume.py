"""What a rerun keeps of its records file, and what this run itself did.

A rerun on an existing records file never loses a record: the finished records of the
selected cases are kept (not graded again) while their case is the one they graded (the
same `inputs_sha256`; a case whose inputs changed under the same id is graded again), and the records of cases the run did not
select (a narrower `--limit`, another `--sample-seed`) stay in the file too, in input
order. `RunTally` counts what this run did apart from what the file holds: records kept,
graded, requests sent, and this run's tokens and cost (the summary's `tokens` and
`estimated_cost_usd` are the whole file's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.engine.cache import inputs_sha256
from judge.engine.inputs import iter_cases
from judge.engine.pricing import estimate_cost
from judge.engine.records import KEEP_STATUSES, finished_inputs, scan_records
from judge.rubric import Rubric
from judge.schemas import Case, GradedRecord


def kept_outside(records: Path, input_path: Path, chosen: set[int] | None) -> set[str]:
    """Ids of the input's cases that the selection `chosen` (indices; None = every case)
    leaves out but `records` already holds a record for: they stay in the file."""
    if chosen is None or not records.is_file():
        return set()
    held = {data["id"] for _, data in scan_records(records)}
    if not held:
        return set()
    return {
        case.id
        for index, case in enumerate(iter_cases(input_path))
        if index not in chosen and case.id in held
    }


@dataclass
class Finished:
    """The finished records a rerun keeps: `ids`, and the records it does not keep
    because their case changed (`changed`: the case's `inputs_sha256` differs from the
    record's, so the same id now names other inputs) or keeps unchecked (`unchecked`:
    records written before `inputs_sha256`, kept as before, with a note)."""

    ids: set[str]
    changed: int = 0
    unchecked: int = 0


def still_finished(held: dict[str, str | None], rubric: Rubric, cases: Iterable[Case]) -> Finished:
    """Of the finished records `held` (id -> inputs hash, `records.finished_inputs`), those
    whose case in `cases` (the run's selection) still hashes the same. A record whose id
    is not among `cases` is left to `kept_outside`. One pass over the cases, only when a
    record is held (a first run pays nothing)."""
    finished = Finished(set())
    if not held:
        return finished
    for case in cases:
        if case.id not in held:
            continue
        recorded = held[case.id]
        if recorded is None:
            finished.unchecked += 1
        elif recorded != inputs_sha256(rubric, case):
            finished.changed += 1
            continue
        finished.ids.add(case.id)
    return finished


def unchanged_ids(
    records: Path, rubric: Rubric, input_path: Path, keep: tuple[str, ...] = KEEP_STATUSES
) -> set[str]:
    """Ids of the finished records (the statuses `keep`, this rubric file) whose case in
    `input_path` still hashes the same (`still_finished`): what a batch export or another
    engine leaves out as done."""
    held = finished_inputs(records, rubric.sha256, keep) if records.is_file() else {}
    return still_finished(held, rubric, iter_cases(input_path)).ids


def file_ids(
    input_path: Path, chosen: set[int] | None, kept: set[str]
) -> Callable[[], Iterator[str]]:
    """The ids the records file ends with, in input order: the selected cases and the
    `kept` ones (called again when the file is rewritten, so the ids are streamed)."""

    def ids() -> Iterator[str]:
        for index, case in enumerate(iter_cases(input_path)):
            if chosen is None or index in chosen or case.id in kept:
                yield case.id

    return ids


@dataclass
class RunTally:
    """What one run did to one records file."""

    kept: int = 0  # finished records of selected cases, not graded again
    changed: int = 0  # finished records not kept: their case's inputs changed
    unchecked: int = 0  # of the kept, records written before inputs_sha256 (not compared)
    outside: int = 0  # records of cases outside this run's selection, left in the file
    graded: int = 0  # records written by this run
    cached: int = 0  # of those, answered from the verdict cache
    sent: int = 0  # of those, requests that went to the judge
    prompt_tokens: int = 0
    completion_tokens: int = 0
    sends: bool = field(default=True, repr=False)  # False: rules or computed, nothing sent

    def add(self, record: GradedRecord) -> None:
        self.graded += 1
        self.cached += record.cached
        self.sent += self.sends and not record.cached
        self.prompt_tokens += record.usage.prompt_tokens
        self.completion_tokens += record.usage.completion_tokens

    def as_dict(self, prices: tuple[float, float] | None) -> dict[str, Any]:
        """The summary's `run` block."""
        return {
            "kept": self.kept,
            "kept_outside_selection": self.outside,
            "inputs_changed": self.changed,
            "kept_unchecked": self.unchecked,
            "graded": self.graded,
            "cached": self.cached,
            "sent": self.sent,
            "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
            "estimated_cost_usd": estimate_cost(self.prompt_tokens, self.completion_tokens, prices),
        }


def run_line(summary: dict[str, Any], records: str | Path | None = None) -> str | None:
    """One line on what this run did, when it resumed a file (else None): kept / graded /
    sent, and this run's own tokens and cost."""
    run = summary.get("run")
    changed = run.get("inputs_changed", 0) if isinstance(run, dict) else 0
    if not isinstance(run, dict) or not (run["kept"] or run["kept_outside_selection"] or changed):
        return None
    where = f" from {records}" if records else ""
    outside = run["kept_outside_selection"]
    extra = f" and {outside} outside this selection" if outside else ""
    again = f", {changed} whose inputs changed" if changed else ""
    cost = run["estimated_cost_usd"]
    tokens = run["tokens"]
    unchecked = run.get("kept_unchecked", 0)
    note = (
        f"; {unchecked} kept record(s) were written without inputs_sha256 (an older "
        "llm-judge), so their cases were not checked for changes: --overwrite grades them again"
        if unchecked
        else ""
    )
    return (
        f"resumed: kept {run['kept']} finished record(s){extra}{where}; graded "
        f"{run['graded']}{again} ({run['cached']} from the cache), sent {run['sent']} "
        f"request(s); this run: tokens {tokens['prompt']} prompt, {tokens['completion']} "
        "completion, estimated cost " + ("unknown" if cost is None else f"${cost:.4f}") + note
    )
