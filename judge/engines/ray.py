"""Bulk grading on a Ray cluster: the grader's per-case work mapped over a Ray Dataset.

`grade_dataset(ds, rubric, judge)` is the executor: `Dataset.map_batches` with an actor pool
(`ActorPoolStrategy(size=actors)`), each actor holding the project's own async client,
verdict cache and `Grader` (judge.engines._batches), so retries, Retry-After, rate-limit
pacing and the cache behave as in `judge grade`, and every record is the record `judge
grade` writes (fields, provenance, `judge_id`, statuses, parse errors kept as rows). Ray
schedules and retries the batches: an actor that dies is restarted and its batches run
again (Ray Data's actor pools default to `max_restarts=-1`, `max_task_retries=-1`); a
batch's records reach the driver only when the whole batch is done, so none is lost or
duplicated. No scheduler or queue of our own.

`grade_file(config, rubric, input_path, output, ...)` is `judge grade --engine ray`: the
input is read and validated by the project's reader (JSONL, CSV or Parquet), resume
follows `judge grade`'s rules (judge.engine.records, judge.engine.resume: records `ok` or
`abstained` from the same rubric file and judge are kept, a file from another judge is
refused), only the cases still to grade go to Ray, each record is appended to OUT as it
arrives (a kill loses nothing finished) and the file is then rewritten in input order and
summarised by the existing summary code. Progress is Ray Data's own.

Ray is imported only here, and only when one of these runs (`pip install 'llm-judge[ray]'`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.api import Judge, open_grader
from judge.config import JudgeConfig
from judge.engine.files import Selection, selected_cases, summarise_file
from judge.engine.identity import describe_identity
from judge.engine.inputs import iter_cases, validate_file
from judge.engine.records import RecordWriter, check_resumable, finalize, finished_inputs
from judge.engine.resume import RunTally, file_ids, kept_outside, still_finished
from judge.engines._batches import CASE_COLUMN, BatchHook, GradeBatches, RowForm
from judge.errors import JudgeError, UsageError
from judge.rubric import Rubric, load_rubric
from judge.schemas import GradedRecord

if TYPE_CHECKING:
    import ray.data

    from judge.engine.measure.human_labels import HumanLabels

DEFAULT_ACTORS = 2
# An actor waits on the network, not the CPU: half a CPU each, so actors never hold every
# CPU of a small cluster while the read tasks that feed them wait for one (a deadlock).
ACTOR_CPUS = 0.5
INSTALL = "pip install 'llm-judge[ray]'"


def require_ray() -> Any:
    """The `ray` module, or UsageError (exit 2) saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401 (the extra is ray[data])
    except ImportError as exc:
        raise UsageError(f"--engine ray needs Ray Data: {INSTALL} ({exc})") from None
    return ray


def batch_size_for(config: JudgeConfig) -> int:
    """Cases per Ray batch: four times the judge's concurrency (at least 64), so an actor
    keeps `concurrency` requests in flight while the slowest of a batch finishes."""
    return max(4 * config.max_in_flight, 64)


