"""Spans as this package sees them, whatever stored them, and the OTLP JSON reader.

OTLP JSON is the OpenTelemetry Collector's file-exporter form: one
`{"resourceSpans": [...]}` object a line, each span's attributes a list of
`{"key", "value": {"stringValue" | "intValue" | ...}}`. Ids are hex in that form (the OTLP
JSON encoding); protobuf's own JSON mapping writes them in base64, and both are read.
A line that is not such an object (not UTF-8, not JSON, nested too deep, a number past
Python's digit limit, a span without its ids) is an `InputError` naming the file and line;
a reader that must go on (`judge watch`) passes `bad=` and the line is skipped instead. A
line longer than `MAX_LINE` is refused the same way, read in bounded pieces. Only a regular
file is read (`open_regular`): a FIFO, a device (`/dev/zero`) or a folder at the name would
be waited on or read forever, so it is refused in one line.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from judge.engine.records import loads_bounded
from judge.errors import InputError, refused_not_regular

__all__ = [
    "MAX_LINE",
    "Span",
    "flatten_value",
    "loads_text",
    "open_regular",
    "read_otlp_file",
    "spans_of_line",
]

# a lone UTF-16 surrogate escaped in JSON (`"\ud800"`): a str no UTF-8 file can hold
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_LINE = 64 * 1024 * 1024  # a Collector line is one export batch: far under this
CHUNK = 1024 * 1024


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

    @classmethod
    def checked(cls, data: Any) -> Span:
        """`from_json` for data from a file (a checkpoint): a TypeError or ValueError saying
        what is wrong, never a Span of the wrong types."""
        if not isinstance(data, dict):
            raise TypeError("not an object")
        span = cls(**data)
        texts = (span.trace_id, span.span_id, span.name)
        if not all(isinstance(t, str) for t in texts) or not isinstance(span.parent_id, str | None):
            raise TypeError("an id or the name is not text")
        if not isinstance(span.start_ns, int) or isinstance(span.start_ns, bool):
            raise TypeError("start_ns is not an integer")
        if not isinstance(span.attributes, dict) or not isinstance(span.resource, dict):
            raise TypeError("attributes or resource is not an object")
        return span


def read_otlp_file(
    path: Path,
    *,
    start: int = 0,
    bad: Callable[[InputError], None] | None = None,
    max_line: int = MAX_LINE,
) -> Iterator[tuple[int, list[Span]]]:
    """The spans of each whole line of an OTLP JSON file from byte offset `start`, with the
    offset just past that line. A last line without its newline is still being written:
    it is left for the next read. A bad line raises its InputError, or with `bad` is handed
    to it and skipped (its spans an empty list)."""
    try:
        handle = open_regular(path)
    except FileNotFoundError as exc:
        raise InputError(str(path), [(None, None, f"cannot be read ({exc.strerror})")]) from None
    with handle:
        number = _line_number(handle, start)
        handle.seek(start)
        offset = start
        while True:
            raw, size = _next_line(handle, max_line)
            if size == 0 or (raw is not None and not raw.endswith(b"\n")):
                return  # the end, or a torn tail: the writer has not finished it
            offset += size
            number += 1
            try:
                if raw is None:
                    raise InputError(str(path), [(number, None, f"over {max_line} bytes")])
                spans = spans_of_line(raw, str(path), number) if raw.strip() else []
            except InputError as exc:
                if bad is None:
                    raise
                bad(exc)
                spans = []
            yield offset, spans


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading when it is a regular file (a link to one is followed);
    anything else an InputError naming what it is. Opened without blocking, so a FIFO with
    no writer is refused rather than waited on; FileNotFoundError passes through (a source
    between a rotation's move and create is not there for a moment)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise InputError(str(path), [(None, None, f"cannot be read ({exc.strerror})")]) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise InputError(str(path), [(None, None, refused_not_regular(mode))])
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _next_line(handle: BinaryIO, max_line: int) -> tuple[bytes | None, int]:
    """(the next line, its size in bytes); the line None when it is over `max_line` (then
    read through to its newline in pieces, never held). A size of 0 is the end; a line
    over the limit whose newline has not come yet counts as not there (size 0)."""
    raw = handle.readline(max_line + 1)
    if len(raw) <= max_line or raw.endswith(b"\n"):
        return raw, len(raw)
    size = len(raw)
    while True:
        piece = handle.readline(CHUNK)
        size += len(piece)
        if not piece:
            return None, 0  # still being written: read again from its start next time
        if piece.endswith(b"\n"):
            return None, size


def _line_number(handle: BinaryIO, offset: int) -> int:
    """The newlines before `offset`, counted in pieces."""
    count, left = 0, offset
    while left > 0:
        piece = handle.read(min(CHUNK, left))
        if not piece:
            break
        count += piece.count(b"\n")
        left -= len(piece)
    return count


def spans_of_line(raw: bytes | str, path: str, line: int | None = None) -> list[Span]:
    """The spans of one OTLP JSON object (`{"resourceSpans": [...]}`), the line `line` of
    `path` (both named in the InputError a bad line raises)."""
    try:
        data = loads_text(raw)
    except ValueError as exc:  # not UTF-8, not JSON, too deep, too many digits
        raise InputError(path, [(line, None, f"not JSON ({_first_line(exc)})")]) from None
    if not isinstance(data, dict) or not isinstance(data.get("resourceSpans"), list):
        raise InputError(path, [(line, None, "not OTLP JSON (no resourceSpans list)")])
    try:
        return list(_spans(data["resourceSpans"]))
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise InputError(path, [(line, None, f"not OTLP JSON ({_reason(exc)})")]) from None


def loads_text(raw: bytes | str) -> Any:
    """`loads_bounded`, with each lone surrogate a JSON text escapes (`"\ud800"`) in its
    strings, keys included, replaced by U+FFFD: a trace's text must become a cases file,
    and UTF-8 cannot hold a lone surrogate (writing it was a traceback). A ValueError for
    what is not bounded JSON."""
    data = loads_bounded(raw)
    escaped = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    return _scrubbed(data) if _SURROGATE_ESCAPE.search(escaped) else data


def _scrubbed(data: Any) -> Any:
    """`data` with lone surrogates replaced, walked with a stack (JSON as deep as
    `loads_bounded` allows, no recursion), containers changed in place."""
    if isinstance(data, str):
        return _SURROGATE.sub("\ufffd", data)
    todo = [data]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            for n, value in enumerate(item):
                if isinstance(value, str):
                    item[n] = _SURROGATE.sub("\ufffd", value)
                elif isinstance(value, list | dict):
                    todo.append(value)
        elif isinstance(item, dict):
            pairs = list(item.items())
            item.clear()
            for key, value in pairs:
                if isinstance(value, str):
                    value = _SURROGATE.sub("\ufffd", value)
                elif isinstance(value, list | dict):
                    todo.append(value)
                item[_SURROGATE.sub("\ufffd", key)] = value
    return data


def _first_line(exc: Exception) -> str:
    text = getattr(exc, "msg", None) or str(exc)
    return str(text).splitlines()[0][:200] if text else type(exc).__name__


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
