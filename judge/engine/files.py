"""Grade a whole file, with one rubric or several in one pass: validate once, resume, stream
records out in input order (one records file per rubric), summarise from running totals.

Where the time goes, before and after reading the file once: benchmarks/grade_profile.md."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.engine.grader import Grader, run_in_order
from judge.engine.identity import describe_identity
from judge.engine.inputs import CaseReader, iter_cases, validate_file
from judge.engine.progress import ProgressHook, tracker
from judge.engine.records import (
    KEEP_STATUSES,
    RecordWriter,
    check_resumable,
    finalize,
    finished_inputs,
    scan_records,
)
from judge.engine.resume import Finished, RunTally, file_ids, kept_outside, still_finished
from judge.engine.summary import SummaryBuilder, summarise
from judge.errors import InputError
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
    nothing written) unless `validate` is False (the caller already did); when nothing is
    sent and there is nothing to resume or select, validation and grading are one pass
    instead (`_one_pass`), the records kept only when the whole file validated. Every existing
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
    budget = concurrency or targets[0].grader.concurrency
    if validate and _one_pass(targets, selection):
        return await _grade_in_one_pass(targets, input_path, use_cache, progress, prices, budget)
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
    # no output holds a record yet: each ends as written, in order, its summary the running one
    fresh = not any(_holds_anything(t.output) for t in targets)
    finished = [await asyncio.to_thread(_finished, t, keep, input_path, chosen) for t in targets]
    done = [f.ids for f in finished]
    kept = [await asyncio.to_thread(kept_outside, t.output, input_path, chosen) for t in targets]
    tallies = [
        _tally(t.grader, len(done[n] - kept[n]), len(kept[n]), finished[n])
        for n, t in enumerate(targets)
    ]
    builders = [_running_summary(t) if fresh else None for t in targets]
    jobs = (
        partial(_graded, number, target.grader, case, use_cache)
        for case in selected_cases(input_path, chosen)
        for number, target in enumerate(targets)
        if case.id not in done[number]
    )
    already = sum(len(d) for d in done)
    with ExitStack() as stack:
        writers = [stack.enter_context(RecordWriter(t.output)) for t in targets]
        advance = stack.enter_context(
            tracker(progress, None if total is None else total * len(targets), already)
        )
        if all(t.grader.computed for t in targets):
            stream = _computed_in_order(selected_cases(input_path, chosen), targets, done)
        else:
            stream = run_in_order(jobs, concurrency=budget)
        async for number, record in stream:
            writers[number].write(record)
            tallies[number].add(record)
            if builders[number] is not None:
                builders[number].add(record)  # type: ignore[union-attr]
            advance(1)
        del done
    if not fresh:
        for number, target in enumerate(targets):
            ids = file_ids(input_path, chosen, kept[number])
            await asyncio.to_thread(finalize, target.output, ids)
    return await _summaries(targets, builders, tallies, prices)


async def _summaries(
    targets: Sequence[Target],
    builders: Sequence[SummaryBuilder | None],
    tallies: Sequence[RunTally],
    prices: tuple[float, float] | None,
) -> dict[str, dict[str, Any]]:
    """Each target's summary: from the running totals when there are some (every record of
    the file went through this run), else from its records file (a resumed file holds
    records graded before)."""
    summaries = {}
    for number, t in enumerate(targets):
        builder = builders[number]
        if builder is not None:
            summary = builder.result(prices)
        else:
            summary = await asyncio.to_thread(
                summarise_file, t.output, t.grader.rubric, prices, t.human_labels
            )
        summaries[t.grader.rubric.ref] = {**summary, "run": tallies[number].as_dict(prices)}
    return summaries


def _running_summary(target: Target) -> SummaryBuilder | None:
    # human labels' estimates read the records back (judge.engine.measure.estimates)
    return SummaryBuilder(target.grader.rubric) if target.human_labels is None else None


def _holds_anything(path: Path) -> bool:
    return path.exists() and (not path.is_file() or path.stat().st_size > 0)


def _sends(grader: Grader) -> bool:
    """Whether grading asks a judge over the network (not the rules judge, not computed)."""
    return grader.backend.cache_identity() is not None and not grader.computed


def _one_pass(targets: Sequence[Target], selection: Selection) -> bool:
    """Whether the pass reads the input once, validating and grading each line together:
    when nothing is sent (the rules judge, or rubrics that need no judge, so grading a line
    before the whole file validated costs nothing outside this process), every case is
    graded (no selection, which needs the count first), no human labels are checked
    against the input first, and every output starts empty (nothing to resume)."""
    return selection == Selection() and all(
        not _sends(t.grader) and t.human_labels is None and not _holds_anything(t.output)
        for t in targets
    )


async def _grade_in_one_pass(
    targets: Sequence[Target],
    input_path: Path,
    use_cache: bool,
    progress: bool | ProgressHook,
    prices: tuple[float, float] | None,
    budget: int,
) -> dict[str, dict[str, Any]]:
    """Read, validate and grade each line once (`CaseReader`), the records written as in
    any pass (whole lines, flushed: a run killed or stopped by a full disk leaves whole
    records that a rerun keeps). When a line fails (InputError, listing every problem,
    raised once the whole file was read) every output goes back to what it was, missing
    or empty (a folder made for it removed): nothing graded from a file that fails is kept. The summaries are the
    running totals: no records file is read back."""
    reader = CaseReader(input_path, [t.grader.rubric for t in targets])
    existed = [t.output.exists() for t in targets]
    folders = sorted(
        {f for t in targets for f in (t.output.parent, *t.output.parent.parents) if not f.exists()},
        key=lambda folder: len(folder.parts),
        reverse=True,  # the deepest first: each is empty once those below it are gone
    )
    builders = [SummaryBuilder(t.grader.rubric) for t in targets]
    tallies = [_tally(t.grader, 0, 0, Finished(set())) for t in targets]
    none_done: list[set[str]] = [set() for _ in targets]
    with ExitStack() as stack:
        writers = [stack.enter_context(RecordWriter(t.output)) for t in targets]
        advance = stack.enter_context(tracker(progress, None, 0))
        if all(t.grader.computed for t in targets):
            stream = _computed_in_order(reader, targets, none_done)
        else:
            jobs = (
                partial(_graded, number, target.grader, case, use_cache)
                for case in reader
                for number, target in enumerate(targets)
            )
            stream = run_in_order(jobs, concurrency=budget)
        async for number, record in stream:
            writers[number].write(record)
            tallies[number].add(record)
            builders[number].add(record)
            advance(1)
    try:
        await asyncio.to_thread(reader.finish)
    except InputError:
        for target, was in zip(targets, existed, strict=True):
            if was:
                os.truncate(target.output, 0)
            else:
                target.output.unlink(missing_ok=True)
        for folder in folders:  # made for the outputs: gone with them
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return await _summaries(targets, builders, tallies, prices)


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
