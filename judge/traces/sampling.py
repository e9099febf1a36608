"""What `judge watch` decides for each request: sampled or not (a rate, per slice if asked),
within the spend budget or not; and the pass rate per time window, with its interval.

Sampling is a hash of the seed and the span id, not a random draw: a restarted watch makes
the same decision for the same request, so it neither grades twice nor skips one it sampled.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from judge.errors import UsageError
from judge.schemas import Case

__all__ = ["Budget", "Sampling", "Spend", "wilson_interval", "window_rows"]


@dataclass(frozen=True)
class Sampling:
    """`rate` of requests sampled (0..1); `slice_rates` gives a slice its own rate (a
    request with several named slices takes the highest); `seed` picks which ones."""

    rate: float = 1.0
    slice_rates: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0

    def __post_init__(self) -> None:
        for name, rate in {"rate": self.rate, **self.slice_rates}.items():
            if not 0.0 <= rate <= 1.0:
                raise UsageError(f"sample rate of {name!r} must be in 0..1, got {rate}")

    def rate_of(self, case: Case) -> float:
        named = [self.slice_rates[s] for s in case.slices if s in self.slice_rates]
        return max(named) if named else self.rate

    def sampled(self, case: Case) -> bool:
        digest = hashlib.sha256(f"{self.seed}:{case.id}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        return draw < self.rate_of(case)


@dataclass(frozen=True)
class Budget:
    """Spend limits per UTC hour and per UTC day: in USD (needs prices) and in cases."""

    usd_per_hour: float | None = None
    usd_per_day: float | None = None
    cases_per_hour: int | None = None
    cases_per_day: int | None = None

    def spent(self, spend: Spend) -> str | None:
        """Which limit is reached ("2.00 USD this hour (limit 2.00)"), or None."""
        checks = [
            (spend.hour_usd, self.usd_per_hour, "USD this hour", ".2f"),
            (spend.day_usd, self.usd_per_day, "USD today", ".2f"),
            (spend.hour_cases, self.cases_per_hour, "cases this hour", "d"),
            (spend.day_cases, self.cases_per_day, "cases today", "d"),
        ]
        for used, limit, what, form in checks:
            if limit is not None and used >= limit:
                return f"{format(used, form)} {what} (limit {format(limit, form)})"
        return None


@dataclass
class Spend:
    """What was spent in the current UTC hour and day (reset when they turn). Windows only
    move forward: a clock stepped back (NTP, a VM restored) finds the window it left
    still spent, never a fresh one."""

    hour: str = ""
    day: str = ""
    hour_usd: float = 0.0
    day_usd: float = 0.0
    hour_cases: int = 0
    day_cases: int = 0

    def roll(self, now: datetime) -> None:
        hour, day = now.strftime("%Y-%m-%dT%H"), now.strftime("%Y-%m-%d")
        # ISO stamps of one width order as the times do: a later window only
        if hour > self.hour:
            self.hour, self.hour_usd, self.hour_cases = hour, 0.0, 0
        if day > self.day:
            self.day, self.day_usd, self.day_cases = day, 0.0, 0

    def add(self, usd: float) -> None:
        self.hour_usd += usd
        self.day_usd += usd
        self.hour_cases += 1
        self.day_cases += 1

    def until(self, budget: Budget, now: datetime) -> str:
        """When spending may start again: the next hour, or the next day."""
        day_limited = (budget.usd_per_day is not None and self.day_usd >= budget.usd_per_day) or (
            budget.cases_per_day is not None and self.day_cases >= budget.cases_per_day
        )
        start = now.replace(minute=0, second=0, microsecond=0)
        if day_limited:
            return (start.replace(hour=0) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%MZ")
        return (start + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%MZ")


def wilson_interval(passed: int, n: int, z: float = 1.959964) -> tuple[float, float] | None:
    """The Wilson score interval of a pass rate (95% by default); None for n = 0.

    centre = (p + z²/2n) / (1 + z²/n), half-width = z √(p(1-p)/n + z²/4n²) / (1 + z²/n).
    Unlike p ± z√(p(1-p)/n) it stays in [0, 1] and is not empty at p = 0 or 1 (Wilson 1927).
    """
    if n == 0:
        return None
    p = passed / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def window_rows(windows: Mapping[str, Mapping[str, int]]) -> list[dict[str, Any]]:
    """One row per window, oldest first: graded, passed, the pass rate and its interval,
    the baseline (the pooled pass rate of every earlier window) and `drop`: true when the
    baseline lies above the window's interval."""
    rows = []
    before_passed = before_graded = 0
    for start in sorted(windows):
        graded, passed = windows[start]["graded"], windows[start]["passed"]
        interval = wilson_interval(passed, graded)
        baseline = before_passed / before_graded if before_graded else None
        rows.append(
            {
                "window_start": start,
                "graded": graded,
                "passed": passed,
                "pass_rate": passed / graded if graded else None,
                "interval95": list(interval) if interval else None,
                "baseline": baseline,
                "drop": bool(interval and baseline is not None and baseline > interval[1]),
            }
        )
        before_passed += passed
        before_graded += graded
    return rows
