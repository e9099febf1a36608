"""`run_in_order`, the grader's scheduler: results in input order, at most `concurrency`
jobs running, a bounded window ahead of a slow job, a failure stops the run and cancels
what is pending, and no per-release walk over waiting jobs (issue 22: asyncio's Semaphore
walked every woken waiter on each release, quadratic in a burst of replies)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from judge.engine.grader import run_in_order

Job = Callable[[], Awaitable[int]]


class Probe:
    """Jobs that record how many run at once and how many have started."""

    def __init__(self) -> None:
        self.running = self.peak = self.started = 0
        self.cancelled = 0

    def job(self, value: int, gate: asyncio.Event | None = None, fail: bool = False) -> Job:
        async def run() -> int:
            self.started += 1
            self.running += 1
            self.peak = max(self.peak, self.running)
            try:
                if gate is not None:
                    await gate.wait()
                await asyncio.sleep(0)
                if fail:
                    raise RuntimeError(f"job {value} failed")
                return value
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
            finally:
                self.running -= 1

        return run


async def test_results_in_input_order_with_at_most_concurrency_running() -> None:
    probe = Probe()
    gates = [asyncio.Event() for _ in range(40)]
    jobs = [probe.job(i, gates[i]) for i in range(40)]

    async def release_backwards() -> None:  # the last started finishes first
        while not all(g.is_set() for g in gates):
            started = [g for g in gates[: probe.started] if not g.is_set()]
            if started:
                started[-1].set()
            await asyncio.sleep(0)

    releaser = asyncio.ensure_future(release_backwards())
    got = [value async for value in run_in_order(jobs, concurrency=4)]
    await releaser
    assert got == list(range(40))
    assert probe.peak == 4


async def test_a_slow_first_job_holds_no_more_than_the_window() -> None:
    probe = Probe()
    head = asyncio.Event()
    jobs = [probe.job(0, head)] + [probe.job(i) for i in range(1, 500)]
    results = run_in_order(jobs, concurrency=2)
    first = asyncio.ensure_future(results.__anext__())
    for _ in range(5000):  # loop turns enough for every job the window lets start
        await asyncio.sleep(0)
    assert probe.started == 64  # max(4 x 2, 64): the window, the head included
    head.set()
    assert await first == 0
    assert [value async for value in results] == list(range(1, 500))


async def test_a_failure_stops_the_run_and_cancels_the_pending_jobs() -> None:
    probe = Probe()
    never = asyncio.Event()
    jobs = [probe.job(0, fail=True)] + [probe.job(i, never) for i in range(1, 10)]
    with pytest.raises(RuntimeError, match="job 0 failed"):
        _ = [value async for value in run_in_order(jobs, concurrency=3)]
    # nothing beyond the first round and a freed slot started; every started job but the
    # failed one was cancelled, none is left running
    assert probe.started <= 4 and probe.cancelled == probe.started - 1 and probe.running == 0


async def test_a_burst_of_replies_costs_no_walk_over_the_waiting_jobs() -> None:
    """A round of 512 jobs finishing at once, 4,096 jobs in all: before, every release walked
    the waiters woken but not yet resumed (Future.done about 430,000 times); now none
    wait, so the count of `done` calls grows with the jobs, not their square."""
    calls = 0
    real_done = asyncio.Future.done

    async def job(value: int) -> int:
        await asyncio.sleep(0.001)
        return value

    jobs = [lambda v=v: job(v) for v in range(4096)]
    loop = asyncio.get_running_loop()

    def done_counter(future: asyncio.Future[int]) -> bool:
        nonlocal calls
        calls += 1
        return real_done(future)

    # count the scheduler's own checks through a Future subclass it cannot tell apart
    class Counted(asyncio.Future):  # type: ignore[type-arg]
        def done(self) -> bool:
            return done_counter(self)

    original = loop.create_future
    loop.create_future = lambda: Counted(loop=loop)  # type: ignore[method-assign]
    try:
        got = [value async for value in run_in_order(jobs, concurrency=512)]
    finally:
        loop.create_future = original  # type: ignore[method-assign]
    assert got == list(range(4096))
    assert calls < 20 * 4096
