"""A stand-in for Phoenix on loopback that answers as told: pages of spans, a cursor that
never ends or comes back, a body that drips, HTML, redirects. Only what a hostile or broken
server does; the real Phoenix is tests/traces/test_phoenix.py's."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Answer:
    status: int = 200
    body: bytes | Iterable[bytes] = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    pause: float = 0.0  # between pieces of an iterable body


def json_answer(data: Any, status: int = 200) -> Answer:
    return Answer(status, json.dumps(data).encode())


Route = Callable[[str, str, dict[str, list[str]], bytes], Answer]


class FakePhoenix:
    """`route(method, path, query, body) -> Answer` answers every request; `requests`
    counts them."""

    def __init__(self, route: Route) -> None:
        self.route = route
        self.requests = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                fake.requests += 1
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else b""
                parts = urlsplit(self.path)
                answer = fake.route(self.command, parts.path, parse_qs(parts.query), body)
                self.send_response(answer.status)
                for key, value in answer.headers.items():
                    self.send_header(key, value)
                if isinstance(answer.body, bytes):
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for piece in answer.body:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                        time.sleep(answer.pause)
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client gave up: what the test wants
                    self.close_connection = True

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(  # a short poll: shutdown() waits one out
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakePhoenix:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def phoenix_span(span_id: str, trace_id: str, **extra: Any) -> dict[str, Any]:
    """One span in Phoenix's REST form: a CHAIN root with a question and an answer."""
    return {
        "name": "rag",
        "context": {"trace_id": trace_id, "span_id": span_id},
        "parent_id": None,
        "span_kind": "CHAIN",
        "start_time": "2026-12-01T10:00:00+00:00",
        "attributes": {"input.value": f"question {span_id}?", "output.value": "an answer"},
        **extra,
    }
