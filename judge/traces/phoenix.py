"""Phoenix over its REST API (checked against arize-phoenix 20.26): spans in, span
annotations out. Not through the arize-phoenix package: it cannot share this project's
locked environment, and the three routes below are all that is needed.

- `GET /v1/projects/{name}/spans?sort=start_time&order=asc&start_time=&end_time=&cursor=`
  pages with `next_cursor`; Phoenix moves `openinference.span.kind` out of the attributes
  into `span_kind` (put back here, so one mapping reads Phoenix and OTLP files alike);
- `POST /v1/span_annotations?sync=true` with `{"data": [{"span_id", "name",
  "annotator_kind", "result": {"label", "score", "explanation"}, "identifier"}]}` upserts
  on name, span and identifier;
- `GET /v1/projects/{name}/span_annotations?span_ids=...&limit=` reads them back (the
  default limit is 10: the limit is always given).

Every answer is bounded: read in pieces with a deadline for the whole answer (a body that
drips a byte at a time is given up on, not waited on forever), and a byte cap; a pull has
caps on its pages, its bytes and its time, and a cursor Phoenix hands back twice ends it.
An answer that is not 2xx JSON (a redirect, an HTML page) is an error naming what came,
never a traceback and never counted as stored. A span without its ids is skipped and said.

This is the package's own small HTTP use (httpx, the openai SDK's transport): it talks to a
trace store, never to a judge endpoint, so it sits outside the import-linter contract that
keeps judge endpoints to `judge.client`, in a contract of its own (pyproject.toml).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

from judge.engine.records import loads_bounded
from judge.errors import InputError, JudgeError, UsageError
from judge.schemas import GradedRecord
from judge.traces.otel import event_attributes
from judge.traces.spans import Span, loads_text
from judge.traces.urls import shown_url

__all__ = ["PhoenixAnswerError", "PhoenixClient", "PhoenixError", "annotation_of"]

PAGE = 1000  # Phoenix's largest span page
ANNOTATION_BATCH = 100
SPAN_IDS_PER_READ = 1000  # Phoenix's MAX_SPAN_IDS
MIB = 1024 * 1024
MAX_ID = 128  # characters of a trace or span id (Phoenix's are 32 and 16 hex digits)


class PhoenixError(JudgeError):
    """Phoenix could not be reached, or answered with an error (its message kept)."""


class PhoenixAnswerError(PhoenixError, InputError):
    """Phoenix answered what no Phoenix answers (not JSON, too large, a cursor again): bad
    input, exit 2 on the command line, as a bad file is."""

    def __init__(self, where: str, message: str) -> None:
        InputError.__init__(self, where, [(None, None, message)])


@dataclass(frozen=True)
class Limits:
    """What one answer and one pull may take: bytes, seconds, pages."""

    answer_bytes: int = 64 * MIB
    answer_seconds: float = 120.0
    pull_bytes: int = 2048 * MIB
    pull_seconds: float = 3600.0
    pull_pages: int = 5000


@dataclass
class PhoenixClient:
    """One Phoenix server (`url`, e.g. http://127.0.0.1:6006); `api_key` when it has auth
    on (sent as a bearer token, never written anywhere)."""

    url: str
    api_key: str | None = None
    timeout: float = 30.0  # each read; an answer as a whole has `limits.answer_seconds`
    limits: Limits = Limits()

    def __post_init__(self) -> None:
        self.shown = shown_url(self.url)
        if not self.url.startswith(("http://", "https://")):
            raise UsageError(f"--phoenix must be an http(s) URL, got {self.shown!r}")
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            self._http = httpx.Client(
                base_url=self.url.rstrip("/"), headers=headers, timeout=self.timeout
            )
        except httpx.InvalidURL:  # its message quotes the URL's pieces: a password's, too
            raise UsageError(
                f"--phoenix {self.shown!r} is not a URL (a password holding @ / ? # or a "
                "space must be percent-encoded)"
            ) from None

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PhoenixClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- spans in -----------------------------------------------------------------

    def spans(
        self,
        project: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        bad: Callable[[str], None] | None = None,
    ) -> Iterator[Span]:
        """Every span of `project` started in [since, until), oldest first. A span that is
        not one (no `context`, ids not text) is skipped, and said to `bad`."""
        params: dict[str, Any] = {"sort": "start_time", "order": "asc", "limit": PAGE}
        if since is not None:
            params["start_time"] = since.isoformat()
        if until is not None:
            params["end_time"] = until.isoformat()
        pull = _Pull(self.limits, f"Phoenix {self.shown} project {project}")
        path = f"/v1/projects/{_name(project)}/spans"
        while True:
            page = self._get(path, params, pull)
            data = page.get("data", [])
            if not isinstance(data, list):
                raise PhoenixAnswerError(pull.where, "the span page's data is not a list")
            for item in data:
                try:
                    yield span_of(item)
                except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
                    if bad is not None:
                        bad(f"skipped a Phoenix span that is not one ({_reason(exc)})")
            cursor = page.get("next_cursor")
            if not cursor:
                return
            params["cursor"] = pull.next_cursor(cursor)

    # ---- annotations out ----------------------------------------------------------

    def annotate(self, records: Iterable[GradedRecord], *, identifier: str = "llm-judge") -> int:
        """Write each record as a span annotation on the span its id names; the count
        written. Records that were not graded (api_error, parse_error) are left out."""
        batch: list[dict[str, Any]] = []
        written = 0
        try:
            for record in records:
                if record.status not in ("ok", "abstained"):
                    continue
                batch.append(annotation_of(record, identifier))
                if len(batch) >= ANNOTATION_BATCH:
                    written += self._post_annotations(batch)
                    batch = []
            if batch:
                written += self._post_annotations(batch)
        except PhoenixError as exc:
            if written:  # what went in before the failure is said with it
                exc.args = (f"{exc} ({written} span annotations were stored before it)",)
            raise
        return written

    def annotations(self, project: str, span_ids: list[str]) -> list[dict[str, Any]]:
        """The span annotations Phoenix holds for these spans (within a pull's limits)."""
        out: list[dict[str, Any]] = []
        path = f"/v1/projects/{_name(project)}/span_annotations"
        pull = _Pull(self.limits, f"Phoenix {self.shown} project {project} annotations")
        for start in range(0, len(span_ids), SPAN_IDS_PER_READ):
            params: dict[str, Any] = {
                "span_ids": span_ids[start : start + SPAN_IDS_PER_READ],
                "limit": 10_000,
            }
            while True:
                page = self._get(path, params, pull)
                data = page.get("data", [])
                out.extend(data if isinstance(data, list) else [])
                if not page.get("next_cursor"):
                    break
                params["cursor"] = pull.next_cursor(page["next_cursor"])
        return out

    def _post_annotations(self, batch: list[dict[str, Any]]) -> int:
        """Send one batch; the count Phoenix says it stored (its `data`, one id each)."""
        path = "/v1/span_annotations"
        answer = self._send("POST", path, params={"sync": "true"}, json={"data": batch})
        stored = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(stored, list):
            raise PhoenixAnswerError(
                f"Phoenix {self.shown}{path}", "the answer does not say what was stored"
            )
        ids = [item for item in stored if isinstance(item, dict) and item.get("id")]
        return min(len(ids), len(batch))  # an entry without its id is no stored annotation

    def _get(self, path: str, params: dict[str, Any], pull: _Pull | None = None) -> dict[str, Any]:
        data = self._send("GET", path, pull=pull, params=params)
        if not isinstance(data, dict):
            raise PhoenixAnswerError(f"Phoenix {self.shown}{path}", "the answer is not an object")
        return data

    def _send(self, method: str, path: str, *, pull: _Pull | None = None, **options: Any) -> Any:
        """The JSON of a 2xx answer, read within the limits; anything else a PhoenixError."""
        limits = self.limits
        deadline = time.monotonic() + limits.answer_seconds
        if pull is not None:
            deadline = min(deadline, pull.deadline)
        where = f"Phoenix {self.shown}{path}"
        try:
            with self._http.stream(method, path, **options) as response:
                body = _body(response, deadline, limits.answer_bytes, where)
        except httpx.HTTPError as exc:
            raise PhoenixError(f"Phoenix at {self.shown} cannot be reached: {_said(exc)}") from None
        if not 200 <= response.status_code < 300:
            raise PhoenixError(
                f"{method} {where} answered {response.status_code}: {_detail(response, body)}; "
                "nothing was taken as stored"
            )
        if pull is not None:
            pull.add(len(body))
        if not body:
            return None
        try:
            return loads_text(body)  # no lone surrogate left to break the cases file
        except ValueError as exc:  # HTML, not UTF-8, too deep, too many digits
            kind = response.headers.get("content-type", "no content type")
            raise PhoenixAnswerError(
                where, f"the answer is not JSON ({kind}: {str(exc).splitlines()[0][:120]})"
            ) from None


def span_of(item: dict[str, Any]) -> Span:
    """A Phoenix span (its REST form) as a Span, the span kind back in the attributes; a
    KeyError, TypeError or ValueError for one that is not a span."""
    attributes = dict(item.get("attributes") or {})
    kind = item.get("span_kind")
    if isinstance(kind, str) and kind != "UNKNOWN":
        attributes.setdefault("openinference.span.kind", kind)
    start = item.get("start_time")
    context = item["context"]
    ids = (context["trace_id"], context["span_id"], item.get("parent_id") or "")
    if not all(isinstance(i, str) for i in ids):
        raise TypeError("an id is not text")
    if not all(0 < len(i) <= MAX_ID for i in ids[:2]):  # a case id is the span id, bounded
        raise ValueError(f"an id is empty or over {MAX_ID} characters")
    return Span(
        trace_id=ids[0],
        span_id=ids[1],
        parent_id=ids[2] or None,
        name=str(item.get("name") or ""),
        start_ns=_ns(start) if isinstance(start, str) else 0,
        attributes=attributes,
    )


class _Pull:
    """One pull's running totals against its limits."""

    def __init__(self, limits: Limits, where: str) -> None:
        self.limits, self.where = limits, where
        self.deadline = time.monotonic() + limits.pull_seconds
        self.bytes = self.pages = 0
        self.cursors: set[str] = set()

    def add(self, size: int) -> None:
        self.bytes += size
        self.pages += 1
        if self.bytes > self.limits.pull_bytes:
            raise PhoenixAnswerError(
                self.where, f"refused: over {self.limits.pull_bytes} bytes in one pull"
            )

    def next_cursor(self, cursor: Any) -> str:
        """The next page's cursor; past the page cap, or one seen before (a loop): refused."""
        if self.pages >= self.limits.pull_pages:
            raise PhoenixAnswerError(
                self.where, f"refused: over {self.limits.pull_pages} pages in one pull"
            )
        if time.monotonic() > self.deadline:
            raise PhoenixError(
                f"{self.where}: refused: over {self.limits.pull_seconds:g} s in one pull"
            )
        text = str(cursor)
        if text in self.cursors:
            raise PhoenixAnswerError(
                self.where, f"refused: Phoenix gave the cursor {text[:40]!r} twice (a loop)"
            )
        self.cursors.add(text)
        return text


def _body(response: httpx.Response, deadline: float, cap: int, where: str) -> bytes:
    """The answer's bytes, read in pieces: a PhoenixError past `deadline` (a body that
    drips), a PhoenixAnswerError past `cap` bytes."""
    pieces: list[bytes] = []
    size = 0
    for piece in response.iter_bytes():
        size += len(piece)
        if size > cap:
            raise PhoenixAnswerError(where, f"refused: an answer over {cap} bytes")
        if time.monotonic() > deadline:
            raise PhoenixError(f"{where}: refused: no whole answer in time (still coming)")
        pieces.append(piece)
    return b"".join(pieces)


def _said(exc: BaseException) -> str:
    return shown_url(str(exc) or type(exc).__name__)


def _reason(exc: BaseException) -> str:
    return f"no {exc}" if isinstance(exc, KeyError) else str(exc)[:120]


# The output modes of verdicts that no model gave: the rules judge's and a computed kind's
# (trajectory, tool_arguments, retrieval): Phoenix's annotator kind CODE, not LLM.
CODE_MODES = frozenset({"rules", "computed"})


def annotation_of(record: GradedRecord, identifier: str = "llm-judge") -> dict[str, Any]:
    """One record as Phoenix's span annotation: the rubric as the name, the record's score,
    label and explanation; the rubric version and status in the metadata."""
    attributes = event_attributes(record)
    return {
        "span_id": record.id,
        "name": record.rubric,
        "annotator_kind": "CODE" if record.judge.output_mode in CODE_MODES else "LLM",
        "identifier": identifier,
        "result": {
            "score": record.score,
            "label": record.label,
            "explanation": attributes.get("gen_ai.evaluation.explanation"),
        },
        "metadata": {
            "rubric_version": record.rubric_version,
            "rubric_sha256": record.rubric_sha256,
            "status": record.status,
            "judge_model": record.judge.model,
        },
    }


def _name(project: str) -> str:
    if not project or any(c in project for c in "/?#"):
        raise UsageError(f"--project {project!r}: a Phoenix project name without / ? or #")
    return quote(project, safe="")


def _ns(text: str) -> int:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def _detail(response: httpx.Response, body: bytes) -> str:
    """What an error answer says: its JSON `detail`, the start of its text, or where a
    redirect points (its credentials never shown)."""
    if 300 <= response.status_code < 400:
        return f"a redirect to {shown_url(response.headers.get('location', '?'))}"
    try:
        data = loads_bounded(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace")
    detail = data.get("detail", data) if isinstance(data, dict) else data
    return str(detail)[:200]
