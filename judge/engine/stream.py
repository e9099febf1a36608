"""Cases in, records out, one at a time: the stream behind `Judge.iter_grade`.

`case_stream` turns any source of cases (a JSONL/CSV/Parquet path, a pandas or polars
DataFrame or an Arrow table, or any iterable of `Case`s and mappings) into checked `Case`s
read lazily: each is checked as a file's row is (fields, aliases, the rubric's inputs) as
it comes, and a bad one stops the stream with an InputError naming its line or position
and id (a file lists every problem it has, once read to the end); ids must be unique.
`records_in_order` grades them in input order with a bounded window in flight. Memory is
the window plus one 8-byte hash an id (the uniqueness check), whatever the count.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from judge.engine.frames import frame_rows, is_frame
from judge.engine.grader import Grader
from judge.engine.inputs import CaseReader, Rubrics, to_case, with_derived_ids
from judge.errors import InputError
from judge.schemas import Case, GradedRecord

# cases graded in line between two turns of the event loop when the rubric needs no judge
COMPUTED_TURN = 256


def case_stream(source: Any, rubrics: Rubrics, *, name: str = "cases") -> Iterator[Case]:
    """The checked cases of `source`, lazily (module docstring)."""
    if isinstance(source, str | Path):
        return _file_cases(CaseReader(Path(source), rubrics))
    if is_frame(source):
        rows: Iterable[tuple[int, Any]] = with_derived_ids(enumerate(frame_rows(source), 1))
        return _checked(rows, rubrics, "DataFrame")
    return _checked(enumerate(source, 1), rubrics, name)


def _file_cases(reader: CaseReader) -> Iterator[Case]:
    yield from reader
    reader.finish()  # the InputError listing every problem, once the file was read


def _checked(rows: Iterable[tuple[int, Any]], rubrics: Rubrics, name: str) -> Iterator[Case]:
    seen: set[bytes] = set()
    for number, row in rows:
        case = _case(number, row, rubrics, name)
        digest = hashlib.blake2b(case.id.encode(), digest_size=8).digest()
        if digest in seen:
            raise InputError(name, [(None, case.id, f"case {number}: duplicate id")])
        seen.add(digest)
        yield case


def _case(number: int, row: Any, rubrics: Rubrics, name: str) -> Case:
    """The row as a checked case, or the InputError naming it."""
    if isinstance(row, Case):
        return row
    if not isinstance(row, Mapping):
        message = f"case {number}: a case is a Case or a mapping, got {type(row).__name__}"
        raise InputError(name, [(None, None, message)])
    case, problem = to_case(dict(row), rubrics)
    if case is None:
        case_id = str(row.get("id")) if row.get("id") not in (None, "") else None
        raise InputError(name, [(None, case_id, f"case {number}: {problem}")])
    return case


async def records_in_order(
    grader: Grader, cases: Iterable[Case], *, use_cache: bool = True
) -> AsyncIterator[GradedRecord]:
    """Each case's record, in input order: a rubric that needs no judge is graded in line
    (no task a case; the loop gets a turn every COMPUTED_TURN cases), any other through
    `Grader.grade_stream` (at most `concurrency` in flight, a bounded window waiting). An
    InputError of the cases is raised after the records of the cases before it."""
    failure: list[InputError] = []
    good = _until_error(cases, failure)
    if grader.computed:
        for count, case in enumerate(good, 1):
            yield grader.computed_record(case)
            if count % COMPUTED_TURN == 0:
                await asyncio.sleep(0)
    else:
        async for record in grader.grade_stream(good, use_cache=use_cache):
            yield record
    if failure:
        raise failure[0]


def _until_error(cases: Iterable[Case], failure: list[InputError]) -> Iterator[Case]:
    try:
        yield from cases
    except InputError as exc:
        failure.append(exc)
