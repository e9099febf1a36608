"""Prometheus metrics of what was graded, for `/metrics` on `judge serve` and `judge watch`.

Each `GradingMetrics` has a registry of its own (not prometheus-client's global one), so
two services in one process, or a test after another, never share or clash over counters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from judge.engine.grader import Grader
from judge.kinds import get_kind
from judge.schemas import Case, GradedRecord

__all__ = ["CONTENT_TYPE_LATEST", "GradingMetrics", "ObservedGrader", "passed"]

LATENCY_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class GradingMetrics:
    """Cases graded by rubric and status, judge latency, tokens and cost, queue depth, and
    the pass rate by rubric (passed / graded `ok`, a pass being a score at or above the
    rubric kind's threshold)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.cases = Counter(
            "judge_cases_graded",
            "Cases graded, by rubric and status",
            ["rubric", "status"],
            registry=r,
        )
        self.latency = Histogram(
            "judge_latency_seconds",
            "Judge latency per case (cache hits included)",
            ["rubric"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.tokens = Counter(
            "judge_tokens", "Tokens used by the judge", ["rubric", "kind"], registry=r
        )
        self.cost = Counter(
            "judge_cost_usd", "Judge cost in USD (with prices)", ["rubric"], registry=r
        )
        self.queue = Gauge("judge_queue_depth", "Cases waiting to be graded", registry=r)
        self.pass_rate = Gauge(
            "judge_pass_rate", "Passed / graded ok, by rubric", ["rubric"], registry=r
        )
        self._tally: dict[str, tuple[int, int]] = {}

    def observe(
        self, record: GradedRecord, *, passed: bool | None = None, usd: float = 0.0
    ) -> None:
        """Count one record; `passed` (None: not decided, as for a failed case) feeds the
        pass rate."""
        rubric = record.rubric
        self.cases.labels(rubric, record.status).inc()
        self.latency.labels(rubric).observe(max(record.latency_ms, 0.0) / 1000)
        self.tokens.labels(rubric, "prompt").inc(record.usage.prompt_tokens)
        self.tokens.labels(rubric, "completion").inc(record.usage.completion_tokens)
        if usd:
            self.cost.labels(rubric).inc(usd)
        if passed is not None:
            good, total = self._tally.get(rubric, (0, 0))
            good, total = good + int(passed), total + 1
            self._tally[rubric] = (good, total)
            self.pass_rate.labels(rubric).set(good / total)

    def exposition(self) -> bytes:
        """The text format Prometheus scrapes."""
        return generate_latest(self.registry)


def passed(record: GradedRecord, threshold: float) -> bool | None:
    """Whether a record passes (an `ok` score at or above the kind's threshold); None for
    a record that was not graded (a failure, an abstention)."""
    if record.status != "ok" or record.score is None:
        return None
    return record.score >= threshold


class ObservedGrader(Grader):
    """A grader that counts every record it makes in `metrics` (`judge serve`), and hands
    it with its case to `on_record` (the service's OpenTelemetry events); with `settle`,
    each record first goes through it (a served judge's certificate)."""

    def __init__(
        self,
        *args: Any,
        metrics: GradingMetrics,
        on_record: Callable[[GradedRecord, Case], None] | None = None,
        settle: Callable[[GradedRecord], GradedRecord] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(*args, **options)
        self.metrics = metrics
        self.on_record = on_record
        self.settle = settle  # a certificate applied to each record (cascade.settle_one)
        self.threshold = get_kind(self.rubric.kind).threshold(self.rubric)

    async def grade_case(self, case: Case, *, use_cache: bool = True) -> GradedRecord:
        record = await super().grade_case(case, use_cache=use_cache)
        if self.settle is not None:
            record = self.settle(record)
        self.metrics.observe(record, passed=passed(record, self.threshold))
        if self.on_record is not None:
            self.on_record(record, case)
        return record
