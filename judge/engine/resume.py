"""What a rerun keeps of its records file, and what this run itself did.

A rerun on an existing records file never loses a record: the finished records of the
selected cases are kept (not graded again), and the records of cases the run did not
select (a narrower `--limit`, another `--sample-seed`) stay in the file too, in input
order. `RunTally` counts what this run did apart from what the file holds: records kept,
graded, requests sent, and this run's tokens and cost (the summary's `tokens` and
`estimated_cost_usd` are the whole file's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.engine.inputs import iter_cases
from judge.engine.pricing import estimate_cost
from judge.engine.records import scan_records
from judge.schemas import GradedRecord


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
    if not isinstance(run, dict) or not (run["kept"] or run["kept_outside_selection"]):
        return None
    where = f" from {records}" if records else ""
    outside = run["kept_outside_selection"]
    extra = f" and {outside} outside this selection" if outside else ""
    cost = run["estimated_cost_usd"]
    tokens = run["tokens"]
    return (
        f"resumed: kept {run['kept']} finished record(s){extra}{where}; graded "
        f"{run['graded']} ({run['cached']} from the cache), sent {run['sent']} request(s); "
        f"this run: tokens {tokens['prompt']} prompt, {tokens['completion']} completion, "
        "estimated cost " + ("unknown" if cost is None else f"${cost:.4f}")
    )
