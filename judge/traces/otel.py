"""Verdicts out over OpenTelemetry: one `gen_ai.evaluation.result` event per graded record,
sent with the OpenTelemetry SDK's OTLP/HTTP log exporter (the `traces` extra).

The event carries `gen_ai.evaluation.name` (the rubric), `gen_ai.evaluation.score.value`,
`gen_ai.evaluation.score.label` and `gen_ai.evaluation.explanation`; it is parented to the
evaluated span (the log record's trace and span ids) when the case came from a trace, and
carries `gen_ai.response.id` when the trace recorded one.

The records file stays the source of truth: an event is built from a record and never
changes it; a batch the collector refuses is sent again (`attempts`, with a growing pause)
and what still fails is counted in `ExportCounts`, never raised.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judge.errors import UsageError
from judge.schemas import GradedRecord
from judge.traces.urls import shown_url

if TYPE_CHECKING:
    from opentelemetry.sdk._logs import LogRecordProcessor, ReadableLogRecord

__all__ = [
    "EVENT_NAME",
    "EvaluationExporter",
    "ExportCounts",
    "event_attributes",
    "logs_endpoint",
    "require_otel",
]

EVENT_NAME = "gen_ai.evaluation.result"
BATCH = 256
INSTALL_HINT = "pip install 'llm-judge[traces]'"
log = logging.getLogger(__name__)


def require_otel() -> None:
    """A one-line UsageError when the traces extra is not installed."""
    try:
        import opentelemetry.exporter.otlp.proto.http  # noqa: F401
        import opentelemetry.sdk._logs  # noqa: F401
    except ImportError:
        raise UsageError(f"OpenTelemetry export needs the traces extra: {INSTALL_HINT}") from None


def logs_endpoint(url: str) -> str:
    """The OTLP/HTTP logs URL for a collector's base URL (`http://host:4318` ->
    `http://host:4318/v1/logs`); a URL already ending in /v1/logs is kept."""
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--otel-endpoint must be an http(s) URL, got {shown_url(url)!r}")
    url = url.rstrip("/")
    return url if url.endswith("/v1/logs") else f"{url}/v1/logs"


def event_attributes(record: GradedRecord, explanation_max: int = 4000) -> dict[str, Any]:
    """The event's attributes for one record (None values left out)."""
    out: dict[str, Any] = {"gen_ai.evaluation.name": record.rubric}
    if record.score is not None:
        out["gen_ai.evaluation.score.value"] = float(record.score)
    if record.label is not None:
        out["gen_ai.evaluation.score.label"] = record.label
    explanation = _explanation(record)
    if explanation:
        out["gen_ai.evaluation.explanation"] = explanation[:explanation_max]
    out["judge.record.id"] = record.id
    out["judge.record.status"] = record.status
    out["judge.rubric.version"] = record.rubric_version
    return out


def _explanation(record: GradedRecord) -> str | None:
    """The verdict's rationale, or its claims' verdicts (faithfulness), or the error."""
    verdict = record.verdict or {}
    for key in ("rationale", "explanation", "reason"):
        if isinstance(verdict.get(key), str) and verdict[key]:
            return str(verdict[key])
    claims = verdict.get("claims")
    if isinstance(claims, list) and claims:
        return "; ".join(
            f"{c.get('verdict')}: {c.get('claim')}" for c in claims if isinstance(c, dict)
        )
    return _calls_explanation(verdict) or record.error


def _calls_explanation(verdict: dict[str, Any]) -> str | None:
    """A computed verdict on tool calls has no rationale: what it found is the explanation,
    the calls missing and unexpected (trajectory), the invalid calls with their schema
    errors and the unknown tools (tool_arguments), and its notes."""
    parts = []
    for key in ("missing", "unexpected"):
        calls = verdict.get(key)
        if isinstance(calls, list) and calls:
            parts.append(f"{key}: " + ", ".join(_call_text(c) for c in calls))
    invalid = verdict.get("invalid")
    if isinstance(invalid, list) and invalid:
        parts.append("invalid: " + ", ".join(
            f"{_call_text(c)} ({'; '.join(map(str, c.get('errors') or []))})"
            for c in invalid if isinstance(c, dict)
        ))  # fmt: skip
    unknown = verdict.get("unknown_tools")
    if isinstance(unknown, list) and unknown:
        parts.append("unknown tools: " + ", ".join(map(str, unknown)))
    notes = verdict.get("notes")
    if isinstance(notes, list) and notes:
        parts += [str(n) for n in notes]
    if not parts and "expected_calls" in verdict and "paired_calls" in verdict:
        parts.append(
            f"{verdict['paired_calls']} of {verdict['expected_calls']} expected calls made, "
            "none missing or unexpected"
        )
    return "; ".join(parts) or None


def _call_text(call: Any, limit: int = 300) -> str:
    """`name({"key": "value"})`: a call as its name and its arguments, as JSON."""
    if not isinstance(call, dict):
        return str(call)[:limit]
    arguments = call.get("arguments")
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True)
    return f"{call.get('name')}({shown[:limit]})"