def grade_dataset(
    ds: ray.data.Dataset,
    rubric: str | Rubric,
    judge: JudgeConfig | Judge,
    *,
    actors: int = DEFAULT_ACTORS,
    batch_size: int | None = None,
    use_cache: bool | None = None,
    skip_ids: Iterable[str] = (),
    form: RowForm = "fields",
    ray_remote_args: dict[str, Any] | None = None,
    after_batch: BatchHook | None = None,
) -> ray.data.Dataset:
    """The records of the dataset's cases, as a (lazy) Ray Dataset with the columns `id`,
    `rubric`, `status`, `score`, `label`, `judge_id` and `record` (the record as the JSON
    line `judge grade` writes). Rows are cases by a file's field names (`form="fields"`,
    what `ray.data.read_json` / `read_parquet` give) or one `case` column of case JSON
    (`form="json"`). `judge` is a `JudgeConfig` or a `Judge` (its config is used; each
    actor opens its own client and cache). `actors` actors grade in parallel, each with
    the judge's `concurrency` requests in flight; `skip_ids` are left out (resume).
    Output order is Ray's: sort by the input's ids after collecting (`grade_file` does).
    `ray_remote_args` go to `map_batches` (default `num_cpus=ACTOR_CPUS`: an actor waits
    on the network). `after_batch` is called in the actor with each batch's records
    before they are returned (a fault hook for tests: a kill there loses a graded batch,
    which Ray runs again). A row that is not a case raises InputError naming its id.

    >>> import ray                                                    # doctest: +SKIP
    >>> ds = ray.data.read_json("s3://bucket/answers.jsonl")           # doctest: +SKIP
    >>> out = grade_dataset(ds, "faithfulness", JudgeConfig(model="m", base_url=URL))  # doctest: +SKIP
    >>> out.write_parquet("s3://bucket/records/")                      # doctest: +SKIP
    """
    ray = require_ray()
    if actors < 1:
        raise UsageError(f"actors must be at least 1, got {actors}")
    rubric = rubric if isinstance(rubric, Rubric) else load_rubric(rubric)
    config = judge.config if isinstance(judge, Judge) else judge
    skip = set(skip_ids)
    if skip:
        ds = ds.filter(lambda row: row["id"] not in skip)
    cache = config.use_cache if use_cache is None else use_cache
    graded = ds.map_batches(
        GradeBatches,
        fn_constructor_kwargs={
            "config": config,
            "rubric": rubric,
            "form": form,
            "use_cache": cache,
            "after_batch": after_batch,
        },
        compute=ray.data.ActorPoolStrategy(size=actors),
        batch_size=batch_size or batch_size_for(config),
        batch_format="pyarrow",
        **{"num_cpus": ACTOR_CPUS, **(ray_remote_args or {})},
    )
    # an actor's fatal judge error (bad key, unknown model) reaches the driver as itself,
    # not as Ray Data's UserCodeException (which loses its cause on the way)
    graded.context.raise_original_map_exception = True
    return graded


def records_of(ds: ray.data.Dataset) -> Iterator[GradedRecord]:
    """The records of `grade_dataset`'s output, as they are produced (Ray's order). A
    fatal judge error raised in an actor is raised here as itself (`judge_error_in`)."""
    try:
        for row in ds.iter_rows():
            yield GradedRecord.model_validate_json(row["record"])
    except Exception as exc:
        cause = judge_error_in(exc)
        if cause is None or cause is exc:
            raise
        raise cause from None


