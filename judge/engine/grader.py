"""Runs one rubric over many cases: cache, bounded concurrency, input order, isolation.

Per-case failures become records (`api_error`, `parse_error`); only a fatal judge error
(bad key, unknown model) stops the run, and then nothing more is sent. A rubric whose kind
needs no judge (`Kind.needs_judge` False: retrieval metrics) is computed from the case
alone, whatever backend is configured: no request, no cache, provenance `computed`.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from functools import partial
from typing import Any, TypeVar

from pydantic import ValidationError

from judge.engine.cache import VerdictCache, cache_key, inputs_sha256
from judge.engine.identity import identity_of
from judge.engine.identity import judge_id as hash_identity
from judge.engine.outcome import Backend, Outcome
from judge.engine.rules import COMPUTED_IDENTITY, computed_outcome
from judge.errors import ApiError
from judge.lexical import Budget
from judge.rubric import Rubric
from judge.schemas import Case, GradedRecord, utc_now

log = logging.getLogger(__name__)
T = TypeVar("T")


class Grader:
    """Grades cases with one backend and one rubric."""

    def __init__(
        self,
        backend: Backend,
        rubric: Rubric,
        *,
        cache: VerdictCache | None = None,
        concurrency: int = 16,
    ) -> None:
        self.backend = backend
        self.rubric = rubric
        self.computed = not rubric.behaviour.needs_judge
        cached = backend.cache_identity() is not None and not self.computed
        self.cache = cache if cached else None
        self.concurrency = concurrency
        self.identity = dict(COMPUTED_IDENTITY) if self.computed else identity_of(backend)
        self.judge_id = hash_identity(self.identity)
        self._fatal: ApiError | None = None

    async def grade_case(self, case: Case, *, use_cache: bool = True) -> GradedRecord:
        """One case -> one record; served from the cache when the same question was judged.
        `use_cache=False` neither reads nor writes it (fresh samples, `--no-cache`)."""
        if self.computed:
            if self.rubric.behaviour.computed_off_loop:
                return await self.computed_off_loop(case)
            return self.computed_record(case)
        if self._fatal is not None:
            raise self._fatal
        key = None
        identity = self.backend.cache_identity()
        if use_cache and self.cache is not None and identity is not None:
            key = cache_key(self.rubric, identity, case)
            hit = _from_cache(self.cache.get(key), self.rubric, case, self.judge_id)
            if hit is not None:
                return hit
        try:
            outcome = await self.backend.evaluate(self.rubric, case)
        except ApiError as exc:
            if exc.fatal:
                self._fatal = exc
            raise
        record = build_record(self.rubric, case, outcome, judge_id=self.judge_id)
        if key is not None and self.cache is not None and record.status in ("ok", "abstained"):
            self.cache.set(key, _cacheable(record))
        return record

    def computed_record(self, case: Case, budget: Budget | None = None) -> GradedRecord:
        """The record of a rubric whose kind needs no judge (`computed`), in line: no
        request, no cache, nothing to await."""
        outcome = computed_outcome(self.rubric, case, budget=budget)
        return build_record(self.rubric, case, outcome, judge_id=self.judge_id)

    async def computed_off_loop(self, case: Case) -> GradedRecord:
        """`computed_record` in a worker thread (`Kind.computed_off_loop`): the event loop
        keeps answering, and a caller that stops waiting (a request's timeout) stops the
        work at its next step."""
        budget = Budget()
        try:
            return await asyncio.to_thread(self.computed_record, case, budget)
        finally:
            budget.cancel()

    async def computed_many_off_loop(self, cases: list[Case]) -> list[GradedRecord]:
        """`computed_off_loop` for several cases in one worker thread, in order."""
        budget = Budget()

        def work() -> list[GradedRecord]:
            return [self.computed_record(case, budget) for case in cases]

        try:
            return await asyncio.to_thread(work)
        finally:
            budget.cancel()

    async def grade_stream(
        self,
        cases: Iterable[Case],
        *,
        use_cache: bool = True,
    ) -> AsyncIterator[GradedRecord]:
        """Records in input order, at most `concurrency` cases in flight (`run_in_order`)."""
        jobs = (partial(self.grade_case, case, use_cache=use_cache) for case in cases)
        async for record in run_in_order(jobs, concurrency=self.concurrency):
            yield record

    async def grade_many(
        self, cases: Iterable[Case], *, use_cache: bool = True
    ) -> list[GradedRecord]:
        return [record async for record in self.grade_stream(cases, use_cache=use_cache)]


async def run_in_order(
    jobs: Iterable[Callable[[], Awaitable[T]]], *, concurrency: int
) -> AsyncIterator[T]:
    """Each job's result, in the order of `jobs`: at most `concurrency` jobs run at once
    (one budget for all of them, whatever grader each job belongs to) and a bounded
    window of finished ones waits for a slower predecessor, so memory does not grow with
    the number of jobs. An exception in a job stops the run; the jobs still pending are
    cancelled.

    A job starts only when a slot is free, rather than every job of the window waiting on
    one semaphore: asyncio's Semaphore walks its waiters on each release (the futures woken
    but not yet resumed), which is quadratic in a burst of replies, ~0.1 ms of CPU a case
    at 512 in flight (benchmarks/CLIENT.md)."""
    window = max(4 * concurrency, 64)
    pending: deque[asyncio.Future[T]] = deque()  # started, in input order
    running = 0
    freed = asyncio.Event()

    def finished(_: asyncio.Future[T]) -> None:
        nonlocal running
        running -= 1
        freed.set()

    try:
        for job in jobs:
            while running >= concurrency:
                if pending[0].done():  # a finished head frees room without a wait
                    yield pending.popleft().result()
                    continue
                freed.clear()
                await freed.wait()
            started = asyncio.ensure_future(job())
            running += 1
            started.add_done_callback(finished)
            pending.append(started)
            while pending and (len(pending) >= window or pending[0].done()):
                yield await pending.popleft()
        while pending:
            yield await pending.popleft()
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


def build_record(
    rubric: Rubric, case: Case, outcome: Outcome, *, judge_id: str | None = None
) -> GradedRecord:
    """The graded record for one outcome; a failure never gets a score."""
    score = label = None
    verdict = None
    if outcome.verdict is not None and outcome.status in ("ok", "abstained"):
        scored = rubric.behaviour.score(rubric, outcome.verdict)
        score, label = scored.score, scored.label
        verdict = outcome.verdict.model_dump(mode="json")
    return GradedRecord(
        id=case.id,
        rubric=rubric.id,
        rubric_version=rubric.version,
        rubric_sha256=rubric.sha256,
        judge=outcome.judge,
        judge_id=judge_id,
        status=outcome.status,
        verdict=verdict,
        score=score,
        label=label,
        reference_key=reference_key_of(case),
        error=outcome.error,
        raw=outcome.raw if outcome.status == "parse_error" else None,
        cached=False,
        usage=outcome.usage,
        latency_ms=round(outcome.latency_ms, 3),
        slices=case.slices,
        confidence=outcome.confidence if verdict is not None else None,
        confidence_source=outcome.confidence_source if verdict is not None else None,
        graded_at=utc_now(),
        case_time=case.time,
        inputs_sha256=inputs_sha256(rubric, case),
    )


def _from_cache(
    entry: dict[str, Any] | None, rubric: Rubric, case: Case, judge_id: str
) -> GradedRecord | None:
    """The cached record for `case`, or None (a miss) when the entry is not a valid record
    of a verdict by this rubric: the cache folder may be shared, what it holds is only data."""
    if entry is None or entry.get("status") not in ("ok", "abstained"):
        return None
    if [entry.get(k) for k in ("rubric", "rubric_version", "rubric_sha256")] != [
        rubric.id,
        rubric.version,
        rubric.sha256,
    ]:
        return None
    fields = {**entry, "judge_id": judge_id, "id": case.id, "slices": case.slices}
    fields["reference_key"] = reference_key_of(case)  # this case's join, not the cached one's
    fields |= {"graded_at": utc_now(), "case_time": case.time}  # this run's, not the cached
    fields["inputs_sha256"] = inputs_sha256(rubric, case)
    try:
        return GradedRecord.model_validate({**fields, "cached": True})
    except ValidationError:
        log.debug("a cache entry for %s is not a valid record; graded again", case.id)
        return None


_CACHEABLE_EXCLUDE = {
    *("id", "slices", "cached", "usage", "latency_ms"),
    *("reference_key", "graded_at", "case_time"),
}


def reference_key_of(case: Case) -> str | None:
    """The key `--references --join-on` joined this case by (judge.app.references), if any."""
    key = case.metadata.get("reference_key")
    return key if isinstance(key, str) else None


def _cacheable(record: GradedRecord) -> dict[str, Any]:
    # a cache hit costs nothing now: it reports zero usage and latency (the defaults)
    return record.model_dump(mode="json", exclude=_CACHEABLE_EXCLUDE)
