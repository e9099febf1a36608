"""Test support: Phoenix's span route on loopback (`GET /v1/projects/{name}/spans`), serving
spans made with the OpenTelemetry SDK in the REST form Phoenix answers with (checked
against arize-phoenix 20.26, as judge.traces.phoenix is): `context` ids, `parent_id`,
ISO start times, and `openinference.span.kind` moved out of the attributes into
`span_kind`. Pages of `page` spans with `next_cursor`, as Phoenix pages them."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from opentelemetry.sdk.trace import ReadableSpan


def phoenix_span(span: ReadableSpan) -> dict[str, Any]:
    """One SDK span as Phoenix's REST API returns it."""
    attributes = dict(span.attributes or {})
    kind = attributes.pop("openinference.span.kind", "UNKNOWN")
    start = datetime.fromtimestamp((span.start_time or 0) / 1e9, UTC)
    parent = span.parent
    return {
        "name": span.name,
        "context": {
            "trace_id": f"{span.context.trace_id:032x}",
            "span_id": f"{span.context.span_id:016x}",
        },
        "parent_id": f"{parent.span_id:016x}" if parent is not None else None,
        "span_kind": kind,
        "start_time": start.isoformat(),
        "attributes": attributes,
    }


class FakePhoenix:
    """Serves `spans` for project `project`, oldest first, `page` a request."""

    def __init__(self, project: str, spans: Sequence[ReadableSpan], page: int = 2) -> None:
        items = sorted((phoenix_span(s) for s in spans), key=lambda s: s["start_time"])
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlparse(self.path)
                if url.path != f"/v1/projects/{project}/spans":
                    self.send_response(404)
                    self.end_headers()
                    return
                start = int(parse_qs(url.query).get("cursor", ["0"])[0])
                fake.requests += 1
                body = {
                    "data": items[start : start + page],
                    "next_cursor": str(start + page) if start + page < len(items) else None,
                }
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.requests = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
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
