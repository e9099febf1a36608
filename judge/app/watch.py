"""The watch job: follow new traces, sample them, grade them within a spend budget, and
write records, windows and a checkpoint (the loop is judge.traces.watch). Its side
outputs (Phoenix annotations, OpenTelemetry events, a Prometheus endpoint) are set up
and closed here; what a person should be told goes to `say`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from judge.app.judging import JudgeChoice, Say, judge_config, judge_notes, rubric_library
from judge.app.references import JoinCount, check_references_option, join_case, load_references
from judge.app.traces import phoenix_client
from judge.engine.cascade import settle_one
from judge.engine.certificate import Certificate, check_binding, load_certificate
from judge.engine.pricing import prices_for
from judge.errors import UsageError
from judge.kinds import get_kind
from judge.rubric import load_rubric
from judge.traces.checkpoint import folder_lock
from judge.traces.otel import EvaluationExporter
from judge.traces.sampling import Budget, Sampling
from judge.traces.sources import OtlpFileSource, PhoenixSource, TraceSource
from judge.traces.watch import WatchOptions, WatchState, watch

if TYPE_CHECKING:
    from judge.config import JudgeConfig
    from judge.engine.metrics import GradingMetrics
    from judge.rubric import Rubric
    from judge.schemas import Case
    from judge.traces.mapping import TraceMapping


@dataclass(frozen=True)
class WatchRequest:
    """`judge watch`."""

    otlp: Path | None
    phoenix: str | None
    project: str | None
    since: datetime | None
    until: datetime | None
    slice_attr: tuple[str, ...]
    rubric: str
    output: Path
    sample_rate: float
    slice_rate: tuple[str, ...]
    sample_seed: int
    budget_usd_per_hour: float | None
    budget_usd_per_day: float | None
    max_cases_per_hour: int | None
    max_cases_per_day: int | None
    price_input: float | None
    price_output: float | None
    window_minutes: int
    poll_seconds: float
    settle_seconds: float
    once: bool
    max_polls: int | None
    push: bool
    otel_endpoint: str | None
    metrics_port: int | None
    rubrics_dir: tuple[Path, ...]
    judge: JudgeChoice
    shape: str = "auto"  # `--as`: agent traces as conversations (judge.traces.conversation)
    label_rate: float | None = None  # `--label-rate R --label-dir DIR` (judge.app.watch_labels)
    label_dir: Path | None = None
    certificate: Path | None = None  # `--certificate`: a cascade of one (judge.engine.cascade)
    references: Path | None = None  # `--references REFS --join-on FIELD` (judge.app.references)
    join_on: str | None = None


@dataclass(frozen=True)
class Watched:
    """How the watch ended: its counts, its records file, and the OpenTelemetry
    exporter's tally line (None without `--otel-endpoint`)."""

    counts: dict[str, int]
    records: Path
    exported: str | None


def run_watch_job(
    request: WatchRequest, env: Mapping[str, str], mapping: TraceMapping, *, say: Say
) -> Watched:
    with ExitStack() as stack:
        rubric = load_rubric(request.rubric, rubric_library(request, env))
        stack.enter_context(folder_lock(request.output))  # a second watch: its first line
        config = judge_config(request.judge, env, say=say)
        required = tuple(get_kind(rubric.kind).required_inputs(rubric))
        options = _options(request, prices_for(config, override=_prices(request)), say)
        certificate = None if request.certificate is None else load_certificate(request.certificate)
        options.join = _joiner(request)
        source = _source(request, env, mapping, required, stack)
        if request.push:
            if not isinstance(source, PhoenixSource):
                raise UsageError("--push writes to Phoenix: it goes with --phoenix URL")
            options.phoenix = source.client
        if request.otel_endpoint:
            options.exporter = stack.enter_context(EvaluationExporter(request.otel_endpoint))
        if request.metrics_port is not None:
            options.metrics = _serve_metrics(request.metrics_port, say)
        for line in judge_notes(config):
            say(line)
        say(f"watch: {source.name} -> {request.output}")
        _label_queue(request, rubric, options, stack)
        state = asyncio.run(_watch(source, config, rubric, request.output, options, certificate))
    exporter = options.exporter
    exported = exporter.counts.line(exporter.endpoint) if exporter is not None else None
    return Watched(dict(state.counts), request.output / (rubric.id + ".jsonl"), exported)


