"""`judge watch`: grade live traffic. Follow a trace source, sample, grade within a spend
budget, write records and window summaries, push verdicts out; resumable.

The crash-safety invariant: the records file (DIR/RUBRIC.jsonl, whole flushed lines) is
the truth, and the log, of what was graded; the checkpoint (DIR/checkpoint.json, replaced
atomically, judge.traces.checkpoint) says where the source was read up to, what was spent
and how long the records file was then. It is saved when a poll's requests are all
decided; the source position moves only then. Killed anywhere, a restart reads the source
again from the saved position: a request already in the records file is not graded again
(the spend of records past the saved length is counted on start), a sampled one without a
record is graded, and the sampling decision is a hash (judge.traces.sampling), so it is
the same decision. One watch a folder: DIR/.watch.lock is held while it runs.

Nothing a source or a file holds ends a watch: a bad line, a looping trace, a damaged
record is skipped, counted and said; Phoenix down is said, and the next poll tries again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.engine.atomic import replace_text
from judge.engine.grader import Grader
from judge.engine.metrics import GradingMetrics, passed
from judge.engine.records import RecordWriter, scan_records
from judge.errors import InputError
from judge.kinds import get_kind
from judge.schemas import Case, GradedRecord
from judge.traces.checkpoint import WatchState, folder_lock, private_file
from judge.traces.otel import EvaluationExporter
from judge.traces.phoenix import PhoenixClient, PhoenixError
from judge.traces.sampling import Budget, Sampling, window_rows
from judge.traces.sources import BadPosition, Poll, TraceSource

__all__ = ["WatchOptions", "WatchState", "watch"]

CHECKPOINT = "checkpoint.json"
WINDOWS = "windows.jsonl"
SAID_A_POLL = 5  # skipped lines said one by one a poll; past that, a count


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
    # each graded case before its record is written (the label queue), and after each poll
    on_graded: Callable[[Case, GradedRecord], None] | None = None
    # a certificate applied to each record as it is graded (judge.engine.cascade.settle_one)
    settle: Callable[[GradedRecord], GradedRecord] | None = None
    on_poll: Callable[[], None] | None = None
    # `--references --join-on`: each sampled case with what it lacks from its reference
    join: Callable[[Case], Case] | None = None


async def watch(
    source: TraceSource, grader: Grader, folder: Path, options: WatchOptions
) -> WatchState:
    """Run the watch until `once`/`max_polls` says stop (or forever); the final state."""
    with folder_lock(folder):  # makes the folder, 0700
        run = _Run(source, grader, folder, options)
        polls = 0
        while True:
            await run.poll_once()
            if options.on_poll is not None:
                options.on_poll()
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
        private_file(self.records)  # case text: 0600, as the checkpoint is
        kind = get_kind(grader.rubric.kind)
        self.threshold = kind.threshold(grader.rubric)
        self.said_budget = ""
        self.graded: set[str] = set()  # every id the records file holds
        self._recover()

    def _recover(self) -> None:
        """Read the records file once: its ids, and the spend of the records a killed run
        wrote after its last checkpoint (past `records_size`; with no size saved, those
        the checkpoint does not name). A line that is not a record is skipped and said."""
        state, size, bad = self.state, self.state.records_size, 0
        now = self.options.clock()
        for offset, data in _scan(self.records):
            case_id = data["id"]
            counted = state.first_form or state.recent
            missed = case_id not in counted if size is None else offset >= size
            if missed and case_id not in self.graded:
                try:
                    record = GradedRecord.model_validate(data)
                except ValidationError:  # kept as graded: never a second line for its id
                    bad += 1
                    self.graded.add(case_id)
                    continue
                state.spend.roll(now)
                self._account(record, now)
                state.remember(case_id)
            self.graded.add(case_id)
        if bad:
            self.state.count("bad_record", bad)
            self.options.say(f"watch: {self.records}: {bad} lines that are not records skipped")

    async def poll_once(self) -> None:
        now = self.options.clock()
        found = self._poll(now)
        if found is None:
            return
        self._say_skipped(found.skipped)
        for missing in found.missing:
            if missing.span_id not in self.state.recent:
                self.state.remember(missing.span_id)
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
        self.state.records_size = _size(self.records)
        self.state.save(self.checkpoint)
        replace_text(
            self.windows_path,
            "".join(json.dumps(r) + "\n" for r in window_rows(self.state.windows)),
        )
        if self.options.exporter is not None:
            self.options.exporter.flush()

    def _poll(self, now: datetime) -> Poll | None:
        """The source's news; None when Phoenix failed this time (said, tried again)."""
        try:
            return self.source.poll(self.state.position, now)
        except PhoenixError as exc:
            self.state.count("poll_failed")
            self.options.say(f"watch: {exc}; trying again at the next poll")
            return None
        except BadPosition as exc:
            raise InputError(
                str(self.checkpoint),
                [(None, None, f"not a watch checkpoint ({exc}); move it aside to start over")],
            ) from None

    def _say_skipped(self, skipped: list[str]) -> None:
        if not skipped:
            return
        self.state.count("skipped", len(skipped))
        for line in skipped[:SAID_A_POLL]:
            self.options.say(f"watch: {line}")
        if len(skipped) > SAID_A_POLL:
            self.options.say(f"watch: ... and {len(skipped) - SAID_A_POLL} more skipped")

    async def _decide(self, case: Case, writer: RecordWriter) -> None:
        state, options = self.state, self.options
        if case.id in state.recent or case.id in self.graded:
            return  # decided already: before a kill, or a span exported twice
        now = options.clock()
        state.spend.roll(now)
        state.remember(case.id)
        if not options.sampling.sampled(case):
            state.count("not_sampled")
            return
        spent = options.budget.spent(state.spend)
        if spent is not None:
            state.count("over_budget")
            self._say_budget(spent, now)
            return
        if options.join is not None:
            case = options.join(case)
            if "reference_key" not in case.metadata:
                state.count("no_reference")
        record = await self.grader.grade_case(case)
        if options.settle is not None:
            record = options.settle(record)
        if options.on_graded is not None:
            options.on_graded(case, record)
        writer.write(record)
        writer.flush()  # the records file is the log: graded is final once this returns
        self.graded.add(case.id)
        self._account(record, now)
        self._send(record, case)

    def _account(self, record: GradedRecord, now: datetime) -> None:
        usd = self._usd(record)
        self.state.spend.add(usd)
        # only a scored record is "graded": ten abstentions are not ten grades
        self.state.count("graded" if record.status == "ok" else record.status)
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


def _scan(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    return scan_records(path) if path.exists() else iter(())


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _window_start(now: datetime, seconds: int) -> str:
    stamp = int(now.timestamp()) // seconds * seconds
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
