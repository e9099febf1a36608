"""The Python API: `Judge` grades one case, many cases, or a file.

Every grading method has a sync form (`grade`, `grade_many`, `grade_file`) and an async one
(`agrade`, ...). The sync forms work anywhere, a Jupyter notebook or an async web app
included: inside a running event loop they run the coroutine on a worker thread with a loop
of its own (`run_sync`), so no `nest_asyncio`-style patch of the caller's loop is needed.
"""

from __future__ import annotations

import asyncio
import contextvars
import tempfile
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from judge.config import JudgeConfig, default_cache_dir
from judge.engine.cache import VerdictCache
from judge.engine.files import Selection, grade_file
from judge.engine.frames import is_frame
from judge.engine.grader import Grader
from judge.engine.inputs import frame_cases
from judge.engine.outcome import Backend
from judge.engine.pricing import prices_for
from judge.engine.rules import RulesJudge
from judge.engine.stream import case_stream, records_in_order
from judge.engine.summary import summarise
from judge.rubric import Rubric, RubricLibrary, load_rubric
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.client import AsyncHttpClient
    from judge.engine.measure.human_labels import HumanLabels

T = TypeVar("T")
CaseLike = Case | Mapping[str, Any]


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine that `make` builds to completion and return its result, from sync
    code, whether or not an event loop is running in this thread.

    With no running loop this is `asyncio.run`. Inside one (a notebook cell, an async
    handler) the coroutine runs on a worker thread with a fresh loop of its own, and this
    thread waits for it: the caller's loop is never re-entered or patched, so other
    libraries on it keep working; it is blocked while the call lasts, as any sync call
    blocks it (await the async form to keep it serving). Context variables are copied to
    the worker; an exception raised there is raised here.

    >>> async def answer() -> int:
    ...     return 42
    >>> run_sync(answer)
    42
    >>> async def from_a_loop() -> int:   # as in a notebook cell
    ...     return run_sync(answer)
    >>> asyncio.run(from_a_loop())
    42
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(make))
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="judge-sync") as pool:
        return pool.submit(context.run, asyncio.run, _awaited(make)).result()


async def _awaited(make: Callable[[], Awaitable[T]]) -> T:
    # the coroutine is created inside the loop that awaits it: none is left unawaited
    return await make()


def make_backend(config: JudgeConfig, *, http_client: AsyncHttpClient | None = None) -> Backend:
    """The rules judge when no model is configured, else a model judge for the endpoint.

    >>> type(make_backend(JudgeConfig())).__name__
    'RulesJudge'
    """
    if config.offline:
        return RulesJudge()
    from judge.engine.model import LLMJudge  # the HTTP client and SDK load only for a model judge

    judge = LLMJudge(config, http_client=http_client)
    if config.samples > 1:  # K replies a case, the majority's label (judge.engine.votes)
        from judge.engine.votes import SampledJudge

        return SampledJudge(judge, config.samples)
    return judge


def open_cache(config: JudgeConfig) -> VerdictCache | None:
    """The verdict cache a config asks for (`cache_dir`, else the default folder); None for
    the rules judge (it is deterministic and free) or when `use_cache` is off.

    >>> open_cache(JudgeConfig()) is None   # offline: nothing to cache
    True
    """
    if config.offline or not config.use_cache:
        return None
    return VerdictCache(config.cache_dir or default_cache_dir())


@asynccontextmanager
async def open_grader(
    config: JudgeConfig, rubric: Rubric, *, http_client: AsyncHttpClient | None = None
) -> AsyncIterator[Grader]:
    """A grader with its backend and cache, both closed when the block ends.

    >>> async def one() -> str:
    ...     async with open_grader(JudgeConfig(), load_rubric("faithfulness")) as grader:
    ...         record = await grader.grade_case(Case(id="1", question="q?",
    ...                                                contexts=["c"], answer="c."))
    ...     return record.status
    >>> asyncio.run(one())
    'ok'
    """
    async with open_graders(config, [rubric], http_client=http_client) as graders:
        yield graders[0]


@asynccontextmanager
async def open_graders(
    config: JudgeConfig,
    rubrics: Sequence[Rubric],
    *,
    http_client: AsyncHttpClient | None = None,
) -> AsyncIterator[list[Grader]]:
    """One grader per rubric, all sharing one backend (one connection pool) and one cache,
    closed when the block ends.

    >>> async def refs() -> list[str]:
    ...     rubrics = [load_rubric("faithfulness"), load_rubric("relevance")]
    ...     async with open_graders(JudgeConfig(), rubrics) as graders:
    ...         return [g.rubric.ref for g in graders]
    >>> asyncio.run(refs())
    ['faithfulness@1', 'relevance@1']
    """
    backend = make_backend(config, http_client=http_client)
    cache = open_cache(config)
    try:
        yield [Grader(backend, r, cache=cache, concurrency=config.max_in_flight) for r in rubrics]
    finally:
        await backend.aclose()
        if cache is not None:
            cache.close()


