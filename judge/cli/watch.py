"""`judge watch`: grade live traffic from traces (a growing OTLP JSON file or a Phoenix
project), sampled, on a budget, resumable. Parsing and printing only; the job is
judge.app.watch's (the loop judge.traces.watch's)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from judge.app.traces import mapping_of
from judge.app.watch import WatchRequest, run_watch_job
from judge.cli._common import add_judge_options, say
from judge.cli._references import add_references_option
from judge.cli._requests import request_from
from judge.cli.traces import add_source_options

EXAMPLES = """examples:
  judge watch --otlp traces.jsonl --rubric faithfulness -o watch/ --sample-rate 0.1 \\
      --max-cases-per-day 500
  judge watch --phoenix http://127.0.0.1:6006 --project rag-app --rubric faithfulness \\
      -o watch/ --budget-usd-per-day 5 --push --metrics-port 9464
  judge watch --otlp traces.jsonl --rubric faithfulness -o watch/ --label-rate 0.05 \\
      --label-dir labels/ --metrics-port 9464      (then: judge label labels/ --rubric faithfulness)
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
    add_references_option(p)
    p.add_argument("--rubric", required=True, help="ID or ID@VERSION")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="watch folder")
    _add_budget_options(p.add_argument_group("sampling and budget"))
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
    lab = p.add_argument_group("labels from production")
    lab.add_argument("--label-rate", type=float, metavar="R",
                     help="queue this share of what is graded for people (seeded by --sample-seed)")  # fmt: skip
    lab.add_argument("--label-dir", type=Path, metavar="DIR",
                     help="the judge label store to queue to (DIR/RUBRIC.labels.sqlite, private)")  # fmt: skip
    lab.add_argument("--certificate", type=Path, metavar="CERT.json",
                     help="apply a certificate (judge certify) made for this judge: a verdict "
                     "below its certified threshold is recorded as escalated, and with "
                     "--label-dir always queued for people, first in line")  # fmt: skip
    add_judge_options(p)
    p.set_defaults(run=run_watch)


def _add_budget_options(g: argparse._ArgumentGroup) -> None:
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


def run_watch(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    request = request_from(WatchRequest, args)
    mapping = mapping_of(getattr(args, "project_config", None), request.slice_attr)
    watched = run_watch_job(request, env, mapping, say=say)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(watched.counts.items())) or "nothing new"
    print(f"watch: {counts}; records: {watched.records}")
    if watched.counts.get("abstained") and not watched.counts.get("graded"):
        print(
            f"watch: every one of the {watched.counts['abstained']} cases decided abstained: "
            "nothing was scored (each record's error says why)",
            file=sys.stderr,
        )
    if watched.exported is not None:
        print(watched.exported, file=sys.stderr)
    return 0
