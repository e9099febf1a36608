"""`judge serve`: run the grading service. Parsing and printing only; the job, with its
checks before anything is printed (a busy port, a missing or short token off loopback, a
job index that cannot be read: each a one-line error, exit 2), is judge.app.serve's."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from judge.app.listen import MIN_TOKEN_CHARS, bind, is_loopback
from judge.app.serve import ServeRequest, check_token, serve_service
from judge.app.serve import jobs_location as _where
from judge.cli._common import say
from judge.cli._help import SERVE_EXAMPLES
from judge.cli._requests import request_from

__all__ = [
    "MIN_TOKEN_CHARS", "_where", "add_serve", "bind", "check_token", "is_loopback", "run_serve"
]  # fmt: skip


def add_serve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="run the grading service (HTTP API, jobs, OpenAPI at /docs)",
        description="Run the grading service: the same grader, probes and calibration over "
        "HTTP, with durable jobs; loopback by default, a token required on any other address.",
        epilog=SERVE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (8080)")
    p.add_argument("--config", type=Path, help="service configuration (YAML or TOML)")
    p.add_argument("--data-dir", type=Path, help="job store folder (overrides the config)")
    p.add_argument("--cache-dir", type=Path, help="verdict cache folder (overrides the config)")
    p.add_argument(
        "--database",
        metavar="URL",
        help="postgresql://... : jobs in PostgreSQL, shared by every `judge serve` on it "
        "(overrides the config's `database`; default: SQLite in the data dir)",
    )
    p.add_argument(
        "--otel-endpoint",
        metavar="URL",
        help="also send each record as an OpenTelemetry gen_ai.evaluation.result event to this "
        "OTLP/HTTP collector (overrides the config's `otel_endpoint`; the traces extra)",
    )
    p.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    serve_service(request_from(ServeRequest, args), env, say=say)
    return 0
