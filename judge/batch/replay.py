"""Grading through batch files: export the requests, import the results as records.

The export streams the input once and writes one request line per case the cache cannot
answer, with the body the online path would send. The import replays a results file through
the engine's own grader (`grade_file`) with a backend that reads each case's line instead of
calling an endpoint, so the records, their order, the resume, the cache and the summary are
exactly the online path's. Differences, by design: no repair round-trip (a malformed reply
is a `parse_error`), one fixed output mode, and `latency_ms` 0 (a batch has no per-request
latency). A case without a line, or whose line failed, is an `api_error` record with the
reason; a line that matches no case is reported, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from calibration.io.jsontext import loads_bounded
from judge.batch.format import (
    MAX_BYTES_PER_FILE,
    MAX_REQUESTS_PER_FILE,
    RequestBuilder,
    RequestFiles,
    batch_mode,
    case_id_of,
    custom_id_for,
    is_success,
    read_result,
    result_custom_id,
)
from judge.config import JudgeConfig
from judge.engine.cache import VerdictCache, cache_key
from judge.engine.files import Selection, grade_file, selected_cases
from judge.engine.grader import Grader
from judge.engine.identity import same_model as identity_same_model
from judge.engine.inputs import iter_cases, validate_file
from judge.engine.model import LLMJudge, judge_info, read_reply
from judge.engine.outcome import Outcome
from judge.errors import UsageError
from judge.rubric import Rubric
from judge.schemas import Case

MISSING = "no result line for this case (custom_id {cid!r}) in the results"


@dataclass
class ExportReport:
    """What an export wrote: the request files and how many cases each holds."""

    paths: list[Path]
    counts: list[int]
    cached: int = 0
    already_graded: int = 0

    @property
    def requests(self) -> int:
        return sum(self.counts)


async def export_requests(
    rubric: Rubric,
    config: JudgeConfig,
    input_path: Path,
    requests_path: Path,
    *,
    selection: Selection | None = None,
    cache: VerdictCache | None = None,
    skip_ids: Iterable[str] = (),
    max_requests: int = MAX_REQUESTS_PER_FILE,
    max_bytes: int = MAX_BYTES_PER_FILE,
) -> ExportReport:
    """Write the request files for the selected cases that are neither in `skip_ids` (already
    graded) nor answered by the cache. The input is validated first and then streamed:
    memory does not grow with the number of cases."""
    refuse_computed(rubric)
    judge = model_judge(config, needed_for="the request bodies")
    try:
        count = validate_file(input_path, rubric).count
        builder = RequestBuilder(rubric, judge.client)
        identity = judge.cache_identity()
        skip = set(skip_ids)
        report = ExportReport(paths=[], counts=[])
        with RequestFiles(requests_path, max_requests, max_bytes) as files:
            chosen = (selection or Selection()).indices(count)
            for case in selected_cases(input_path, chosen):
                if case.id in skip:
                    report.already_graded += 1
                elif cache is not None and cache.get(cache_key(rubric, identity, case)):
                    report.cached += 1
                else:
                    files.write(builder.line(case))
        report.paths, report.counts = files.paths, files.counts
        return report
    finally:
        await judge.aclose()


def refuse_computed(rubric: Rubric) -> None:
    """UsageError for a rubric that sends no request (`Kind.needs_judge` False): a batch
    would hold nothing. Importing results computes such a rubric like the online path."""
    if not rubric.behaviour.needs_judge:
        raise UsageError(
            f"rubric {rubric.ref} is computed from the cases alone and sends no request, so "
            f"there is nothing to batch: grade it directly, judge grade INPUT --rubric {rubric.id}"
        )


def model_judge(config: JudgeConfig, *, needed_for: str) -> LLMJudge:
    if config.model is None:
        raise UsageError(f"batch grading needs --model (or $JUDGE_MODEL) for {needed_for}")
    if config.samples > 1:  # a batch file holds one request a case
        raise UsageError("--samples does not combine with batch grading: grade online for votes")
    return LLMJudge(config)


class ResultIndex:
    """custom_id -> where its line is, over one or more results files (OpenAI's output and
    error files, or vLLM's output file). Only offsets are held; lines are read when used.
    Where a custom_id appears twice, a successful line wins over a failed one."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = list(paths)
        self._where: dict[str, tuple[int, int, bool]] = {}
        self._handles: dict[int, IO[bytes]] = {}
        self.lines = 0
        self.duplicates = 0
        self.unreadable: list[str] = []
        self.models: dict[str, str] = {}  # model a successful line names -> its first line
        for number, path in enumerate(self.paths):
            if not path.is_file():
                raise UsageError(f"results file {path} does not exist")
            self._scan(number, path)

    def _scan(self, number: int, path: Path) -> None:
        with path.open("rb") as handle:
            offset = 0
            for line_no, raw in enumerate(handle, 1):
                start, offset = offset, offset + len(raw)
                if not raw.strip():
                    continue
                try:
                    data = loads_bounded(raw)
                except ValueError:  # not JSON, not UTF-8, or nested too deeply to be a result
                    data = None
                cid = result_custom_id(data)
                if cid is None:
                    self.unreadable.append(f"{path}:{line_no}")
                    continue
                self.lines += 1
                ok = is_success(data)
                model = result_model(data) if ok else None
                if model is not None:
                    self.models.setdefault(model, f"{path}:{line_no}")
                seen = self._where.get(cid)
                if seen is not None:
                    self.duplicates += 1
                    if seen[2] or not ok:
                        continue
                self._where[cid] = (number, start, ok)

    def take(self, custom_id: str) -> dict[str, Any] | None:
        """The line for `custom_id` (removed from the index), or None if there is none."""
        where = self._where.pop(custom_id, None)
        if where is None:
            return None
        number, offset, _ = where
        handle = self._handles.get(number)
        if handle is None:
            handle = self._handles[number] = self.paths[number].open("rb")
        handle.seek(offset)
        data: dict[str, Any] = loads_bounded(handle.readline())  # checked when indexed
        return data

    def discard(self, custom_id: str) -> bool:
        return self._where.pop(custom_id, None) is not None

    def remaining(self) -> list[str]:
        return list(self._where)

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()


class ReplayBackend:
    """A judge backend that answers each case from its result line (see `Backend`)."""

    def __init__(self, config: JudgeConfig, results: ResultIndex, missing: str = MISSING):
        self.config = config
        self.results = results
        self.missing = missing
        self.mode = batch_mode(config)
        self.name = config.model or "batch"
        if config.samples > 1:
            raise UsageError(
                "--samples does not combine with batch grading: grade online for votes"
            )
        self._judge = LLMJudge(config) if config.model else None

    def cache_identity(self) -> dict[str, Any] | None:
        return self._judge.cache_identity() if self._judge else None

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        cid = custom_id_for(case.id)
        data = self.results.take(cid)
        if data is None:
            return self._failed(self.missing.format(cid=cid))
        line = read_result(data, self.mode)
        if line.completion is None:
            return self._failed(line.error or "the batch request failed")
        outcome, _ = read_reply(rubric, line.completion, self.config, case=case)
        assert outcome is not None  # no repair in batch: always an outcome
        return outcome

    def _failed(self, reason: str) -> Outcome:
        return Outcome("api_error", judge_info(self.config, None, self.mode), error=reason)

    async def aclose(self) -> None:
        self.results.close()
        if self._judge is not None:
            await self._judge.aclose()


@dataclass
class ImportReport:
    """The summary of the records file, and what in the results did not fit the cases."""

    summary: dict[str, Any]
    result_lines: int = 0
    unknown: list[str] = field(default_factory=list)
    unused: int = 0
    duplicates: int = 0
    unreadable: list[str] = field(default_factory=list)

    def warnings(self) -> list[str]:
        out = []
        if self.unknown:
            shown = ", ".join(repr(case_id_of(c)[0]) for c in self.unknown[:5])
            more = f" and {len(self.unknown) - 5} more" if len(self.unknown) > 5 else ""
            out.append(
                f"{len(self.unknown)} result line(s) match no case in the input and were "
                f"ignored: {shown}{more}"
            )
        if self.unreadable:
            out.append(
                f"{len(self.unreadable)} line(s) of the results are not result lines "
                f"(no custom_id), e.g. {self.unreadable[0]}"
            )
        if self.duplicates:
            out.append(f"{self.duplicates} custom_id(s) appear more than once; one line each used")
        missing = self.summary.get("status", {}).get("api_error", 0)
        if missing:
            out.append(f"{missing} case(s) failed or have no result line: api_error records")
        return out


def result_model(data: dict[str, Any]) -> str | None:
    """The model a successful result line says answered it (`response.body.model`)."""
    model = data["response"]["body"].get("model")
    return model if isinstance(model, str) and model else None


def same_model(answered: str, configured: str) -> bool:
    """Whether a reply's model is the configured one: the same name, or a dated snapshot
    of it (`gpt-4o` is answered as `gpt-4o-2024-08-06`), case and a provider prefix aside
    (:func:`judge.engine.identity.same_model`: `gpt-4o-mini` is not `gpt-4o`)."""
    a, c = (name.strip().lower().rsplit("/", 1)[-1] for name in (answered, configured))
    return identity_same_model(c, a)


def check_models(index: ResultIndex, config: JudgeConfig) -> None:
    """UsageError when a results file was answered by another model than the one this
    import records as the judge: its verdicts would carry the wrong provenance (and be
    cached under the wrong judge)."""
    if config.model is None:
        return
    others = {m: where for m, where in index.models.items() if not same_model(m, config.model)}
    if others:
        model, where = next(iter(others.items()))
        more = f" (and {len(others) - 1} other model(s))" if len(others) > 1 else ""
        raise UsageError(
            f"{where}: the results were answered by model {model!r}{more}, not by --model "
            f"{config.model!r}; import them with --model {model}, or give the results of "
            f"{config.model}"
        )


async def import_results(
    rubric: Rubric,
    config: JudgeConfig,
    input_path: Path,
    result_paths: Sequence[Path],
    output_path: Path,
    *,
    selection: Selection | None = None,
    cache: VerdictCache | None = None,
    overwrite: bool = False,
    progress: bool = False,
    prices: tuple[float, float] | None = None,
    missing: str = MISSING,
) -> ImportReport:
    """Turn results files into the records file, through `grade_file`: cases in input
    order, cache first, resume, one record per selected case."""
    index = ResultIndex(result_paths)
    check_models(index, config)
    backend = ReplayBackend(config, index, missing)
    grader = Grader(backend, rubric, cache=cache, concurrency=64)
    try:
        summary = await grade_file(
            grader,
            input_path,
            output_path,
            selection=selection or Selection(),
            overwrite=overwrite,
            use_cache=config.use_cache,
            progress=progress,
            prices=prices,
        )
        report = ImportReport(summary, result_lines=index.lines, duplicates=index.duplicates)
        report.unused = sum(index.discard(custom_id_for(c.id)) for c in iter_cases(input_path))
        report.unknown, report.unreadable = index.remaining(), index.unreadable
        return report
    finally:
        await backend.aclose()
