"""Spans as this package sees them, whatever stored them, and the OTLP JSON reader.

OTLP JSON is the OpenTelemetry Collector's file-exporter form: one
`{"resourceSpans": [...]}` object a line, each span's attributes a list of
`{"key", "value": {"stringValue" | "intValue" | ...}}`. Ids are hex in that form (the OTLP
JSON encoding); protobuf's own JSON mapping writes them in base64, and both are read.
A line that is not such an object is an `InputError` naming the file and line.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.errors import InputError

__all__ = ["Span", "flatten_value", "read_otlp_file", "spans_of_line"]


@dataclass(frozen=True)
class Span:
    """One span: ids in lowercase hex, attributes flat (`retrieval.documents.0.document.content`),
    the resource's attributes apart, the kind the tracer gave it (`openinference.span.kind`
    or `gen_ai.operation.name`, read by the mapping), start time in Unix nanoseconds."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)
    resource: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "parent_id": self.parent_id,
            "name": self.name,
            "start_ns": self.start_ns,
            "attributes": self.attributes,
            "resource": self.resource,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Span:
        return cls(**data)


def read_otlp_file(path: Path, *, start: int = 0) -> Iterator[tuple[int, list[Span]]]:
    """The spans of each whole line of an OTLP JSON file from byte offset `start`, with the
    offset just past that line. A last line without its newline is still being written:
    it is left for the next read."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputError(str(path), [(None, None, f"cannot be read ({exc.strerror})")]) from None
    with handle:
        handle.seek(start)
        offset = start
        number = _line_number(path, start)
        for raw in handle:
            if not raw.endswith(b"\n"):
                return  # a torn tail: the writer has not finished it
            offset += len(raw)
            number += 1
            if raw.strip():
                yield offset, spans_of_line(raw, str(path), number)


def _line_number(path: Path, offset: int) -> int:
    if offset == 0:
        return 0
    with path.open("rb") as handle:
        return handle.read(offset).count(b"\n")


def spans_of_line(raw: bytes | str, path: str, line: int | None = None) -> list[Span]:
    """The spans of one OTLP JSON object (`{"resourceSpans": [...]}`), the line `line` of
    `path` (both named in the InputError a bad line raises)."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(path, [(line, None, f"not JSON ({exc.msg})")]) from None
    if not isinstance(data, dict) or not isinstance(data.get("resourceSpans"), list):
        raise InputError(path, [(line, None, "not OTLP JSON (no resourceSpans list)")])
    try:
        return list(_spans(data["resourceSpans"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(path, [(line, None, f"not OTLP JSON ({_reason(exc)})")]) from None


def _reason(exc: Exception) -> str:
    return f"missing {exc}" if isinstance(exc, KeyError) else str(exc)


def _spans(resource_spans: Iterable[dict[str, Any]]) -> Iterator[Span]:
    for group in resource_spans:
        resource = flatten_attributes(group.get("resource", {}).get("attributes", []))
        for scope in group.get("scopeSpans", []):
            for span in scope.get("spans", []):
                parent = span.get("parentSpanId") or None
                yield Span(
                    trace_id=_hex_id(span["traceId"], 16),
                    span_id=_hex_id(span["spanId"], 8),
                    parent_id=_hex_id(parent, 8) if parent else None,
                    name=str(span.get("name", "")),
                    start_ns=int(span.get("startTimeUnixNano") or 0),
                    attributes=flatten_attributes(span.get("attributes", [])),
                    resource=resource,
                )


def _hex_id(text: str, size: int) -> str:
    """An id in lowercase hex, from hex or base64 (protobuf's JSON mapping)."""
    if len(text) == 2 * size:
        try:
            bytes.fromhex(text)
            return text.lower()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise ValueError(f"bad id {text!r}: not {size} bytes in hex or base64")
    return raw.hex()


def flatten_attributes(items: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """OTLP key-value list -> a flat dict; a kvlist value adds `key.sub` entries."""
    out: dict[str, Any] = {}
    for item in items:
        _put(out, str(item["key"]), item.get("value", {}))
    return out


def _put(out: dict[str, Any], key: str, value: dict[str, Any]) -> None:
    if "kvlistValue" in value:
        for item in value["kvlistValue"].get("values", []):
            _put(out, f"{key}.{item['key']}", item.get("value", {}))
        return
    out[key] = flatten_value(value)


def flatten_value(value: dict[str, Any]) -> Any:
    """One OTLP AnyValue as plain JSON (intValue is a string in OTLP JSON)."""
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [flatten_value(v) for v in value["arrayValue"].get("values", [])]
    if "bytesValue" in value:
        return value["bytesValue"]
    return None
