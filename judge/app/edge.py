"""What a job tells its caller while it runs, and what it asks of the caller's edge.

A job never prints: each line for the user, the summary table, the panel and the two-by-two
are handed to the caller's `Edge`, in the order the job reaches them (the CLI prints them;
the API, the service and the pytest plugin pass none and hear nothing). The edge is set for
the length of one job with `reporting(edge)`; `edge()` is the current one (a context
variable, so threads and asyncio tasks a job starts see the same edge).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge.config import JudgeConfig


def _drop(*_: Any, **__: Any) -> None:
    return None


@dataclass(frozen=True)
class Edge:
    """The caller's side of a job (each defaults to saying nothing)."""

    note: Callable[[str], None] = _drop  # a line for the user (the CLI's stderr)
    line: Callable[[str], None] = _drop  # a line of output (the CLI's stdout)
    summary: Callable[[dict[str, Any]], None] = _drop  # a run's summary
    panel: Callable[[dict[str, Any], Sequence[int]], None] = _drop  # a jury's figures
    diagnosis: Callable[[dict[str, Any] | None], None] = _drop  # a pass's two-by-two
    judge: Callable[[JudgeConfig], None] = _drop  # which judge runs, before its first request
    requests: Callable[[object], None] = _drop  # a backend's requests, after a run
    progress: bool = False  # show a progress bar


_EDGE: ContextVar[Edge] = ContextVar("judge_app_edge", default=Edge())  # noqa: B039


def edge() -> Edge:
    """The edge of the job running now (a silent one outside `reporting`)."""
    return _EDGE.get()


def note(line: str) -> None:
    """A line for the user, through the current edge."""
    _EDGE.get().note(line)


@contextmanager
def reporting(to: Edge) -> Iterator[Edge]:
    """Run a job with `to` as its edge."""
    token = _EDGE.set(to)
    try:
        yield to
    finally:
        _EDGE.reset(token)
