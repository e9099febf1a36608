"""`judge watch --metrics-port`: Prometheus' /metrics on 127.0.0.1, behind the Host check
every local server of this project applies (judge.web.guard): a page whose name a
DNS-rebinding attack re-pointed at 127.0.0.1 reaches us with its own name in `Host` and is
answered 400, so it cannot read the counts. Prometheus itself scrapes with the address it
was given (127.0.0.1, localhost), which passes."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from judge.web.guard import RequestGuard

__all__ = ["serve_metrics"]

ADDRESS = "127.0.0.1"
_REASONS = {400: "Bad Request", 403: "Forbidden", 415: "Unsupported Media Type"}


async def _never(*_: Any) -> None:  # the guard's inner app: only its `check` is used
    raise AssertionError("unreachable")


def guarded(app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """A WSGI app that first applies judge.web's request checks (Host on loopback above
    all) and answers their JSON error instead of `app` when one fails."""
    guard = RequestGuard(_never)

    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        scope = {
            "type": "http",
            "method": environ.get("REQUEST_METHOD", "GET"),
            "path": environ.get("PATH_INFO", "/"),
            "server": (ADDRESS, int(environ.get("SERVER_PORT") or 0)),
            "headers": [
                (k[5:].replace("_", "-").lower().encode("latin-1"), str(v).encode("latin-1"))
                for k, v in environ.items()
                if k.startswith("HTTP_")
            ],
        }
        problem = guard.check(scope)
        if problem is None:
            return app(environ, start_response)
        status, kind, message = problem
        body = json.dumps({"error": {"type": kind, "message": message}}).encode()
        start_response(
            f"{status} {_REASONS.get(status, 'Error')}",
            [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
        )
        return [body]

    return serve


class _Quiet(WSGIRequestHandler):
    def log_message(self, *_: Any) -> None:  # a scrape every few seconds: not news
        pass


class _Threading(WSGIServer):
    daemon_threads = True


def serve_metrics(registry: Any, port: int) -> WSGIServer:
    """Serve `registry` at http://127.0.0.1:PORT/metrics from a daemon thread; the server
    (its `server_address` has the port, when 0 was asked). OSError when the port is taken."""
    from socketserver import ThreadingMixIn

    from prometheus_client import make_wsgi_app

    server_class = type("MetricsServer", (ThreadingMixIn, _Threading), {})
    server: WSGIServer = make_server(
        ADDRESS, port, guarded(make_wsgi_app(registry)), server_class, handler_class=_Quiet
    )
    threading.Thread(target=server.serve_forever, name="judge-metrics", daemon=True).start()
    return server
