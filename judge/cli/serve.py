"""`judge serve`: run the grading service (FastAPI app under uvicorn).

Before anything is printed the command checks what would make the server useless or unsafe,
each a one-line error and exit 2: a busy port (the socket is bound here and handed to
uvicorn, so nothing can take it in between), a missing or short token off loopback, a job
index that cannot be read. Every log line passes the server's redactor (keys, the token,
passwords in URLs), whatever the verbosity.
"""

from __future__ import annotations

import argparse
import errno
import logging
import socket
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from judge.cli._help import SERVE_EXAMPLES
from judge.cli._listen import MIN_TOKEN_CHARS, is_loopback, require_strong_token
from judge.cli._logging import redact_logs
from judge.cli._requests import ServeRequest, request_from
from judge.config import Redactor
from judge.errors import UsageError
from judge.service import create_app, load_service_config
from judge.service.config import ServiceConfig
from judge.web import serve

__all__ = [
    "MIN_TOKEN_CHARS",
    "add_serve",
    "bind",
    "check_token",
    "is_loopback",
    "run_serve",
    "serve_command",
]

log = logging.getLogger(__name__)


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


def check_token(host: str, token: str | None) -> None:
    """Off loopback the service needs a token of at least MIN_TOKEN_CHARS characters."""
    how = "set JUDGE_SERVICE_TOKEN or `token`/`token_env` in the configuration"
    require_strong_token(host, token, how)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or a one-line UsageError saying why not."""
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {port}")
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror or exc
        raise UsageError(f"cannot listen on {host}:{port}: {reason}") from None
    return sock


def install_log_redaction(redact: Callable[[str], str]) -> None:
    """Pass every log record made from now on, by any logger, through `redact`."""
    redact_logs(redact)


def run_serve(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return serve_command(request_from(ServeRequest, args), env)


def serve_command(request: ServeRequest, env: Mapping[str, str]) -> int:
    """`judge serve`, from its request."""
    config = load_service_config(
        request.config,
        env,
        data_dir=request.data_dir,
        cache_dir=request.cache_dir,
        database=request.database,
        otel_endpoint=request.otel_endpoint,
    )
    if config.otel_endpoint is not None:
        from judge.traces.otel import require_otel

        require_otel()
    check_token(request.host, config.token.get_secret_value() if config.token else None)
    sock = bind(request.host, request.port)
    install_log_redaction(Redactor(config.secrets()))
    try:
        app = create_app(config)
    except BaseException:
        sock.close()
        raise
    port = sock.getsockname()[1]
    names = ", ".join(config.judge_names())
    auth = "bearer token required" if config.token is not None else "no token (loopback only)"
    print(
        f"judge serve: http://{request.host}:{port} (docs at /docs); judges: {names}; "
        f"{auth}; data: {_where(config)}",
        file=sys.stderr,
        flush=True,
    )
    serve(app, sock, timeout_graceful_shutdown=10)
    return 0


def _where(config: ServiceConfig) -> str:
    """Where the jobs live, as the start line says it: the data dir, or the database with
    its password left out."""
    if config.database is None:
        return str(config.data_dir)
    parts = urlsplit(config.database)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"postgresql://{host}{port}{parts.path} (replicas share it)"
