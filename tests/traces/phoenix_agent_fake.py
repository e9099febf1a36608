"""Test support: Phoenix's span route on loopback (`GET /v1/projects/{name}/spans`), serving
spans made with the OpenTelemetry SDK in the REST form Phoenix answers with (checked
against arize-phoenix 20.26, as judge.traces.phoenix is): `context` ids, `parent_id`,
ISO start times, and `openinference.span.kind` moved out of the attributes into
`span_kind`. Pages of `page` spans with `next_cursor`, as Phoenix pages them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from tests.traces.phoenix_fake import Answer, FakePhoenix, json_answer


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


def agent_phoenix(project: str, spans: Sequence[ReadableSpan], page: int = 2) -> FakePhoenix:
    """Phoenix serving `spans` for project `project`, oldest first, `page` a request (the
    loopback stand-in of tests/traces/phoenix_fake.py, with a route that pages them)."""
    items = sorted((phoenix_span(s) for s in spans), key=lambda s: s["start_time"])

    def route(method: str, path: str, query: dict[str, list[str]], body: bytes) -> Answer:
        if method != "GET" or path != f"/v1/projects/{project}/spans":
            return Answer(404)
        start = int(query.get("cursor", ["0"])[0])
        following = str(start + page) if start + page < len(items) else None
        return json_answer({"data": items[start : start + page], "next_cursor": following})

    return FakePhoenix(route)