class Judge:
    """A pinned judge. Async methods share one connection pool (close with `aclose`);
    the sync ones open and close their own around each call, and work inside a running
    event loop too (a notebook, an async app: see `run_sync`).

    `config` says which model and how (`JudgeConfig()`: the offline rules judge);
    `rubrics_dir` adds a folder (or library) of user rubrics to the released ones;
    `http_client` is a `judge.client.AsyncHttpClient` (the SDK's `httpx.AsyncClient`) for
    the model endpoint (used by the async methods; the sync ones may run on a worker
    thread's loop, so leave it out there).

    >>> judge = Judge()                       # offline rules judge
    >>> judge.grade({"id": "1", "question": "q?", "contexts": ["c"], "answer": "c."}).status
    'ok'
    """

    def __init__(
        self,
        config: JudgeConfig | None = None,
        *,
        rubrics_dir: Path | RubricLibrary | None = None,
        http_client: AsyncHttpClient | None = None,
    ) -> None:
        self.config = config or JudgeConfig()
        self.rubrics_dir = rubrics_dir
        self._http_client = http_client
        self._backend: Backend | None = None
        self._cache: VerdictCache | None = None

    def rubric(self, ref: str | Rubric) -> Rubric:
        """The rubric a reference names (`faithfulness`, `faithfulness@1`), from the
        released ones or `rubrics_dir`; a `Rubric` is returned as is.

        >>> Judge().rubric("faithfulness@1").ref
        'faithfulness@1'
        """
        return ref if isinstance(ref, Rubric) else load_rubric(ref, self.rubrics_dir)

    def grader(self, rubric: str | Rubric) -> Grader:
        """A grader for `rubric` on this judge's backend and cache (opened on first use,
        shared by every grader of this judge until `aclose`).

        >>> Judge().grader("faithfulness").rubric.ref
        'faithfulness@1'
        """
        if self._backend is None:
            self._backend = make_backend(self.config, http_client=self._http_client)
            self._cache = open_cache(self.config)
        return Grader(
            self._backend,
            self.rubric(rubric),
            cache=self._cache,
            concurrency=self.config.max_in_flight,
        )

    async def aclose(self) -> None:
        """Close the backend (its connection pool) and the cache the async methods opened;
        the judge opens them again when next used.

        >>> asyncio.run(Judge().aclose())
        """
        if self._backend is not None:
            await self._backend.aclose()
        if self._cache is not None:
            self._cache.close()
        self._backend, self._cache = None, None

    async def agrade(self, case: CaseLike, rubric: str | Rubric = "faithfulness") -> GradedRecord:
        """Grade one case (a `Case` or a mapping with the fields and aliases of an input
        file); the record. Await it in async code and notebooks; `grade` is the sync form.

        >>> async def main() -> str:
        ...     judge = Judge()
        ...     try:
        ...         record = await judge.agrade({"id": "1", "question": "q?",
        ...                                      "contexts": ["c"], "answer": "c."})
        ...     finally:
        ...         await judge.aclose()
        ...     return record.status
        >>> asyncio.run(main())
        'ok'
        """
        return await self.grader(rubric).grade_case(_as_case(case), use_cache=self.config.use_cache)

    async def agrade_many(
        self, cases: Iterable[CaseLike], rubric: str | Rubric = "faithfulness"
    ) -> list[GradedRecord]:
        """Grade many cases concurrently (up to `config.concurrency` at once); the records
        in input order. `cases`: `Case`s, mappings, or a pandas/polars DataFrame or Arrow
        table with a file's columns and aliases (every row checked first: `InputError`
        names the bad rows). `grade_many` is the sync form. Every record is held in the
        list: for large inputs stream them with `aiter_grade` / `iter_grade` instead.

        >>> cases = [{"id": str(i), "question": "q?", "contexts": ["c"], "answer": "c."}
        ...          for i in range(3)]
        >>> [r.id for r in asyncio.run(Judge().agrade_many(cases))]
        ['0', '1', '2']
        """
        grader = self.grader(rubric)
        if is_frame(cases):
            cases = frame_cases(cases, grader.rubric)
        return await grader.grade_many(
            (_as_case(c) for c in cases), use_cache=self.config.use_cache
        )

    async def aiter_grade(
        self, cases: Any, rubric: str | Rubric = "faithfulness"
    ) -> AsyncIterator[GradedRecord]:
        """Grade a stream of cases, yielding each record as it is graded, in input order,
        with a bounded window in memory (`config.concurrency` in flight, a few times that
        waiting for a slower predecessor), however many cases come. `cases`: a JSONL, CSV
        or Parquet path, a pandas/polars DataFrame or Arrow table, or any iterable of
        `Case`s and mappings (a generator included), read as they are needed. Each case is
        checked as it comes; a bad one stops the stream with an `InputError` naming it (a
        file's names every problem in the file, once it was read); the records already
        yielded are the caller's. `iter_grade` is the sync form.

        >>> async def ids() -> list[str]:
        ...     cases = ({"id": str(i), "question": "q?", "contexts": ["c"], "answer": "c."}
        ...              for i in range(3))
        ...     judge = Judge()
        ...     try:
        ...         return [r.id async for r in judge.aiter_grade(cases)]
        ...     finally:
        ...         await judge.aclose()
        >>> asyncio.run(ids())
        ['0', '1', '2']
        """
        grader = self.grader(rubric)
        stream = case_stream(cases, grader.rubric)
        async for record in records_in_order(grader, stream, use_cache=self.config.use_cache):
            yield record

    def iter_grade(
        self, cases: Any, rubric: str | Rubric = "faithfulness", *, batch: int = 64
    ) -> Iterator[GradedRecord]:
        """`aiter_grade`, synchronously: a generator of records in input order, in a bounded
        memory (100,000 conversations within 300 MB: benchmarks/trajectory.md). It drives an
        event loop of its own, `batch` records at a time, on this thread (or, inside a
        running loop, on a worker thread, as `run_sync` does); closing the generator early
        cancels what is in flight and closes the judge's connections.

        >>> cases = ({"id": str(i), "question": "q?", "contexts": ["c"], "answer": "c."}
        ...          for i in range(3))
        >>> [(r.id, r.status) for r in Judge().iter_grade(cases)]
        [('0', 'ok'), ('1', 'ok'), ('2', 'ok')]
        """
        records = self.aiter_grade(cases, rubric)
        with _LoopDriver() as driver:
            try:
                while True:
                    chunk, error = driver.run(_take(records, batch))
                    yield from chunk
                    if error is not None:
                        raise error
                    if len(chunk) < batch:
                        return
            finally:
                driver.run(_closed(records, self))

    async def agrade_file(
        self,
        input_path: str | Path | Any,
        output_path: str | Path,
        rubric: str | Rubric = "faithfulness",
        *,
        human_labels: HumanLabels | str | Path | Iterable[Mapping[str, Any]] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Grade a JSONL/CSV/Parquet file, or a pandas/polars DataFrame or Arrow table (the
        same columns and aliases), into a records file; returns the summary. Options: see
        `judge.engine.files.grade_file` (selection, overwrite, progress, prices).

        `human_labels` (a CSV/JSONL path, or rows with `id` and `label`) of some of the
        cases add the prediction-powered estimates to the summary (`summary["ppi"]`, as
        `judge grade --human-labels`); they are checked before the first request.

        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "graded.jsonl"
        >>> summary = asyncio.run(Judge().agrade_file("examples/cases.jsonl", out))
        >>> summary["rubric"], summary["cases"] > 0
        ('faithfulness@1', True)
        """
        options.setdefault("use_cache", self.config.use_cache)
        options.setdefault("selection", Selection())
        if human_labels is not None:
            # label files are read by calibration's readers, loaded only when labels are given
            from judge.engine.measure.human_labels import to_human_labels

            options["human_labels"] = to_human_labels(human_labels)
        grader = self.grader(rubric)
        if not is_frame(input_path):
            return await grade_file(grader, Path(input_path), Path(output_path), **options)
        cases = frame_cases(input_path, grader.rubric)
        with tempfile.TemporaryDirectory(prefix="judge-frame-") as folder:
            # the frame's cases as a file: resume, selection and the summary follow a file's rules
            staged = Path(folder) / "frame.jsonl"
            with staged.open("w", encoding="utf-8") as out:
                for case in cases:
                    out.write(case.model_dump_json(exclude_defaults=True) + "\n")
            return await grade_file(grader, staged, Path(output_path), **options)

    def grade(self, case: CaseLike, rubric: str | Rubric = "faithfulness") -> GradedRecord:
        """`agrade`, synchronously: works in a script, a notebook cell or an async app alike
        (inside a running loop it grades on a worker thread; `run_sync`).

        >>> record = Judge().grade({"id": "1", "question": "How long is the trial?",
        ...                         "contexts": ["The free trial lasts 14 days."],
        ...                         "answer": "The trial lasts 40 days."})
        >>> record.status, record.score, record.label
        ('ok', 0.0, 'unfaithful')
        """
        return self._run(lambda: self.agrade(case, rubric))

    def grade_many(
        self, cases: Iterable[CaseLike], rubric: str | Rubric = "faithfulness"
    ) -> list[GradedRecord]:
        """`agrade_many`, synchronously (in a running loop too: `run_sync`). The list holds
        every record (about 9 KB a conversation): for large inputs use `iter_grade`, which
        yields them as they are graded in a bounded memory.

        >>> cases = [{"id": str(i), "question": "q?", "contexts": ["c"], "answer": "c."}
        ...          for i in range(2)]
        >>> [r.status for r in Judge().grade_many(cases)]
        ['ok', 'ok']
        """
        return self._run(lambda: self.agrade_many(cases, rubric))

    def grade_file(
        self,
        input_path: str | Path | Any,
        output_path: str | Path,
        rubric: str | Rubric = "faithfulness",
        *,
        human_labels: HumanLabels | str | Path | Iterable[Mapping[str, Any]] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """`agrade_file`, synchronously (in a running loop too: `run_sync`).

        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "graded.jsonl"
        >>> Judge().grade_file("examples/cases.jsonl", out)["kind"]
        'faithfulness'
        """
        return self._run(
            lambda: self.agrade_file(
                input_path, output_path, rubric, human_labels=human_labels, **options
            )
        )

    def summarise(
        self, records: Iterable[GradedRecord], rubric: str | Rubric = "faithfulness"
    ) -> dict[str, Any]:
        """The summary (DESIGN.md) of records from `grade_many`, as `grade_file` returns it.

        >>> judge = Judge()
        >>> records = judge.grade_many([{"id": "1", "question": "q?", "contexts": ["c"],
        ...                              "answer": "c."}])
        >>> judge.summarise(records)["cases"]
        1
        """
        return summarise(records, self.rubric(rubric), prices_for(self.config))

    def _run(self, make: Callable[[], Awaitable[T]]) -> T:
        async def main() -> T:
            try:
                return await make()
            finally:
                await self.aclose()

        return run_sync(main)


def iter_grade(
    cases: Any,
    rubric: str | Rubric = "faithfulness",
    *,
    config: JudgeConfig | None = None,
    rubrics_dir: Path | RubricLibrary | None = None,
) -> Iterator[GradedRecord]:
    """`Judge(config, rubrics_dir=...).iter_grade(cases, rubric)`: records as they are
    graded, in input order, in a bounded memory, from a path, a DataFrame or any iterable
    of cases.

    >>> import judge
    >>> [r.label for r in judge.iter_grade([{"id": "1", "question": "q?",
    ...                                      "contexts": ["c"], "answer": "c."}])]
    ['faithful']
    """
    return Judge(config, rubrics_dir=rubrics_dir).iter_grade(cases, rubric)


class _LoopDriver:
    """Runs coroutines one after another on one event loop of its own (`asyncio.Runner`),
    on this thread, or on one worker thread when this thread already runs a loop."""

    def __init__(self) -> None:
        self._runner = asyncio.Runner()
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._pool: ThreadPoolExecutor | None = None
        else:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judge-stream")

    def run(self, coroutine: Awaitable[T]) -> T:
        if self._pool is None:
            return self._runner.run(coroutine)  # type: ignore[arg-type]
        return self._pool.submit(self._runner.run, coroutine).result()  # type: ignore[arg-type]

    def __enter__(self) -> _LoopDriver:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is None:
            self._runner.close()
        else:
            self._pool.submit(self._runner.close).result()
            self._pool.shutdown()


async def _take(
    records: AsyncIterator[GradedRecord], count: int
) -> tuple[list[GradedRecord], Exception | None]:
    """The next `count` records (fewer at the end), and the error that stopped the stream
    (a bad case): the records graded before it are still handed over first."""
    chunk: list[GradedRecord] = []
    try:
        async for record in records:
            chunk.append(record)
            if len(chunk) >= count:
                break
    except Exception as exc:  # noqa: BLE001  # raised to the caller after the chunk
        return chunk, exc
    return chunk, None


async def _closed(records: Any, judge: Judge) -> None:
    try:
        await records.aclose()  # cancels what is still in flight
    finally:
        await judge.aclose()


def _as_case(case: CaseLike) -> Case:
    return case if isinstance(case, Case) else Case.model_validate(dict(case))