@dataclass
class ExportCounts:
    """What the exporter did: events sent, events given up on, batches sent again."""

    exported: int = 0
    failed: int = 0
    retries: int = 0

    def line(self, endpoint: str) -> str:
        sent_to = shown_url(endpoint)
        text = f"otel: {self.exported} gen_ai.evaluation.result events sent to {sent_to}"
        if self.retries:
            text += f" ({self.retries} batches sent again)"
        if self.failed:
            text += f"; {self.failed} not delivered (the records file keeps them)"
        return text


class EvaluationExporter:
    """Sends records as `gen_ai.evaluation.result` events. `send` queues, `flush` exports
    (in batches, each tried up to `attempts` times). Use as a context manager, or call
    `close`; `counts` says what happened."""

    def __init__(
        self,
        endpoint: str,
        *,
        attempts: int = 3,
        timeout: float | None = None,
        pause: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        background: float | None = None,
    ) -> None:
        require_otel()
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk.resources import Resource

        import judge

        self.endpoint = logs_endpoint(endpoint)
        self.counts = ExportCounts()
        self._attempts = max(1, attempts)
        self._pause, self._sleep = pause, sleep
        # timeout None: the SDK's (10 s, or $OTEL_EXPORTER_OTLP_LOGS_TIMEOUT), within which it
        # retries a connection error or a 429/5xx itself before `attempts` here count one
        self._exporter = OTLPLogExporter(endpoint=self.endpoint, timeout=timeout)
        self._pending: list[ReadableLogRecord] = []
        resource = Resource.create({"service.name": "llm-judge"})
        self._provider = LoggerProvider(resource=resource)
        self._provider.add_log_record_processor(_collector(self._pending))
        self._logger = self._provider.get_logger("llm-judge", judge.__version__)
        self._lock = threading.Lock()  # send (the service's event loop) and the flusher
        self._stop = threading.Event()
        self._flusher: threading.Thread | None = None
        if background is not None:  # a server: sent every `background` seconds, off its loop
            self._flusher = threading.Thread(
                target=self._flush_every, args=(background,), name="judge-otel", daemon=True
            )
            self._flusher.start()

    def _flush_every(self, seconds: float) -> None:
        while not self._stop.wait(seconds):
            self.flush()

    def send(self, record: GradedRecord, trace: Mapping[str, Any] | None = None) -> None:
        """Queue one record's event; `trace` is the case's metadata (`trace_id`, `span_id`,
        `response_id`) when it came from a trace."""
        from opentelemetry._logs import LogRecord
        from opentelemetry.trace import TraceFlags

        attributes = event_attributes(record)
        trace = trace or {}
        ids: dict[str, Any] = {}
        if _hex(trace.get("trace_id"), 32) and _hex(trace.get("span_id"), 16):
            ids = {
                "trace_id": int(trace["trace_id"], 16),
                "span_id": int(trace["span_id"], 16),
                "trace_flags": TraceFlags(TraceFlags.SAMPLED),
            }
        if isinstance(trace.get("response_id"), str):
            attributes["gen_ai.response.id"] = trace["response_id"]
        with self._lock:
            self._logger.emit(
                LogRecord(
                    timestamp=time.time_ns(),
                    event_name=EVENT_NAME,
                    attributes=attributes,
                    **ids,
                )
            )
            full = len(self._pending) >= BATCH
        if full and self._flusher is None:
            self.flush()

    def send_all(
        self, records: Iterable[GradedRecord], traces: Mapping[str, Mapping[str, Any]]
    ) -> None:
        for record in records:
            self.send(record, traces.get(record.id))
        self.flush()

    def flush(self) -> None:
        from opentelemetry.sdk._logs.export import LogRecordExportResult

        with self._lock:
            batch, self._pending[:] = list(self._pending), []
        if not batch:
            return
        for attempt in range(self._attempts):
            if attempt:
                self.counts.retries += 1
                self._sleep(self._pause * 2 ** (attempt - 1))
            try:
                result = self._exporter.export(batch)
            except Exception as exc:  # the SDK's transport errors: count, keep going
                log.debug("otel export attempt %d failed: %s", attempt + 1, exc)
                continue
            if result == LogRecordExportResult.SUCCESS:
                self.counts.exported += len(batch)
                return
        self.counts.failed += len(batch)

    def close(self) -> None:
        if self._flusher is not None:
            self._stop.set()
            self._flusher.join()
        self.flush()
        self._exporter.shutdown()
        self._provider.shutdown()

    def __enter__(self) -> EvaluationExporter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _hex(value: Any, size: int) -> bool:
    if not isinstance(value, str) or len(value) != size:
        return False
    try:
        return int(value, 16) != 0
    except ValueError:
        return False


def _collector(into: list[ReadableLogRecord]) -> LogRecordProcessor:
    """A log record processor that keeps each emitted record, readable, for `flush` (made
    here: the SDK, its base class, is imported only when used)."""
    from opentelemetry.sdk._logs import LogRecordProcessor, ReadableLogRecord
    from opentelemetry.sdk.resources import Resource

    class Collect(LogRecordProcessor):
        def on_emit(self, log_record: Any) -> None:
            into.append(
                ReadableLogRecord(
                    log_record=log_record.log_record,
                    resource=log_record.resource or Resource.create({}),
                    instrumentation_scope=log_record.instrumentation_scope,
                    limits=log_record.limits,
                )
            )

        def shutdown(self) -> None:
            pass

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return Collect()
