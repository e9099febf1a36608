"""What one Ray Data actor does with a batch of rows: the grader's own `grade_case` on each.

`GradeBatches` is the callable class `Dataset.map_batches` instantiates once per actor. Each
actor holds one backend (the project's async client, with its retries, Retry-After, pacing
and connection pool), one verdict cache and one `Grader`, all on an event loop of its own
running in a thread, so the batches Ray sends it reuse them. A batch's cases are graded
with `Grader.grade_many` (at most the judge's `concurrency` in flight, in batch order) and
come back as one column of record JSON lines plus a few flat columns for Ray to filter
on. Failures are records (`api_error`, `parse_error`), as in `judge grade`; a fatal judge
error (a bad key, an unknown model) raises and stops the dataset. This module imports no
Ray: it is the per-case work, Ray only calls it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Literal, TypeVar

from judge.api import make_backend, open_cache
from judge.config import JudgeConfig
from judge.engine.cache import VerdictCache
from judge.engine.grader import Grader
from judge.engine.inputs import to_case
from judge.errors import InputError
from judge.rubric import Rubric
from judge.schemas import Case, GradedRecord

T = TypeVar("T")
RowForm = Literal["fields", "json"]
CASE_COLUMN = "case"  # rows of the "json" form: one case as its JSON text
RECORD_COLUMNS = ("id", "rubric", "status", "score", "label", "judge_id", "record")
BatchHook = Callable[[Sequence[GradedRecord]], None]


class RowError(InputError):
    """A dataset row that is not a case; picklable, so Ray brings it to the driver whole."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.problems))


def row_case(row: Mapping[str, Any], rubric: Rubric, form: RowForm) -> Case:
    """The case of one dataset row. `fields`: the row's columns are the case's fields (a
    file's rules: aliases, unknown fields refused; a null column counts as absent, as
    Arrow gives every row every column); `json`: the row's `case` column is a case as JSON
    (what `judge grade --engine ray` sends, read and validated by the project's reader)."""
    if form == "json":
        return Case.model_validate_json(row[CASE_COLUMN])
    fields = {key: value for key, value in row.items() if value is not None}
    case, problem = to_case(fields, rubric)
    if case is None:
        case_id = str(fields.get("id")) if fields.get("id") not in (None, "") else None
        raise RowError("dataset", [(None, case_id, problem or "invalid case")])
    return case


def record_columns(records: Sequence[GradedRecord]) -> dict[str, list[Any]]:
    """A batch of records as Ray Data columns: the record itself as one JSON line (exactly
    the line `judge grade` writes), and flat columns for filtering and counting."""
    return {
        "id": [r.id for r in records],
        "rubric": [r.rubric for r in records],
        "status": [r.status for r in records],
        "score": [r.score for r in records],
        "label": [r.label for r in records],
        "judge_id": [r.judge_id for r in records],
        "record": [r.model_dump_json() for r in records],
    }


class GradeBatches:
    """Grades Ray Data batches with one `Grader`, built once per actor (see the module)."""

    def __init__(
        self,
        config: JudgeConfig,
        rubric: Rubric,
        *,
        form: RowForm = "fields",
        use_cache: bool = True,
        after_batch: BatchHook | None = None,
    ) -> None:
        self.rubric = rubric
        self.form: RowForm = form
        self.use_cache = use_cache
        self.after_batch = after_batch  # a test's fault hook: called with each batch's records
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._cache: VerdictCache | None = None
        self.grader: Grader = self._run(self._open(config))

    async def _open(self, config: JudgeConfig) -> Grader:
        # built on the actor's loop: the client's connection pool belongs to that loop
        backend = make_backend(config)
        self._cache = open_cache(config)
        return Grader(backend, self.rubric, cache=self._cache, concurrency=config.max_in_flight)

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def grade(self, cases: Sequence[Case]) -> list[GradedRecord]:
        """The records of `cases`, in their order."""
        records = self._run(self.grader.grade_many(cases, use_cache=self.use_cache))
        if self.after_batch is not None:
            self.after_batch(records)
        return records

    def __call__(self, batch: Any) -> dict[str, list[Any]]:
        """One Arrow batch of rows -> the record columns of its cases."""
        rows = batch.to_pylist()
        cases = [row_case(row, self.rubric, self.form) for row in rows]
        return record_columns(self.grade(cases))

    def close(self) -> None:
        if not self._loop.is_running():
            return
        self._run(self.grader.backend.aclose())
        if self._cache is not None:
            self._cache.close()
        self._loop.call_soon_threadsafe(self._loop.stop)

    def __del__(self) -> None:  # Ray Data has no close hook: the actor's end is its __del__
        with contextlib.suppress(Exception):  # an interpreter shutting down may refuse
            self.close()