def judge_error_in(exc: BaseException) -> JudgeError | None:
    """The project's own error inside a Ray error (a fatal API error, a bad row), if any:
    Ray wraps what an actor raised (`RayTaskError.cause`), cause by cause."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        wrapped = getattr(current, "cause", None)
        if isinstance(wrapped, BaseException) and id(wrapped) not in seen:
            current = wrapped
            continue
        if isinstance(current, JudgeError):
            return current
        current = current.__cause__ or current.__context__
    return None


class _RayNotices(logging.Filter):
    """Drops two notices Ray says on every run this engine starts: that token
    authentication is on (the safe default; its warning that it is off still shows) and
    that progress bars are off (turned off here, below)."""

    NOTICES = ("Token authentication is enabled", "Progress bars disabled")

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.NOTICES)


# the loggers that say them
_NOTICE_LOGGERS = (
    "ray._private.authentication.authentication_token_setup",
    "ray.data._internal.progress",
)


def quiet_ray(ray: Any) -> None:
    """Ray's own lines kept to warnings and errors on a run this engine starts: no INFO
    lines (instance started, execution plan, progress logged every few seconds when
    stderr is not a terminal) and no progress bars; the run's summary says what was done.
    A Ray already initialised (a notebook) keeps its own settings."""
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    for name in _NOTICE_LOGGERS:
        logging.getLogger(name).addFilter(_RayNotices())
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False


@contextlib.contextmanager
def connected(address: str | None) -> Iterator[None]:
    """Ray connected for the block: to `address` (`auto`, `ray://host:10001`, host:port),
    else a local instance started here; one already initialised (a notebook, a test) is
    used as it is. Only what was started here is shut down."""
    ray = require_ray()
    if ray.is_initialized():
        yield
        return
    quiet_ray(ray)
    ray.init(address=address, logging_level=logging.WARNING)
    try:
        yield
    finally:
        ray.shutdown()


async def _identity(config: JudgeConfig, rubric: Rubric) -> tuple[dict[str, Any], str, bool]:
    async with open_grader(config, rubric) as grader:
        sends = grader.backend.cache_identity() is not None and not grader.computed
        return grader.identity, grader.judge_id, sends


def grade_file(
    config: JudgeConfig,
    rubric: Rubric,
    input_path: Path,
    output: Path,
    *,
    selection: Selection | None = None,
    overwrite: bool = False,
    use_cache: bool = True,
    actors: int = DEFAULT_ACTORS,
    address: str | None = None,
    prices: tuple[float, float] | None = None,
    human_labels: HumanLabels | None = None,
    batch_size: int | None = None,
    after_batch: BatchHook | None = None,
) -> dict[str, Any]:
    """`judge grade INPUT --engine ray`: grade `input_path` into `output` on Ray; the
    summary of the output file, with the `run` block `judge grade` gives (see the module).
    Raises InputError, OutputConflictError (nothing written or sent) or a fatal ApiError
    (the records already written stay)."""
    require_ray()
    count = validate_file(input_path, rubric).count
    chosen = (selection or Selection()).indices(count)
    if human_labels is not None:
        human_labels.check(rubric, (c.id for c in iter_cases(input_path)))
    if overwrite and output.exists():
        output.unlink()
    identity, judge_id, sends = asyncio.run(_identity(config, rubric))
    check_resumable(
        output,
        rubric_sha256=rubric.sha256,
        rubric_ref=rubric.ref,
        judge_id=judge_id,
        judge=describe_identity(identity),
        identity=identity,
    )
    held = finished_inputs(output, rubric.sha256)  # kept while their case is unchanged
    finished = still_finished(held, rubric, selected_cases(input_path, chosen))
    done = finished.ids
    kept = kept_outside(output, input_path, chosen)
    tally = RunTally(kept=len(done - kept), outside=len(kept), sends=sends)
    tally.changed, tally.unchecked = finished.changed, finished.unchecked
    rows = [
        {"id": case.id, CASE_COLUMN: case.model_dump_json()}
        for case in selected_cases(input_path, chosen)
        if case.id not in done
    ]
    del done
    with RecordWriter(output) as writer:
        if rows:
            with connected(address):
                ray = require_ray()
                ds = ray.data.from_items(rows)
                del rows
                graded = grade_dataset(
                    ds,
                    rubric,
                    config,
                    actors=actors,
                    batch_size=batch_size,
                    use_cache=use_cache,
                    form="json",
                    after_batch=after_batch,
                )
                for record in records_of(graded):
                    writer.write(record)
                    tally.add(record)
    finalize(output, file_ids(input_path, chosen, kept))
    summary = summarise_file(output, rubric, prices, human_labels)
    return {**summary, "run": tally.as_dict(prices)}


def grade_dataset_vllm(
    ds: ray.data.Dataset,
    rubric: str | Rubric,
    judge: JudgeConfig | Judge,
    *,
    form: RowForm = "fields",
    **options: Any,
) -> ray.data.Dataset:
    """The in-cluster executor: the records of the dataset's cases graded by vLLM on the
    cluster's GPUs through `ray.data.llm` (judge.engines._vllm: the same prompt, guided
    decoding from the verdict schema, the same parser and records as `grade_dataset`).
    `options` (model_source, concurrency, batch_size, engine_kwargs) configure vLLM. Needs
    vLLM installed on the cluster, and GPUs to run."""
    require_ray()
    from judge.engines._vllm import build_vllm_processor

    rubric = rubric if isinstance(rubric, Rubric) else load_rubric(rubric)
    config = judge.config if isinstance(judge, Judge) else judge
    processor = build_vllm_processor(config, rubric, form=form, **options)
    return processor(ds)
