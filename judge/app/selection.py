"""`--limit N` and `--sample N` (seeded by `--sample-seed`): which cases of the input a
job grades. Grade and probe take them alike, from here (the options: judge.cli._selection)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from judge.engine.files import Selection
from judge.errors import UsageError

T = TypeVar("T")


class Selects(Protocol):
    """A request with the selection options."""

    @property
    def limit(self) -> int | None: ...
    @property
    def sample(self) -> int | None: ...
    @property
    def sample_seed(self) -> int: ...


def check_selection(args: Selects) -> None:
    """`--limit` and `--sample` at least 1: a UsageError before anything is read."""
    for name in ("limit", "sample"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name} must be at least 1, got {value}")


def selection_from_args(args: Selects) -> Selection:
    """`--limit N`, or `--sample N` seeded by `--sample-seed` (never by the judge's `--seed`:
    the sample and the judge's sampling are separate choices)."""
    return Selection(limit=args.limit, sample=args.sample, seed=args.sample_seed)


def selected(items: Sequence[T], selection: Selection) -> list[T]:
    """The items the selection picks, in their order (the same cases `grade` would)."""
    chosen = selection.indices(len(items))
    return list(items) if chosen is None else [x for i, x in enumerate(items) if i in chosen]


def described(selection: Selection, count: int) -> str:
    """How the selection picked its cases, for a report: "" when it took them all."""
    if selection.indices(count) is None:
        return ""
    if selection.sample is not None and selection.sample < count:
        return f"--sample {selection.sample} (seed {selection.seed}) of {count}"
    return f"--limit {selection.limit} of {count}"
