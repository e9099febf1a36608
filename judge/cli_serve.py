"""`judge serve`: run the grading service (FastAPI app under uvicorn)."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import sys
from collections.abc import Mapping
from pathlib import Path

from judge.cli_help import SERVE_EXAMPLES
from judge.errors import UsageError

log = logging.getLogger(__name__)


def add_serve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="run the grading service (HTTP API, jobs, OpenAPI at /docs)",
        epilog=SERVE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (8080)")
    p.add_argument("--config", type=Path, help="service configuration (YAML or TOML)")
    p.add_argument("--data-dir", type=Path, help="job store folder (overrides the config)")
    p.add_argument("--cache-dir", type=Path, help="verdict cache folder (overrides the config)")
    p.set_defaults(run=run_serve)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_serve(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    import uvicorn

    from judge.service import create_app
    from judge.service_config import load_service_config

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    config = load_service_config(args.config, env, data_dir=args.data_dir, cache_dir=args.cache_dir)
    if config.token is None and not is_loopback(args.host):
        raise UsageError(
            f"binding to {args.host} needs a bearer token: set JUDGE_SERVICE_TOKEN "
            "or `token`/`token_env` in the configuration"
        )
    app = create_app(config)
    names = ", ".join(config.judge_names())
    auth = "bearer token required" if config.token is not None else "no token (loopback only)"
    print(
        f"judge serve: http://{args.host}:{args.port} (docs at /docs); judges: {names}; "
        f"{auth}; data: {config.data_dir}",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        timeout_keep_alive=5,
        timeout_graceful_shutdown=10,
        server_header=False,
    )
    return 0
