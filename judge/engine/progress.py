"""The progress of a file pass: a rich bar on the terminal, a caller's hook, or nothing."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

ProgressHook = Callable[[int], None]


def tracker(
    progress: bool | ProgressHook, total: int | None, already: int
) -> AbstractContextManager[Callable[[int], None]]:
    """A context whose value `advance(n)` counts n more records done: on a bar when
    `progress` is True (`total` None: no end known), through the hook when it is one."""
    if callable(progress):
        count = [already]
        progress(already)

        def advance(n: int) -> None:
            count[0] += n
            progress(count[0])

        return nullcontext(advance)
    if not progress:
        return nullcontext(lambda _n: None)
    return _RichBar(total, already)


class _RichBar:
    """A rich progress bar with rate and ETA, on stderr."""

    def __init__(self, total: int | None, already: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            console=Console(file=sys.stderr),
        )
        self._task = self._progress.add_task("grade", total=total, completed=already, rate="")

    def __enter__(self) -> Callable[[int], None]:
        self._progress.start()
        return self._advance

    def _advance(self, n: int) -> None:
        task = self._progress.tasks[0]
        speed = task.speed
        self._progress.update(self._task, advance=n, rate=f"{speed:.1f}/s" if speed else "")

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()
