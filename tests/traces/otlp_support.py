"""Test support: traces made with the OpenTelemetry SDK as a RAG app would make them, written
in the Collector's file-exporter JSON form, and a real OTLP/HTTP receiver on loopback that
decodes the logs it is sent (opentelemetry-proto)."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from judge.traces.spans import flatten_value


@dataclass(frozen=True)
class Request:
    """What one traced request sent: the question, the retrieved documents, the answer."""

    question: str
    documents: tuple[str, ...]
    answer: str
    tier: str = "free"


REQUESTS = [
    Request(
        "How long is the free trial?",
        ("The free trial lasts 14 days.", "Plans renew monthly."),
        "The free trial lasts 14 days.",
        "premium",
    ),
    Request(
        "Can I get a refund?",
        ("Refunds are issued within 30 days of purchase.",),
        "Refunds are issued within 90 days.",
    ),
    Request(
        "Which regions are supported?",
        ("We support the EU and the US.", "Asia is planned for 2027."),
        "The EU and the US are supported.",
    ),
]


def rag_provider(project: str = "rag-app") -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "rag-app", "openinference.project.name": project})
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def trace_request(provider: TracerProvider, request: Request) -> tuple[str, str]:
    """One RAG request in OpenInference's conventions: a CHAIN root holding the question and
    the answer, a RETRIEVER child with the documents, an LLM child. (trace id, root span id)."""
    tracer = provider.get_tracer("rag-app")
    with tracer.start_as_current_span("rag") as root:
        root.set_attribute("openinference.span.kind", "CHAIN")
        root.set_attribute("input.value", request.question)
        root.set_attribute("user.tier", request.tier)
        with tracer.start_as_current_span("retrieve") as retriever:
            retriever.set_attribute("openinference.span.kind", "RETRIEVER")
            retriever.set_attribute("input.value", request.question)
            for n, text in enumerate(request.documents):
                retriever.set_attribute(f"retrieval.documents.{n}.document.id", f"doc-{n}")
                retriever.set_attribute(f"retrieval.documents.{n}.document.content", text)
        with tracer.start_as_current_span("generate") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            llm.set_attribute("llm.input_messages.0.message.role", "user")
            llm.set_attribute("llm.input_messages.0.message.content", request.question)
            llm.set_attribute("llm.output_messages.0.message.role", "assistant")
            llm.set_attribute("llm.output_messages.0.message.content", request.answer)
            llm.set_attribute("gen_ai.response.id", f"chatcmpl-{request.tier}")
        root.set_attribute("output.value", request.answer)
        context = root.get_span_context()
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def trace_genai_request(provider: TracerProvider, request: Request) -> tuple[str, str]:
    """The same request in the OTel GenAI conventions alone: a chat span with JSON messages."""
    tracer = provider.get_tracer("genai-app")
    with tracer.start_as_current_span("chat gpt-4o") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute(
            "gen_ai.input.messages",
            json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": request.question}]}]
            ),
        )
        span.set_attribute(
            "gen_ai.output.messages",
            json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": request.answer}]}]
            ),
        )
        span.set_attribute("gen_ai.response.id", "chatcmpl-genai")
        context = span.get_span_context()
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def otlp_json_line(spans: Sequence[ReadableSpan]) -> str:
    """The spans as the Collector's file exporter writes them: one OTLP JSON object, ids in
    hex (protobuf's own JSON mapping writes them in base64)."""
    data = MessageToDict(encode_spans(spans))

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            for key in ("traceId", "spanId", "parentSpanId"):
                if key in node and node[key]:
                    node[key] = base64.b64decode(node[key]).hex()
            for value in node.values():
                fix(value)
        elif isinstance(node, list):
            for value in node:
                fix(value)
        return node

    return json.dumps(fix(data))


def write_otlp(path: Path, spans: Sequence[ReadableSpan], *, mode: str = "a") -> None:
    with path.open(mode, encoding="utf-8") as out:
        out.write(otlp_json_line(spans) + "\n")


# ---- an OTLP/HTTP logs receiver ------------------------------------------------------


@dataclass
class ReceivedEvent:
    event_name: str
    trace_id: str
    span_id: str
    attributes: dict[str, Any]


@dataclass
class OtlpReceiver:
    """POST /v1/logs on 127.0.0.1: decodes each ExportLogsServiceRequest into `events`;
    the first `refuse` requests are answered `refuse_status` (nothing kept)."""

    refuse: int = 0
    refuse_status: int = 400
    events: list[ReceivedEvent] = field(default_factory=list)
    requests: int = 0

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests += 1
                if self.path != "/v1/logs" or receiver.refuse > 0:
                    receiver.refuse -= 1
                    self.send_response(receiver.refuse_status if self.path == "/v1/logs" else 404)
                    self.end_headers()
                    return
                receiver.events.extend(_decode(body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _decode(body: bytes) -> Iterator[ReceivedEvent]:
    request = ExportLogsServiceRequest()
    request.ParseFromString(body)
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                attributes = MessageToDict(record).get("attributes", [])
                yield ReceivedEvent(
                    event_name=record.event_name,
                    trace_id=record.trace_id.hex(),
                    span_id=record.span_id.hex(),
                    attributes={a["key"]: flatten_value(a["value"]) for a in attributes},
                )
