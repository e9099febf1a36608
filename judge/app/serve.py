"""The serve job: the grading service (FastAPI under uvicorn) on a socket bound before
anything is said. It refuses first what would make the server useless or unsafe, each a
one-line UsageError: a busy port, a missing or short token off loopback, a job index that
cannot be read. Every log line made from then on passes the server's redactor (keys, the
token, passwords in URLs), whatever the verbosity.

The service sits below the application layer and never imports it: what it needs of a
job is given to `create_app` here (`service_app`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from judge.app.judging import Say
from judge.app.listen import bind, require_strong_token
from judge.app.logs import redact_logs
from judge.config import Redactor
from judge.service import create_app, load_service_config
from judge.service.config import ServiceConfig
from judge.web import serve


@dataclass(frozen=True)
class ServeRequest:
    """`judge serve`."""

    host: str
    port: int
    config: Path | None
    data_dir: Path | None
    cache_dir: Path | None
    database: str | None = None
    otel_endpoint: str | None = None  # --otel-endpoint URL: judge.traces.otel


def check_token(host: str, token: str | None) -> None:
    """Off loopback the service needs a token of at least MIN_TOKEN_CHARS characters."""
    how = "set JUDGE_SERVICE_TOKEN or `token`/`token_env` in the configuration"
    require_strong_token(host, token, how)


def service_app(config: ServiceConfig) -> Any:
    """The service's FastAPI app for `config` (the one place the job builds it)."""
    return create_app(config)


def serve_service(request: ServeRequest, env: Mapping[str, str], *, say: Say) -> None:
    """Check, bind, say where, and serve until stopped."""
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
    redact_logs(Redactor(config.secrets()))
    try:
        app = service_app(config)
    except BaseException:
        sock.close()
        raise
    port = sock.getsockname()[1]
    names = ", ".join(config.judge_names())
    auth = "bearer token required" if config.token is not None else "no token (loopback only)"
    say(
        f"judge serve: http://{request.host}:{port} (docs at /docs); judges: {names}; "
        f"{auth}; data: {jobs_location(config)}"
    )
    serve(app, sock, timeout_graceful_shutdown=10)


def jobs_location(config: ServiceConfig) -> str:
    """Where the jobs live, as the start line says it: the data dir, or the database with
    its password left out."""
    if config.database is None:
        return str(config.data_dir)
    parts = urlsplit(config.database)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"postgresql://{host}{port}{parts.path} (replicas share it)"
