"""The Python API: `Judge` grades one case, many cases, or a file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from judge.config import JudgeConfig, default_cache_dir
from judge.engine.cache import VerdictCache
from judge.engine.files import Selection, grade_file
from judge.engine.grader import Grader
from judge.engine.outcome import Backend
from judge.engine.pricing import prices_for
from judge.engine.rules import RulesJudge
from judge.engine.summary import summarise
from judge.rubric import Rubric, RubricLibrary, load_rubric
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.client import AsyncHttpClient
    from judge.engine.measure.human_labels import HumanLabels

T = TypeVar("T")
CaseLike = Case | Mapping[str, Any]


def make_backend(config: JudgeConfig, *, http_client: AsyncHttpClient | None = None) -> Backend:
    """The rules judge when no model is configured, else a model judge for the endpoint."""
    if config.offline:
        return RulesJudge()
    from judge.engine.model import LLMJudge  # the HTTP client and SDK load only for a model judge

    return LLMJudge(config, http_client=http_client)


def open_cache(config: JudgeConfig) -> VerdictCache | None:
    if config.offline or not config.use_cache:
        return None
    return VerdictCache(config.cache_dir or default_cache_dir())


@asynccontextmanager
async def open_grader(
    config: JudgeConfig, rubric: Rubric, *, http_client: AsyncHttpClient | None = None
) -> AsyncIterator[Grader]:
    """A grader with its backend and cache, both closed when the block ends."""
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
    closed when the block ends."""
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
    the sync ones open and close their own around each call.

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
        return ref if isinstance(ref, Rubric) else load_rubric(ref, self.rubrics_dir)

    def grader(self, rubric: str | Rubric) -> Grader:
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
        if self._backend is not None:
            await self._backend.aclose()
        if self._cache is not None:
            self._cache.close()
        self._backend, self._cache = None, None

    async def agrade(self, case: CaseLike, rubric: str | Rubric = "faithfulness") -> GradedRecord:
        return await self.grader(rubric).grade_case(_as_case(case), use_cache=self.config.use_cache)

    async def agrade_many(
        self, cases: Iterable[CaseLike], rubric: str | Rubric = "faithfulness"
    ) -> list[GradedRecord]:
        grader = self.grader(rubric)
        return await grader.grade_many(
            (_as_case(c) for c in cases), use_cache=self.config.use_cache
        )

    async def agrade_file(
        self,
        input_path: str | Path,
        output_path: str | Path,
        rubric: str | Rubric = "faithfulness",
        *,
        human_labels: HumanLabels | str | Path | Iterable[Mapping[str, Any]] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Grade a JSONL/CSV file into a records file; returns the summary. Options: see
        `judge.engine.files.grade_file` (selection, overwrite, progress, prices).

        `human_labels` (a CSV/JSONL path, or rows with `id` and `label`) of some of the
        cases add the prediction-powered estimates to the summary (`summary["ppi"]`, as
        `judge grade --human-labels`); they are checked before the first request."""
        options.setdefault("use_cache", self.config.use_cache)
        options.setdefault("selection", Selection())
        if human_labels is not None:
            # label files are read by calibration's readers, loaded only when labels are given
            from judge.engine.measure.human_labels import to_human_labels

            options["human_labels"] = to_human_labels(human_labels)
        return await grade_file(self.grader(rubric), Path(input_path), Path(output_path), **options)

    def grade(self, case: CaseLike, rubric: str | Rubric = "faithfulness") -> GradedRecord:
        return self._run(lambda: self.agrade(case, rubric))

    def grade_many(
        self, cases: Iterable[CaseLike], rubric: str | Rubric = "faithfulness"
    ) -> list[GradedRecord]:
        return self._run(lambda: self.agrade_many(cases, rubric))

    def grade_file(
        self,
        input_path: str | Path,
        output_path: str | Path,
        rubric: str | Rubric = "faithfulness",
        *,
        human_labels: HumanLabels | str | Path | Iterable[Mapping[str, Any]] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """`agrade_file`, synchronously."""
        return self._run(
            lambda: self.agrade_file(
                input_path, output_path, rubric, human_labels=human_labels, **options
            )
        )

    def summarise(
        self, records: Iterable[GradedRecord], rubric: str | Rubric = "faithfulness"
    ) -> dict[str, Any]:
        """The summary (DESIGN.md) of records from `grade_many`, as `grade_file` returns it."""
        return summarise(records, self.rubric(rubric), prices_for(self.config))

    def _run(self, make: Callable[[], Awaitable[T]]) -> T:
        async def main() -> T:
            try:
                return await make()
            finally:
                await self.aclose()

        return asyncio.run(main())


def _as_case(case: CaseLike) -> Case:
    return case if isinstance(case, Case) else Case.model_validate(dict(case))
