"""`judge watch`: grade live traffic. Follow a trace source, sample, grade within a spend
budget, write records and window summaries, push verdicts out; resumable.

The crash-safety invariant: the records file (DIR/RUBRIC.jsonl, whole flushed lines) is
the truth about what was graded; the checkpoint (DIR/checkpoint.json, replaced atomically)
says what was decided and where the source was read up to. The checkpoint is saved after
every graded record and when a poll's requests are all decided; the source position moves
only then. Killed anywhere, a restart reads the source again from the saved position: a
request already in the records file is not graded again (its spend is counted from its
record if the checkpoint missed it), a sampled one without a record is graded, and the
sampling decision is a hash (judge.traces.sampling), so it is the same decision.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judge.engine.atomic import replace_text
from judge.engine.grader import Grader
from judge.engine.metrics import GradingMetrics, passed
from judge.engine.records import RecordWriter, scan_records
from judge.errors import InputError
from judge.kinds import get_kind
from judge.schemas import Case, GradedRecord
from judge.traces.otel import EvaluationExporter
from judge.traces.phoenix import PhoenixClient, PhoenixError
from judge.traces.sampling import Budget, Sampling, Spend, window_rows
from judge.traces.sources import TraceSource

__all__ = ["WatchOptions", "WatchState", "watch"]

CHECKPOINT = "checkpoint.json"
WINDOWS = "windows.jsonl"


@dataclass
class WatchOptions:
    """How to watch: sampling, budget, window length, polling, and where verdicts go."""

    sampling: Sampling = field(default_factory=Sampling)
    budget: Budget = field(default_factory=Budget)
    prices: tuple[float, float] | None = None
    window_seconds: int = 3600
    poll_seconds: float = 10.0
    once: bool = False  # one poll, then stop (a cron job, a test)
    max_polls: int | None = None
    exporter: EvaluationExporter | None = None
    phoenix: PhoenixClient | None = None
    metrics: GradingMetrics | None = None
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    say: Callable[[str], None] = print


@dataclass
class WatchState:
    """The checkpoint: source position, decisions, spend, window tallies, counts."""

    position: dict[str, Any] = field(default_factory=dict)
    decided: dict[str, str] = field(default_factory=dict)  # case id -> graded|not_sampled|...
    spend: Spend = field(default_factory=Spend)
    windows: dict[str, dict[str, int]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> WatchState:
        if not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                position=data["position"],
                decided=data["decided"],
                spend=Spend(**data["spend"]),
                windows=data["windows"],
                counts=data["counts"],
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(str(path), [(None, None, f"not a watch checkpoint ({exc})")]) from None

    def save(self, path: Path) -> None:
        data = {
            "position": self.position,
            "decided": self.decided,
            "spend": self.spend.__dict__,
            "windows": self.windows,
            "counts": self.counts,
        }
        replace_text(path, json.dumps(data, sort_keys=True))

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1


async def watch(
    source: TraceSource, grader: Grader, folder: Path, options: WatchOptions
) -> WatchState:
    """Run the watch until `once`/`max_polls` says stop (or forever); the final state."""
    folder.mkdir(parents=True, exist_ok=True)
    run = _Run(source, grader, folder, options)
    polls = 0
    while True:
        await run.poll_once()
        polls += 1
        if options.once or (options.max_polls is not None and polls >= options.max_polls):
            return run.state
        await asyncio.sleep(options.poll_seconds)


class _Run:
    def __init__(
        self, source: TraceSource, grader: Grader, folder: Path, options: WatchOptions
    ) -> None:
        self.source, self.grader, self.options = source, grader, options
        self.checkpoint = folder / CHECKPOINT
        self.windows_path = folder / WINDOWS
        self.records = folder / f"{grader.rubric.id}.jsonl"
        self.state = WatchState.load(self.checkpoint)
        kind = get_kind(grader.rubric.kind)
        self.threshold = kind.threshold(grader.rubric)
        self.said_budget = ""
        self.graded = _graded_records(self.records)  # before this run: read once

    async def poll_once(self) -> None:
        now = self.options.clock()
        found = self.source.poll(self.state.position, now)
        for missing in found.missing:
            if self.state.decided.get(missing.span_id) is None:
                self.state.decided[missing.span_id] = "missing"
                self.state.count("missing")
                self.options.say(f"watch: skipped {missing}")
        metrics = self.options.metrics
        with RecordWriter(self.records) as writer:
            for done, (case, _start) in enumerate(found.cases):
                if metrics is not None:  # this poll's requests not yet decided
                    metrics.queue.set(len(found.cases) - done)
                await self._decide(case, writer)
        if metrics is not None:
            metrics.queue.set(0)
        self.state.position = found.position
        self.state.save(self.checkpoint)
        replace_text(
            self.windows_path,
            "".join(json.dumps(r) + "\n" for r in window_rows(self.state.windows)),
        )
        if self.options.exporter is not None:
            self.options.exporter.flush()

    async def _decide(self, case: Case, writer: RecordWriter) -> None:
        state, options = self.state, self.options
        if case.id in state.decided:
            return
        now = options.clock()
        state.spend.roll(now)
        if case.id in self.graded:  # graded before a kill, the checkpoint not yet saved
            self._account(self.graded[case.id], now)
            state.decided[case.id] = "graded"
            return
        if not options.sampling.sampled(case):
            state.decided[case.id] = "not_sampled"
            state.count("not_sampled")
            return
        spent = options.budget.spent(state.spend)
        if spent is not None:
            state.decided[case.id] = "over_budget"
            state.count("over_budget")
            self._say_budget(spent, now)
            return
        record = await self.grader.grade_case(case)
        writer.write(record)
        writer.flush()
        self._account(record, now)
        state.decided[case.id] = "graded"
        state.save(self.checkpoint)
        self._send(record, case)

    def _account(self, record: GradedRecord, now: datetime) -> None:
        usd = self._usd(record)
        self.state.spend.add(usd)
        self.state.count("graded")
        window = _window_start(now, self.options.window_seconds)
        tally = self.state.windows.setdefault(window, {"graded": 0, "passed": 0})
        good = passed(record, self.threshold)
        if good is not None:
            tally["graded"] += 1
            tally["passed"] += int(good)
        if self.options.metrics is not None:
            self.options.metrics.observe(record, passed=good, usd=usd)

    def _send(self, record: GradedRecord, case: Case) -> None:
        if self.options.exporter is not None:
            self.options.exporter.send(record, case.metadata)
        if self.options.phoenix is not None:
            try:
                self.options.phoenix.annotate([record])
            except PhoenixError as exc:  # Phoenix down: the record is kept, counted
                self.state.count("push_failed")
                self.options.say(f"watch: {exc}")

    def _usd(self, record: GradedRecord) -> float:
        prices = self.options.prices
        if prices is None or record.cached:
            return 0.0
        usage = record.usage
        return (usage.prompt_tokens * prices[0] + usage.completion_tokens * prices[1]) / 1e6

    def _say_budget(self, spent: str, now: datetime) -> None:
        until = self.state.spend.until(self.options.budget, now)
        line = f"watch: budget spent: {spent}; sampling stops until {until}"
        if line != self.said_budget:
            self.said_budget = line
            self.options.say(line)


def _graded_records(path: Path) -> dict[str, GradedRecord]:
    if not path.exists():
        return {}
    return {data["id"]: GradedRecord.model_validate(data) for _, data in scan_records(path)}


def _window_start(now: datetime, seconds: int) -> str:
    stamp = int(now.timestamp()) // seconds * seconds
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
