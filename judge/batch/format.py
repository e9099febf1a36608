"""The OpenAI batch file format, which vLLM's `run-batch` reads and writes too.

Request line: `{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`, the
body being exactly what the online path sends (`ChatClient.request_body`).
Result line (OpenAI output and error files, vLLM's output file):
`{"id", "custom_id", "response": {"status_code", "request_id", "body"} | null, "error"}`.

A `custom_id` is the case id, percent-encoded where it holds characters outside a plain set
(so `#`, `%`, spaces and non-ASCII text cannot collide), plus `#ab` / `#ba` for the two orders
of a pairwise probe. Matching encodes the case id and looks it up, so it never guesses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote, unquote

from judge import errors
from judge.client import ChatClient, Completion, checked_completion
from judge.config import JudgeConfig
from judge.rubric import Rubric
from judge.schemas import Case

ENDPOINT = "/v1/chat/completions"
MAX_REQUESTS_PER_FILE = 50_000
MAX_BYTES_PER_FILE = 200 * 1024 * 1024
_SAFE = "-_.~:@+=,/!*()"  # with letters and digits: kept as they are in a custom_id


def custom_id_for(case_id: str, order: str | None = None) -> str:
    """`refund-014`, or `refund-014#ab` for one order of a pairwise probe."""
    encoded = quote(case_id, safe=_SAFE)
    return f"{encoded}#{order}" if order else encoded


def case_id_of(custom_id: str) -> tuple[str, str | None]:
    """The case id and the probe order (or None) a `custom_id_for` value came from."""
    head, _, order = custom_id.partition("#")
    return unquote(head), order or None


def batch_mode(config: JudgeConfig) -> str:
    """The one output mode a batch uses: there is no server to step down with, so `auto`
    means structured output with the verdict's JSON schema."""
    return "json_schema" if config.output_mode == "auto" else config.output_mode


class RequestBuilder:
    """Request lines for one rubric and one pinned judge, built like the online requests."""

    def __init__(self, rubric: Rubric, client: ChatClient) -> None:
        self.rubric = rubric
        self.client = client
        self.mode = batch_mode(client.config)
        self._schema = rubric.json_schema()

    def line(self, case: Case, order: str | None = None) -> bytes:
        messages = self.rubric.render(case, output_mode=self.mode)
        body = self.client.request_body(messages, self.mode, self.rubric.schema_name, self._schema)
        request = {
            "custom_id": custom_id_for(case.id, order),
            "method": "POST",
            "url": ENDPOINT,
            "body": body,
        }
        text = json.dumps(request, ensure_ascii=False, separators=(",", ":"))
        return (text + "\n").encode("utf-8")


@dataclass
class RequestFiles:
    """Writes request lines to `first`, then `STEM.2.jsonl`, `STEM.3.jsonl`, ... so that no
    file holds more than `max_requests` lines or `max_bytes` bytes (the Batch API's limits)."""

    first: Path
    max_requests: int = MAX_REQUESTS_PER_FILE
    max_bytes: int = MAX_BYTES_PER_FILE
    paths: list[Path] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    _handle: IO[bytes] | None = None
    _bytes: int = 0

    def write(self, line: bytes) -> None:
        if len(line) > self.max_bytes:
            raise errors.UsageError(f"one request is {len(line)} bytes, over the file limit")
        full = self.counts and (
            self.counts[-1] >= self.max_requests or self._bytes + len(line) > self.max_bytes
        )
        if self._handle is None or full:
            self._next_file()
        assert self._handle is not None
        self._handle.write(line)
        self._bytes += len(line)
        self.counts[-1] += 1

    def _next_file(self) -> None:
        if self._handle is not None:
            self._handle.close()
        number = len(self.paths) + 1
        path = self.first
        if number > 1:
            path = self.first.with_name(f"{self.first.stem}.{number}{self.first.suffix}")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = path.open("wb")
        self.paths.append(path)
        self.counts.append(0)
        self._bytes = 0

    @property
    def total(self) -> int:
        return sum(self.counts)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> RequestFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class LineResult:
    """One result line: a completion to parse, or why the request failed."""

    custom_id: str
    completion: Completion | None = None
    error: str | None = None


def result_custom_id(data: Any) -> str | None:
    """The line's custom_id, or None when the line is not a result line at all."""
    if isinstance(data, dict) and isinstance(data.get("custom_id"), str):
        return str(data["custom_id"])
    return None


def is_success(data: dict[str, Any]) -> bool:
    response = data.get("response")
    return (
        isinstance(response, dict)
        and response.get("status_code") == 200
        and isinstance(response.get("body"), dict)
        and not data.get("error")
    )


def read_result(data: dict[str, Any], mode: str) -> LineResult:
    """A result line (OpenAI's or vLLM's) as a completion, or the failure it reports."""
    custom_id = str(data.get("custom_id"))
    if not is_success(data):
        return LineResult(custom_id, error=f"the batch request failed: {_failure(data)}")
    body = data["response"]["body"]
    try:
        completion = checked_completion(body, mode)
    except errors.ApiError as exc:
        return LineResult(custom_id, error=str(exc))
    return LineResult(custom_id, completion=completion)


def _failure(data: dict[str, Any]) -> str:
    """What a failed line says: HTTP status, the body's error and the line's error."""
    parts = []
    response = data.get("response")
    if isinstance(response, dict):
        status = response.get("status_code")
        if status is not None and status != 200:
            parts.append(f"HTTP {status}")
        body = response.get("body")
        if isinstance(body, dict) and body.get("error"):
            parts.append(_error_text(body["error"]))
    if data.get("error"):
        parts.append(_error_text(data["error"]))
    return ": ".join(parts) or "the line has no response body"


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        message = str(error.get("message") or "")
        code = error.get("code") or error.get("type")
        return f"{message} ({code})" if code and message else message or str(code or error)
    return str(error)
