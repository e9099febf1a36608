"""`judge watch`: grade live traffic from traces (a growing OTLP JSON file or a Phoenix
project), sampled, on a budget, resumable. Parsing and printing only; the loop is
judge.traces.watch."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path

from judge.api import open_grader
from judge.cli._common import (
    add_judge_options,
    announce_judge,
    config_from_args,
    rubric_library,
)
from judge.cli._requests import WatchRequest, request_from
from judge.cli.traces import add_source_options, mapping_of, phoenix_client
from judge.engine.metrics import GradingMetrics
from judge.engine.pricing import prices_for
from judge.errors import UsageError
from judge.kinds import get_kind
from judge.rubric import load_rubric
from judge.traces.mapping import TraceMapping
from judge.traces.otel import EvaluationExporter
from judge.traces.sampling import Budget, Sampling
from judge.traces.sources import OtlpFileSource, PhoenixSource, TraceSource
from judge.traces.watch import WatchOptions, WatchState, watch

EXAMPLES = """examples:
  judge watch --otlp traces.jsonl --rubric faithfulness -o watch/ --sample-rate 0.1 \\
      --max-cases-per-day 500
  judge watch --phoenix http://127.0.0.1:6006 --project rag-app --rubric faithfulness \\
      -o watch/ --budget-usd-per-day 5 --push --metrics-port 9464
"""


def add_watch(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "watch",
        help="grade live traffic from traces: sampled, on a budget, resumable",
        description="Follow new traces, sample them, grade them within a spend budget per hour "
        "and per day, and write records (DIR/RUBRIC.jsonl), the pass rate per window "
        "(DIR/windows.jsonl) and a checkpoint (a restart neither grades twice nor skips).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_source_options(p)
    p.add_argument("--rubric", required=True, help="ID or ID@VERSION")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="watch folder")
    g = p.add_argument_group("sampling and budget")
    g.add_argument("--sample-rate", type=float, default=1.0, help="share of requests graded (1)")
    g.add_argument(
        "--slice-rate",
        action="append",
        default=[],
        metavar="SLICE=RATE",
        help="a slice's own rate (stratified sampling); repeatable",
    )
    g.add_argument("--sample-seed", type=int, default=0, help="which requests are sampled (0)")
    g.add_argument("--budget-usd-per-hour", type=float, help="spend limit per UTC hour")
    g.add_argument("--budget-usd-per-day", type=float, help="spend limit per UTC day")
    g.add_argument("--max-cases-per-hour", type=int, help="cases graded per UTC hour")
    g.add_argument("--max-cases-per-day", type=int, help="cases graded per UTC day")
    g.add_argument("--price-input", type=float, help="USD per million prompt tokens")
    g.add_argument("--price-output", type=float, help="USD per million completion tokens")
    r = p.add_argument_group("running")
    r.add_argument("--window-minutes", type=int, default=60, help="pass-rate window (60)")
    r.add_argument("--poll-seconds", type=float, default=10.0, help="between polls (10)")
    r.add_argument(
        "--settle-seconds",
        type=float,
        default=30.0,
        help="Phoenix: take a request once its root span is this old (30)",
    )
    r.add_argument("--once", action="store_true", help="one poll, then stop")
    r.add_argument("--max-polls", type=int, help="stop after N polls")
    r.add_argument("--push", action="store_true", help="Phoenix: write verdicts as annotations")
    r.add_argument("--otel-endpoint", metavar="URL", help="send gen_ai.evaluation.result events")
    r.add_argument("--metrics-port", type=int, help="serve Prometheus /metrics on 127.0.0.1:PORT")
    add_judge_options(p)
    p.set_defaults(run=run_watch)


def run_watch(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    request = request_from(WatchRequest, args)
    mapping = mapping_of(getattr(args, "project_config", None), request.slice_attr)
    return watch_command(request, env, mapping)


def watch_command(request: WatchRequest, env: Mapping[str, str], mapping: TraceMapping) -> int:
    rubric = load_rubric(request.rubric, rubric_library(request, env))
    config = config_from_args(request.judge, env)
    required = tuple(get_kind(rubric.kind).required_inputs(rubric))
    options = _options(request, prices_for(config, override=_prices(request)))
    with ExitStack() as stack:
        source = _source(request, env, mapping, required, stack)
        if request.push:
            if not isinstance(source, PhoenixSource):
                raise UsageError("--push writes to Phoenix: it goes with --phoenix URL")
            options.phoenix = source.client
        if request.otel_endpoint:
            options.exporter = stack.enter_context(EvaluationExporter(request.otel_endpoint))
        if request.metrics_port is not None:
            options.metrics = _serve_metrics(request.metrics_port)
        announce_judge(config)
        print(f"watch: {source.name} -> {request.output}", file=sys.stderr)

        async def run() -> WatchState:
            async with open_grader(config, rubric) as grader:
                return await watch(source, grader, request.output, options)

        state = asyncio.run(run())
    counts = ", ".join(f"{k} {v}" for k, v in sorted(state.counts.items())) or "nothing new"
    print(f"watch: {counts}; records: {request.output / (rubric.id + '.jsonl')}")
    if options.exporter is not None:
        print(options.exporter.counts.line(options.exporter.endpoint), file=sys.stderr)
    return 0


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
        return OtlpFileSource(request.otlp, mapping, required)
    client = stack.enter_context(phoenix_client(request, env))
    return PhoenixSource(
        client,
        str(request.project),
        mapping,
        required,
        start=request.since,
        settle=request.settle_seconds,
    )


def _options(request: WatchRequest, prices: tuple[float, float] | None) -> WatchOptions:
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
        say=lambda line: print(line, file=sys.stderr, flush=True),
    )


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


def _serve_metrics(port: int) -> GradingMetrics:
    from prometheus_client import start_http_server

    metrics = GradingMetrics()
    try:
        start_http_server(port, addr="127.0.0.1", registry=metrics.registry)
    except OSError as exc:
        raise UsageError(f"--metrics-port {port}: {exc.strerror or exc}") from None
    print(f"watch: metrics at http://127.0.0.1:{port}/metrics", file=sys.stderr)
    return metrics
