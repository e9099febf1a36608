"""Grade a whole file, with one rubric or several in one pass: validate once, resume, stream
records out in input order (one records file per rubric), summarise."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.engine.grader import Grader, run_in_order
from judge.engine.identity import describe_identity
from judge.engine.inputs import iter_cases, validate_file
from judge.engine.records import (
    KEEP_STATUSES,
    RecordWriter,
    check_resumable,
    finalize,
    finished_inputs,
    scan_records,
)
from judge.engine.resume import Finished, RunTally, file_ids, kept_outside, still_finished
from judge.engine.summary import summarise
from judge.rubric import Rubric
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.engine.measure.human_labels import HumanLabels

# cases graded in line between two turns of the event loop when no rubric needs a judge
COMPUTED_TURN = 256


@dataclass(frozen=True)
class Selection:
    """Which cases of the file to grade: the first `limit`, or a seeded random `sample`, or
    exactly the input positions `only` (0-based; a jury's share of the cases)."""

    limit: int | None = None
    sample: int | None = None
    seed: int = 0
    only: frozenset[int] | None = None

    def indices(self, count: int) -> set[int] | None:
        if self.only is not None:
            return set(self.only)
        if self.sample is not None and self.sample < count:
            return set(random.Random(self.seed).sample(range(count), self.sample))
        if self.limit is not None and self.limit < count:
            return set(range(self.limit))
        return None


def selected_cases(path: Path, chosen: set[int] | None) -> Iterator[Case]:
    for index, case in enumerate(iter_cases(path)):
        if chosen is None or index in chosen:
            yield case


ProgressHook = Callable[[int], None]


@dataclass(frozen=True)
class Target:
    """One rubric of a pass: its grader and the records file it writes."""

    grader: Grader
    output: Path
    human_labels: HumanLabels | None = None


async def grade_file(
    grader: Grader,
    input_path: Path,
    output_path: Path,
    *,
    selection: Selection = Selection(),
    overwrite: bool = False,
    use_cache: bool = True,
    progress: bool | ProgressHook = False,
    prices: tuple[float, float] | None = None,
    validate: bool = True,
    human_labels: HumanLabels | None = None,
    keep: tuple[str, ...] = KEEP_STATUSES,
) -> dict[str, Any]:
    """Grade `input_path` into `output_path` with one rubric; the summary of the output
    file. The rules are `grade_files`' (a pass of one rubric)."""
    summaries = await grade_files(
        [Target(grader, output_path, human_labels)],
        input_path,
        selection=selection,
        overwrite=overwrite,
        use_cache=use_cache,
        progress=progress,
        prices=prices,
        validate=validate,
        keep=keep,
    )
    return summaries[grader.rubric.ref]


async def grade_files(
    targets: Sequence[Target],
    input_path: Path,
    *,
    selection: Selection = Selection(),
    overwrite: bool = False,
    use_cache: bool = True,
    progress: bool | ProgressHook = False,
    prices: tuple[float, float] | None = None,
    validate: bool = True,
    concurrency: int | None = None,
    keep: tuple[str, ...] = KEEP_STATUSES,
) -> dict[str, dict[str, Any]]:
    """Grade `input_path` with every target's rubric in one pass; each rubric's summary of
    its records file, by rubric ref, in the targets' order.

    The input is validated in full first, once, against every rubric's inputs (InputError,
    nothing written) unless `validate` is False (the caller already did). Every existing
    output is checked before anything is sent: it is resumed only when every record in it
    comes from that rubric file and that target's judge (else OutputConflictError, every
    file left as it was); records already `ok`/`abstained` (the statuses `keep`) are kept,
    the rest graded. Each
    output ends with one record per selected case, in input order, and keeps the records
    of cases outside the selection (a narrower rerun loses nothing: judge.engine.resume);
    each summary's `run` says what this run kept, graded and sent, with this run's own
    tokens and cost (`tokens` is the whole file's). The (case, rubric) jobs
    share one concurrency budget (`concurrency`, default the first grader's): at most that
    many requests in flight across all rubrics. `progress` is True for a bar on the
    terminal, or a hook called with the number of records done so far. File passes run in
    a thread, so a server's event loop keeps answering meanwhile. A target's
    `human_labels` (of some of the cases) are checked against its rubric and the input
    with it, and add the prediction-powered estimates to its summary
    (judge.engine.measure.estimates).
    """
    refs = [t.grader.rubric.ref for t in targets]
    if not targets or len({t.grader.rubric.id for t in targets}) < len(targets):
        raise ValueError(f"a pass needs one or more distinct rubrics, got {refs}")
    rubrics = [t.grader.rubric for t in targets]
    validated = await asyncio.to_thread(validate_file, input_path, rubrics) if validate else None
    chosen = selection.indices(validated.count) if validated else None
    for target in targets:
        if target.human_labels is not None and validated:
            input_ids = (c.id for c in iter_cases(input_path))
            await asyncio.to_thread(target.human_labels.check, target.grader.rubric, input_ids)
    total = len(chosen) if chosen is not None else (validated.count if validated else None)
    for target in targets:
        if overwrite and target.output.exists():
            target.output.unlink()
    for target in targets:  # all checked before anything is written
        await asyncio.to_thread(_check_target, target, keep)
    finished = [await asyncio.to_thread(_finished, t, keep, input_path, chosen) for t in targets]
    done = [f.ids for f in finished]
    kept = [await asyncio.to_thread(kept_outside, t.output, input_path, chosen) for t in targets]
    tallies = [
        _tally(t.grader, len(done[n] - kept[n]), len(kept[n]), finished[n])
        for n, t in enumerate(targets)
    ]
    jobs = (
        partial(_graded, number, target.grader, case, use_cache)
        for case in selected_cases(input_path, chosen)
        for number, target in enumerate(targets)
        if case.id not in done[number]
    )
    budget = concurrency or targets[0].grader.concurrency
    already = sum(len(d) for d in done)
    with ExitStack() as stack:
        writers = [stack.enter_context(RecordWriter(t.output)) for t in targets]
        advance = stack.enter_context(
            _tracker(progress, None if total is None else total * len(targets), already)
        )
        if all(t.grader.computed for t in targets):
            stream = _computed_in_order(selected_cases(input_path, chosen), targets, done)
        else:
            stream = run_in_order(jobs, concurrency=budget)
        async for number, record in stream:
            writers[number].write(record)
            tallies[number].add(record)
            advance(1)
        del done
    for number, target in enumerate(targets):
        await asyncio.to_thread(finalize, target.output, file_ids(input_path, chosen, kept[number]))
    summaries = {}
    for number, t in enumerate(targets):
        summary = await asyncio.to_thread(
            summarise_file, t.output, t.grader.rubric, prices, t.human_labels
        )
        summaries[t.grader.rubric.ref] = {**summary, "run": tallies[number].as_dict(prices)}
    return summaries


async def _computed_in_order(
    cases: Iterable[Case], targets: Sequence[Target], done: list[set[str]]
) -> AsyncIterator[tuple[int, GradedRecord]]:
    """Records of rubrics that need no judge (`Grader.computed`), COMPUTED_TURN cases at a
    time: in line, since a task a case cost about as much as the trajectory kind's own work
    (benchmarks/trajectory.md), with a turn of the event loop between chunks so a server
    keeps answering; a kind whose work on an untrusted case can take long
    (`Kind.computed_off_loop`) does its chunk in one worker thread (a thread a case cost
    more than the work: 5,000 tool_arguments cases took twice the CPU)."""
    for chunk in _chunks(cases, COMPUTED_TURN):
        for number, target in enumerate(targets):
            grader = target.grader
            todo = [case for case in chunk if case.id not in done[number]]
            if grader.rubric.behaviour.computed_off_loop:
                records = await grader.computed_many_off_loop(todo)
            else:
                records = [grader.computed_record(case) for case in todo]
            for record in records:
                yield number, record
        await asyncio.sleep(0)


def _chunks(items: Iterable[Case], size: int) -> Iterator[list[Case]]:
    """Lists of `size` items in order (the last shorter); itertools.batched is 3.12's."""
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _tally(grader: Grader, kept: int, outside: int, finished: Finished) -> RunTally:
    sends = grader.backend.cache_identity() is not None and not grader.computed
    tally = RunTally(kept=kept, outside=outside, sends=sends)
    tally.changed, tally.unchecked = finished.changed, finished.unchecked
    return tally


async def _graded(
    number: int, grader: Grader, case: Case, use_cache: bool
) -> tuple[int, GradedRecord]:
    return number, await grader.grade_case(case, use_cache=use_cache)


def _check_target(target: Target, keep: tuple[str, ...]) -> None:
    rubric, grader = target.grader.rubric, target.grader
    check_resumable(
        target.output,
        rubric_sha256=rubric.sha256,
        rubric_ref=rubric.ref,
        judge_id=grader.judge_id,
        judge=describe_identity(grader.identity),
        identity=grader.identity,
        keep=keep,
    )


def _finished(
    target: Target, keep: tuple[str, ...], input_path: Path, chosen: set[int] | None
) -> Finished:
    rubric = target.grader.rubric
    held = finished_inputs(target.output, rubric.sha256, keep)
    return still_finished(held, rubric, selected_cases(input_path, chosen))


def summarise_file(
    path: Path,
    rubric: Rubric,
    prices: tuple[float, float] | None = None,
    human_labels: HumanLabels | None = None,
) -> dict[str, Any]:
    """The summary of a records file; with `human_labels`, its estimates too."""
    records = (GradedRecord.model_validate(data) for _, data in scan_records(path))
    summary = summarise(records, rubric, prices)
    if human_labels is None:
        return summary
    # calibration's statistics (scipy, scikit-learn) load only when labels are given, so
    # offline grading starts light (tests/e2e/test_startup.py)
    from judge.engine.measure.estimates import add_estimates

    return add_estimates(summary, (data for _, data in scan_records(path)), rubric, human_labels)


def _tracker(
    progress: bool | ProgressHook, total: int | None, already: int
) -> AbstractContextManager[Callable[[int], None]]:
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
