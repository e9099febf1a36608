"""Grade a whole file: validate, resume, stream records out in input order, summarise."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.engine.grader import Grader
from judge.engine.identity import describe_identity
from judge.engine.inputs import iter_cases, validate_file
from judge.engine.records import RecordWriter, check_resumable, finalize, finished_ids, scan_records
from judge.engine.summary import summarise
from judge.rubric import Rubric
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.engine.human_labels import HumanLabels


@dataclass(frozen=True)
class Selection:
    """Which cases of the file to grade: the first `limit`, or a seeded random `sample`."""

    limit: int | None = None
    sample: int | None = None
    seed: int = 0

    def indices(self, count: int) -> set[int] | None:
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
) -> dict[str, Any]:
    """Grade `input_path` into `output_path` and return the summary of the output file.

    The input is validated in full first (InputError, nothing written) unless `validate` is
    False (the caller already did). An existing output is resumed only when every record in
    it comes from this rubric file and this judge (else OutputConflictError, the file left
    as it was): records already `ok`/`abstained` are kept, the rest graded. The output ends
    with one record per selected case, in input order. `progress` is True for a bar on the terminal,
    or a hook called with the number of cases done so far. File passes run in a thread, so
    a server's event loop keeps answering meanwhile. `human_labels` (of some of the cases)
    are checked against the rubric and the input with it, and add the prediction-powered
    estimates to the summary (judge.engine.estimates).
    """
    rubric = grader.rubric
    validated = await asyncio.to_thread(validate_file, input_path, rubric) if validate else None
    chosen = selection.indices(validated.count) if validated else None
    if human_labels is not None and validated:
        input_ids = (c.id for c in iter_cases(input_path))
        await asyncio.to_thread(human_labels.check, rubric, input_ids)
    total = len(chosen) if chosen is not None else (validated.count if validated else None)
    if overwrite and output_path.exists():
        output_path.unlink()
    await asyncio.to_thread(
        check_resumable,
        output_path,
        rubric_sha256=rubric.sha256,
        rubric_ref=rubric.ref,
        judge_id=grader.judge_id,
        judge=describe_identity(grader.identity),
    )
    done = await asyncio.to_thread(finished_ids, output_path, rubric.sha256)
    todo = (c for c in selected_cases(input_path, chosen) if c.id not in done)
    with RecordWriter(output_path) as writer, _tracker(progress, total, len(done)) as advance:
        async for record in grader.grade_stream(todo, use_cache=use_cache):
            writer.write(record)
            advance(1)
        del done
    ids = lambda: (c.id for c in selected_cases(input_path, chosen))  # noqa: E731
    await asyncio.to_thread(finalize, output_path, ids)
    return await asyncio.to_thread(summarise_file, output_path, rubric, prices, human_labels)


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
    # offline grading starts light (tests/test_startup.py)
    from judge.engine.estimates import add_estimates

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