async def _watch(
    source: TraceSource,
    config: JudgeConfig,
    rubric: Rubric,
    output: Path,
    options: WatchOptions,
    certificate: Certificate | None = None,
) -> WatchState:
    from judge.api import open_grader

    async with open_grader(config, rubric) as grader:
        if certificate is not None:  # bound to this rubric and judge, before any poll
            check_binding(certificate, rubric, [grader.identity])
            options.settle = settle_one(certificate)
        return await watch(source, grader, output, options)


def _source(
    request: WatchRequest,
    env: Mapping[str, str],
    mapping: TraceMapping,
    required: tuple[str, ...],
    stack: ExitStack,
) -> TraceSource:
    if (request.otlp is None) == (request.phoenix is None):
        raise UsageError("judge watch needs one of --otlp FILE or --phoenix URL")
    if request.otlp is not None:
        return OtlpFileSource(request.otlp, mapping, required, shape=request.shape)
    client = stack.enter_context(phoenix_client(request, env))
    return PhoenixSource(
        client,
        str(request.project),
        mapping,
        required,
        start=request.since,
        settle=request.settle_seconds,
        shape=request.shape,
    )


def _joiner(request: WatchRequest) -> Callable[[Case], Case] | None:
    """`--references --join-on`: the references read once, joined onto each case."""
    check_references_option(request.references, request.join_on)
    if request.references is None or request.join_on is None:
        return None
    refs = load_references(request.references, request.join_on)
    return lambda case: join_case(case, refs, JoinCount())


def _options(request: WatchRequest, prices: tuple[float, float] | None, say: Say) -> WatchOptions:
    if request.window_minutes < 1:
        raise UsageError("--window-minutes must be at least 1")
    budget = Budget(
        usd_per_hour=request.budget_usd_per_hour,
        usd_per_day=request.budget_usd_per_day,
        cases_per_hour=request.max_cases_per_hour,
        cases_per_day=request.max_cases_per_day,
    )
    if (budget.usd_per_hour is not None or budget.usd_per_day is not None) and prices is None:
        raise UsageError(
            "a USD budget needs prices: --price-input and --price-output (no list price "
            "is known for this model)"
        )
    return WatchOptions(
        sampling=Sampling(
            request.sample_rate, _slice_rates(request.slice_rate), request.sample_seed
        ),
        budget=budget,
        prices=prices,
        window_seconds=request.window_minutes * 60,
        poll_seconds=request.poll_seconds,
        once=request.once,
        max_polls=request.max_polls,
        say=say,
    )


def _label_queue(
    request: WatchRequest, rubric: Rubric, options: WatchOptions, stack: ExitStack
) -> None:
    """`--label-rate R --label-dir DIR`: queue a share of what is graded for people, and
    set the live agreement on /metrics once a poll."""
    if (request.label_rate is None) != (request.label_dir is None):
        raise UsageError("--label-rate and --label-dir go together")
    if request.label_dir is None or request.label_rate is None:
        return
    from judge.app.watch_labels import open_production_labels

    labels = open_production_labels(
        request.label_dir,
        rubric,
        request.output / (rubric.id + ".jsonl"),
        rate=request.label_rate,
        seed=request.sample_seed,
        metrics=options.metrics,
        say=options.say,
    )
    stack.callback(labels.store.close)
    options.on_graded, options.on_poll = labels.graded, labels.polled
    labels.polled()  # the gauges hold figures from the first scrape on
    options.say(f"watch: labels queued to {labels.store.path} (rate {request.label_rate})")


def _prices(request: WatchRequest) -> tuple[float, float] | None:
    given = (request.price_input, request.price_output)
    if given == (None, None):
        return None
    if None in given:
        raise UsageError("--price-input and --price-output go together")
    return (float(given[0] or 0.0), float(given[1] or 0.0))


def _slice_rates(items: tuple[str, ...]) -> dict[str, float]:
    rates = {}
    for item in items:
        name, _, rate = item.partition("=")
        try:
            rates[name] = float(rate)
        except ValueError:
            raise UsageError(f"--slice-rate {item!r}: expected SLICE=RATE") from None
    return rates


def _serve_metrics(port: int, say: Say) -> GradingMetrics:
    from judge.engine.metrics import GradingMetrics
    from judge.traces.metrics_http import serve_metrics

    metrics = GradingMetrics()
    try:
        server = serve_metrics(metrics.registry, port)  # Host-checked as judge/web's are
    except OSError as exc:
        raise UsageError(f"--metrics-port {port}: {exc.strerror or exc}") from None
    say(f"watch: metrics at http://127.0.0.1:{server.server_address[1]}/metrics")
    return metrics
