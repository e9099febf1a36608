"""The summary of a graded set, built record by record (memory does not grow with N).

Every kind gets the counts by status, the number scored and the mean score; the rubric's
kind adds its own figures (`Kind.new_stats`), overall and per slice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from judge.engine.pricing import estimate_cost
from judge.kinds import KindStats
from judge.kinds._base import Rounded
from judge.rubric import Rubric
from judge.schemas import GradedRecord


@dataclass
class _Stats:
    """Running totals for one group of records (all, or one slice)."""

    kind: KindStats
    statuses: Counter[str] = field(default_factory=Counter)
    scored: int = 0
    score_sum: float = 0.0

    def add(self, record: GradedRecord) -> None:
        self.statuses[record.status] += 1
        if record.status == "escalated":  # left to people: none of its figures count
            return
        self.kind.add_record(record)
        if record.status != "ok" or record.score is None:
            return
        self.scored += 1
        self.score_sum += record.score
        self.kind.add_ok(record)

    def result(self) -> dict[str, Any]:
        mean = Rounded(self.score_sum / self.scored) if self.scored else None
        return {
            "cases": sum(self.statuses.values()),
            "status": dict(sorted(self.statuses.items())),
            "scored": self.scored,
            "mean_score": mean,
            **self.kind.figures(mean),
        }


class SummaryBuilder:
    """Feed records with `add`; `result()` gives the summary dict of DESIGN.md."""

    def __init__(self, rubric: Rubric) -> None:
        self.rubric = rubric
        self.all = self._stats()
        self.slices: dict[str, _Stats] = {}
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached = 0
        self.models: Counter[str] = Counter()

    def _stats(self) -> _Stats:
        return _Stats(self.rubric.behaviour.new_stats(self.rubric))

    def add(self, record: GradedRecord) -> None:
        self.all.add(record)
        for name in record.slices:
            if name not in self.slices:
                self.slices[name] = self._stats()
            self.slices[name].add(record)
        self.prompt_tokens += record.usage.prompt_tokens
        self.completion_tokens += record.usage.completion_tokens
        self.cached += record.cached
        self.models[record.judge.model] += 1

    def result(self, prices: tuple[float, float] | None = None) -> dict[str, Any]:
        out = {"rubric": self.rubric.ref, "kind": self.rubric.kind, **self.all.result()}
        out["cached"] = self.cached
        out["judge_models"] = dict(self.models)
        out["tokens"] = {"prompt": self.prompt_tokens, "completion": self.completion_tokens}
        cost = estimate_cost(self.prompt_tokens, self.completion_tokens, prices)
        out["estimated_cost_usd"] = None if cost is None else round(cost, 6)
        out["by_slice"] = {name: s.result() for name, s in sorted(self.slices.items())}
        return out


def summarise(
    records: Iterable[GradedRecord], rubric: Rubric, prices: tuple[float, float] | None = None
) -> dict[str, Any]:
    """The summary of DESIGN.md for any records (a file's, a request's, the Python API's):
    the one way a summary is built."""
    builder = SummaryBuilder(rubric)
    for record in records:
        builder.add(record)
    return builder.result(prices)
