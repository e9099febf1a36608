"""`judge batch status|fetch`: arguments -> a `BatchRequest`, the job (judge.app.batch), its
exit code. The batch forms of `judge grade` run through judge.app.grade.

Two settings come from the environment, for runs that should not sit waiting:
JUDGE_BATCH_POLL (first poll interval in seconds, 5) and JUDGE_BATCH_MAX_WAIT (stop waiting
after this many seconds, 0 = submit only; the batches keep running and `judge batch fetch`
finishes the run).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from judge.app.edge import reporting
from judge.cli._common import add_rubrics_dir_option
from judge.cli._help import BATCH_EXAMPLES
from judge.cli._parquet import add_parquet_option
from judge.cli._requests import BatchRequest, request_from
from judge.cli._run import cli_edge


def add_batch_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "batch",
        help="status of Batch API runs; fetch one whose process ended",
        epilog=BATCH_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "action",
        choices=["status", "fetch"],
        help="status: print where the batches are; fetch: wait for them and write the records",
    )
    p.add_argument(
        "batch_id", help="a batch id (fetch: any id of the run; its manifest finds the rest)"
    )
    p.add_argument("-o", "--output", type=Path, help="records file of the run (fetch: required)")
    p.add_argument("--base-url", help="endpoint (default: the run's, or $OPENAI_BASE_URL)")
    p.add_argument("--no-wait", action="store_true", help="fetch: do not wait for running batches")
    p.add_argument("--poll-interval", type=float, default=None, help="first poll interval (s)")
    p.add_argument(
        "--max-retries",
        type=int,
        default=None,
        help="retries per request after a 408/409/429/5xx, a timeout or a dropped connection "
        "(default: the run's, else 5)",
    )
    p.add_argument("--summary", type=Path, help="fetch: also write the summary as JSON here")
    add_parquet_option(p)
    p.add_argument("--cache-dir", type=Path, default=None, help="(~/.cache/llm-judge)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    add_rubrics_dir_option(p)
    p.set_defaults(run=run_batch_command)


def run_batch_command(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return batch_command(request_from(BatchRequest, args), env)


def batch_command(request: BatchRequest, env: Mapping[str, str]) -> int:
    """`judge batch status | fetch`, from its request."""
    from judge.app.batch import batch_command as job  # the SDK's types: only when asked for

    with reporting(cli_edge(env)):
        return job(request, env)
