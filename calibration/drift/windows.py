"""Windows of a labelled stream: by count in file order, or by calendar day, week or month.

A window is a name and the positions of the labelled pairs in it, in stream order. Count
windows are ``1``, ``2``, ... of ``size`` pairs each (the last may be shorter). Time
windows are named by their calendar period in UTC: ``2026-12-05`` (day), ``2026-W49``
(ISO 8601 week, Monday to Sunday), ``2026-12`` (month), in time order; a period with no
labelled pair has no window.

Times are read from ISO 8601 text (``2026-12-05T10:00:00Z``; no zone: UTC) or from numbers
of seconds, milliseconds or nanoseconds since the Unix epoch (told apart by size, as OTLP
spans give nanoseconds).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

__all__ = [
    "MAX_WINDOWS",
    "Period",
    "TooManyWindows",
    "Window",
    "count_windows",
    "parse_time",
    "time_windows",
]

Period = Literal["day", "week", "month"]
# Windows one report holds: each window's figures, its interval and the alarm's scan grow
# with them, and a chart of more is a smear. Past it the cut is refused, saying what fits.
MAX_WINDOWS = 2_000


class TooManyWindows(ValueError):
    """A cut into more windows than the cap (the message names the cap and what fits)."""


@dataclass(frozen=True)
class Window:
    """One window: its name, the first and last time in it (time windows), its positions."""

    name: str
    positions: tuple[int, ...]
    start: str | None = None
    end: str | None = None


def count_windows(n: int, size: int, *, cap: int = MAX_WINDOWS) -> list[Window]:
    """``ceil(n / size)`` windows of ``size`` consecutive pairs, named ``1``, ``2``, ...
    TooManyWindows past ``cap`` of them (counted before any is made)."""
    if size < 1:
        raise ValueError(f"a window holds at least 1 label, got {size}")
    count = -(-n // size)
    if count > cap:
        raise TooManyWindows(
            f"--window {size} cuts {n:,} labels into {count:,} windows, over the cap of "
            f"{cap:,}: use --window {-(-n // cap)} or more"
        )
    return [
        Window(str(i + 1), tuple(range(start, min(n, start + size))))
        for i, start in enumerate(range(0, n, size))
    ]


def parse_time(value: Any) -> datetime | None:
    """A time as an aware UTC datetime; ``None`` for a blank or unreadable value.

    Numbers: seconds since the epoch below 1e11, milliseconds below 1e14, microseconds
    below 1e17, else nanoseconds (OTLP's ``startTimeUnixNano``)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return _from_number(float(value))
    text = str(value).strip()
    if not text:
        return None
    try:
        return _from_number(float(text))
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _from_number(number: float) -> datetime | None:
    if not math.isfinite(number) or number < 0:
        return None
    divisor = next((d for limit, d in _UNITS if number < limit), 1e9)
    try:
        return datetime.fromtimestamp(number / divisor, UTC)
    except (OverflowError, ValueError, OSError):
        return None


_UNITS = ((1e11, 1.0), (1e14, 1e3), (1e17, 1e6))  # seconds, ms, µs; beyond: ns


def period_name(moment: datetime, by: Period) -> str:
    """The calendar period of ``moment`` (UTC): ``2026-12-05``, ``2026-W49`` or ``2026-12``."""
    if by == "day":
        return moment.strftime("%Y-%m-%d")
    if by == "week":
        year, week, _ = moment.isocalendar()
        return f"{year}-W{week:02d}"
    if by == "month":
        return moment.strftime("%Y-%m")
    raise ValueError(f"by must be day, week or month, got {by!r}")


def time_windows(times: Sequence[datetime], by: Period, *, cap: int = MAX_WINDOWS) -> list[Window]:
    """The pairs grouped by calendar period, periods in time order (each keeps its pairs'
    stream order); ISO week and month names sort as their periods do. TooManyWindows
    past ``cap`` periods."""
    groups: dict[str, list[int]] = {}
    for position, moment in enumerate(times):
        groups.setdefault(period_name(moment, by), []).append(position)
    if len(groups) > cap:
        longer = {"day": "week or month", "week": "month"}.get(by, "")
        advice = f"use --by {longer} or --window N" if longer else "use --window N"
        raise TooManyWindows(
            f"--by {by} cuts the labels into {len(groups):,} windows, over the cap of "
            f"{cap:,}: {advice}"
        )
    windows = []
    for name in sorted(groups):
        members = groups[name]
        span = sorted(times[i] for i in members)
        windows.append(Window(name, tuple(members), _iso(span[0]), _iso(span[-1])))
    return windows


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
