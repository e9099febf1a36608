"""`--concurrency auto`: how many requests to keep in flight, learnt from the endpoint.

AIMD, as TCP does it (Jacobson 1988; Chiu & Jain 1989, "Analysis of the increase and
decrease algorithms for congestion avoidance"): the limit starts at `start`, doubles each
round trip while nothing is refused and latency holds (slow start), then grows by one
request per round trip (additive increase: +1/limit per success); a 429 or 503 halves it
(multiplicative decrease), once per round trip, however many requests were refused in it.
"Latency holds" means a success took at most `latency_slack` x the fastest latency seen:
a slower endpoint is queueing, so the limit stops growing before it refuses.

Beside the window, three rules pace when a request may start:

- Retry-After is honoured globally: a refusal that says "wait 2 s" holds every request,
  not just the one refused (`hold_until`).
- The provider's rate-limit headers (`x-ratelimit-remaining-requests` / `-tokens` with
  `x-ratelimit-reset-requests` / `-tokens`, as OpenAI sends them: "1s", "6m0s", "20ms")
  spread what remains over the time to the reset, once fewer remain than are in flight;
  none remaining holds until the reset.
- `rpm` / `tpm` caps, for providers that send no headers: token buckets of a minute's
  requests and tokens (a request's tokens are estimated from its body before it is sent).

The controller's arithmetic is synchronous and takes the clock as an argument
(`Pacing.ready_at`, `started`, `succeeded`, `refused`), so its logic is tested without
timing; `Pacer` is the asyncio face the chat client uses.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = ["Bucket", "Pacer", "Pacing", "PacingStats", "parse_reset"]

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_reset(value: str | None) -> float | None:
    """Seconds from a reset header: "1s", "6m0s", "20ms", "1h2m3.5s", or a bare number."""
    if not value:
        return None
    text = value.strip().lower()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(number) * _UNIT[unit] for number, unit in parts)


def _int(value: str | None) -> int | None:
    try:
        return int(float(value)) if value is not None else None
    except ValueError:
        return None


@dataclass
class Bucket:
    """A token bucket: `capacity` tokens, refilled at `rate` a second; `take` spends, and
    `ready_at` says when `cost` tokens will be there (the caller waits until then)."""

    capacity: float
    rate: float
    level: float = math.nan
    stamp: float = 0.0

    def _refill(self, now: float) -> None:
        if math.isnan(self.level):
            self.level, self.stamp = self.capacity, now
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def ready_at(self, now: float, cost: float = 1.0) -> float:
        self._refill(now)
        cost = min(cost, self.capacity)  # a request larger than the bucket waits for a full one
        return now if self.level >= cost else now + (cost - self.level) / self.rate

    def take(self, now: float, cost: float = 1.0) -> None:
        self._refill(now)
        self.level -= min(cost, self.capacity)


@dataclass
class PacingStats:
    """What the summary says: the limit reached and the refusals met."""

    peak_limit: int = 0
    final_limit: int = 0
    refused: int = 0  # 429s and 503s
    requests: int = 0


@dataclass
class Pacing:
    """The AIMD window and the pacing rules of the module docstring, clock passed in."""

    start: int = 16
    ceiling: int = 1024
    adaptive: bool = True  # False: a fixed window (`--concurrency N` with --rpm/--tpm)
    latency_slack: float = 2.0
    rpm: int | None = None
    tpm: int | None = None
    limit: float = 0.0
    in_flight: int = 0
    slow_start: bool = True
    hold_until: float = 0.0
    fastest: float = math.inf
    last_decrease: float = -math.inf
    stats: PacingStats = field(default_factory=PacingStats)
    _spacing: float = 0.0
    _used_at: float = -math.inf
    _due: float = -math.inf  # when the next paced start is due (GCRA's theoretical time)
    _requests: Bucket | None = None
    _tokens: Bucket | None = None

    def __post_init__(self) -> None:
        self.limit = float(min(max(self.start, 1), self.ceiling))
        self.stats.peak_limit = self.stats.final_limit = int(self.limit)
        if self.rpm:
            self._requests = Bucket(capacity=max(self.rpm / 60.0, 1.0), rate=self.rpm / 60.0)
        if self.tpm:
            self._tokens = Bucket(capacity=self.tpm / 60.0, rate=self.tpm / 60.0)

    @property
    def window(self) -> int:
        return max(1, int(self.limit))

    def ready_at(self, now: float, tokens: float = 0.0) -> float | None:
        """When a request of `tokens` may start: a time (now or later) if the window has
        room, None when it is full (wait for a request to finish)."""
        if self.in_flight >= self.window:
            return None
        # one interval of slack: a start the event loop made late does not delay the next
        # (the virtual scheduling of ITU-T I.371's GCRA), so the rate holds on average
        when = max(now, self.hold_until)
        if self._spacing > 0:
            when = max(when, self._due - self._spacing)
        if self._requests is not None:
            when = max(when, self._requests.ready_at(now))
        if self._tokens is not None and tokens:
            when = max(when, self._tokens.ready_at(now, tokens))
        return when

    def started(self, now: float, tokens: float = 0.0) -> None:
        self.in_flight += 1
        if self.in_flight >= self.window / 2:
            self._used_at = now  # the window is in use (at least half full)
        self.stats.requests += 1
        self._due = max(self._due, now) + self._spacing
        if self._requests is not None:
            self._requests.take(now)
        if self._tokens is not None and tokens:
            self._tokens.take(now, tokens)

    def succeeded(
        self, now: float, latency: float, headers: Mapping[str, str] | None = None
    ) -> None:
        """A reply that was not refused: grow the window while latency holds, if the
        window was in use (at least half full) while this request was out: an idle
        window proves nothing (RFC 7661's rule for TCP)."""
        busy = self._used_at >= now - latency
        self.in_flight = max(0, self.in_flight - 1)
        self.fastest = min(self.fastest, latency)
        self._read_headers(now, headers)
        if not self.adaptive:
            return
        if latency > self.fastest * self.latency_slack:
            self.slow_start = False  # latency grew: the endpoint queues; grow gently
        elif busy:
            # slow start: +1 per success doubles the window each round trip; after the
            # first refusal, +1/limit per success adds one per round trip
            self.limit += 1.0 if self.slow_start else 1.0 / self.limit
            self.limit = min(self.limit, float(self.ceiling))
        self._note()

    def refused(
        self,
        now: float,
        sent_at: float,
        retry_after: float | None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """A 429 or 503 for a request sent at `sent_at`: halve the window, once for all the
        requests sent before the last decrease, and hold everyone for Retry-After."""
        self.in_flight = max(0, self.in_flight - 1)
        self.stats.refused += 1
        if retry_after is not None:
            self.hold_until = max(self.hold_until, now + retry_after)
        self._read_headers(now, headers)
        if not self.adaptive:
            return
        self.slow_start = False
        if sent_at >= self.last_decrease:
            self.limit = max(1.0, self.limit / 2)
            self.last_decrease = now
        self._note()

    def failed(self) -> None:
        """Any other end (an error that says nothing about load): free the slot."""
        self.in_flight = max(0, self.in_flight - 1)

    def _read_headers(self, now: float, headers: Mapping[str, str] | None) -> None:
        if not headers:
            return
        self._spacing = 0.0
        for kind in ("requests", "tokens"):
            remaining = _int(headers.get(f"x-ratelimit-remaining-{kind}"))
            reset = parse_reset(headers.get(f"x-ratelimit-reset-{kind}"))
            if remaining is None or reset is None:
                continue
            limit = _int(headers.get(f"x-ratelimit-limit-{kind}"))
            # a bucket refills linearly: what is spent comes back over `reset` seconds
            spent = (limit - remaining) if limit and limit > remaining else None
            if remaining <= 0:
                self.hold_until = max(self.hold_until, now + (reset / spent if spent else reset))
            elif kind == "requests" and remaining < self.window:
                # fewer left than we would send: start no faster than they come back
                gap = reset / spent if spent else reset / remaining
                self._spacing = max(self._spacing, gap)

    def _note(self) -> None:
        self.stats.final_limit = self.window
        self.stats.peak_limit = max(self.stats.peak_limit, self.window)


class Pacer:
    """The asyncio face of `Pacing`: `async with pacer.slot(tokens) as slot:` waits for
    room, then `slot.refused(retry_after, headers)` or `slot.succeeded(headers)` says how
    it went (a slot left without either counts as `failed`). Waiters queue in order; only
    the head is looked at, when a request ends or the head's start time comes (one timer),
    so a thousand waiting cases cost nothing while they wait."""

    def __init__(self, pacing: Pacing, clock: Callable[[], float] = time.monotonic) -> None:
        self.pacing = pacing
        self.clock = clock
        self._queue: deque[tuple[asyncio.Future[float], float]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf

    @property
    def stats(self) -> PacingStats:
        return self.pacing.stats

    def slot(self, tokens: float = 0.0) -> Slot:
        return Slot(self, tokens)

    async def _acquire(self, tokens: float) -> float:
        started: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._queue.append((started, tokens))
        self._start_ready()
        try:
            return await started
        except asyncio.CancelledError:
            if started.done() and not started.cancelled():  # started, then cancelled
                self._release(lambda now: self.pacing.failed())
            raise

    def _release(self, report: Callable[[float], None]) -> None:
        report(self.clock())
        self._start_ready()

    def _start_ready(self) -> None:
        """Start the waiters at the head whose time has come; a timer for the next one."""
        while self._queue:
            started, tokens = self._queue[0]
            if started.done():  # cancelled while waiting
                self._queue.popleft()
                continue
            now = self.clock()
            when = self.pacing.ready_at(now, tokens)
            if when is None:
                return  # the window is full: the next release looks again
            if when > now:
                self._wake_at(when)
                return
            self._queue.popleft()
            self.pacing.started(now, tokens)
            started.set_result(now)

    def _wake_at(self, when: float) -> None:
        if self._timer is not None and self._timer_at <= when:
            return
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        delay = max(0.0, when - self.clock())
        self._timer_at = when
        self._timer = loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer, self._timer_at = None, math.inf
        self._start_ready()


class Slot:
    def __init__(self, pacer: Pacer, tokens: float) -> None:
        self._pacer, self._tokens = pacer, tokens
        self._sent_at = 0.0
        self._outcome: Callable[[float], None] | None = None

    def succeeded(self, headers: Mapping[str, str] | None = None) -> None:
        pacing, sent = self._pacer.pacing, self._sent_at
        self._outcome = lambda now: pacing.succeeded(now, now - sent, headers)

    def refused(self, retry_after: float | None, headers: Mapping[str, str] | None = None) -> None:
        pacing, sent = self._pacer.pacing, self._sent_at
        self._outcome = lambda now: pacing.refused(now, sent, retry_after, headers)

    async def __aenter__(self) -> Slot:
        self._sent_at = await self._pacer._acquire(self._tokens)
        return self

    async def __aexit__(self, *exc: object) -> None:
        pacing = self._pacer.pacing
        self._pacer._release(self._outcome or (lambda now: pacing.failed()))
