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

This is the package's own small HTTP use (httpx, the openai SDK's transport): it talks to a
trace store, never to a judge endpoint, so it sits outside the import-linter contract that
keeps judge endpoints to `judge.client`, in a contract of its own (pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

from judge.errors import JudgeError, UsageError
from judge.schemas import GradedRecord
from judge.traces.otel import event_attributes
from judge.traces.spans import Span

__all__ = ["PhoenixClient", "PhoenixError", "annotation_of"]

PAGE = 1000  # Phoenix's largest span page
ANNOTATION_BATCH = 100
SPAN_IDS_PER_READ = 1000  # Phoenix's MAX_SPAN_IDS


class PhoenixError(JudgeError):
    """Phoenix could not be reached, or answered with an error (its message kept)."""


@dataclass
class PhoenixClient:
    """One Phoenix server (`url`, e.g. http://127.0.0.1:6006); `api_key` when it has auth
    on (sent as a bearer token, never written anywhere)."""

    url: str
    api_key: str | None = None
    timeout: float = 30.0

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise UsageError(f"--phoenix must be an http(s) URL, got {self.url!r}")
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._http = httpx.Client(
            base_url=self.url.rstrip("/"), headers=headers, timeout=self.timeout
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PhoenixClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- spans in -----------------------------------------------------------------

    def spans(
        self, project: str, *, since: datetime | None = None, until: datetime | None = None
    ) -> Iterator[Span]:
        """Every span of `project` started in [since, until), oldest first."""
        params: dict[str, Any] = {"sort": "start_time", "order": "asc", "limit": PAGE}
        if since is not None:
            params["start_time"] = since.isoformat()
        if until is not None:
            params["end_time"] = until.isoformat()
        while True:
            page = self._get(f"/v1/projects/{_name(project)}/spans", params)
            for item in page.get("data", []):
                yield span_of(item)
            cursor = page.get("next_cursor")
            if not cursor:
                return
            params["cursor"] = cursor

    # ---- annotations out ----------------------------------------------------------

    def annotate(self, records: Iterable[GradedRecord], *, identifier: str = "llm-judge") -> int:
        """Write each record as a span annotation on the span its id names; the count
        written. Records that were not graded (api_error, parse_error) are left out."""
        batch: list[dict[str, Any]] = []
        written = 0
        for record in records:
            if record.status not in ("ok", "abstained"):
                continue
            batch.append(annotation_of(record, identifier))
            if len(batch) >= ANNOTATION_BATCH:
                written += self._post_annotations(batch)
                batch = []
        if batch:
            written += self._post_annotations(batch)
        return written

    def annotations(self, project: str, span_ids: list[str]) -> list[dict[str, Any]]:
        """The span annotations Phoenix holds for these spans."""
        out: list[dict[str, Any]] = []
        for start in range(0, len(span_ids), SPAN_IDS_PER_READ):
            params: dict[str, Any] = {
                "span_ids": span_ids[start : start + SPAN_IDS_PER_READ],
                "limit": 10_000,
            }
            while True:
                page = self._get(f"/v1/projects/{_name(project)}/span_annotations", params)
                out.extend(page.get("data", []))
                if not page.get("next_cursor"):
                    break
                params["cursor"] = page["next_cursor"]
        return out

    def _post_annotations(self, batch: list[dict[str, Any]]) -> int:
        self._send("POST", "/v1/span_annotations", params={"sync": "true"}, json={"data": batch})
        return len(batch)

    def _get(self, path: str, params: dict[str, Any]) -> dict[str, Any]:
        data = self._send("GET", path, params=params)
        if not isinstance(data, dict):
            raise PhoenixError(f"Phoenix {self.url}{path}: the answer is not a JSON object")
        return data

    def _send(self, method: str, path: str, **options: Any) -> Any:
        try:
            response = self._http.request(method, path, **options)
        except httpx.HTTPError as exc:
            raise PhoenixError(f"Phoenix at {self.url} cannot be reached: {exc}") from None
        if response.status_code >= 400:
            raise PhoenixError(
                f"Phoenix {method} {path} answered {response.status_code}: {_detail(response)}"
            )
        return response.json() if response.content else None


def span_of(item: dict[str, Any]) -> Span:
    """A Phoenix span (its REST form) as a Span, the span kind back in the attributes."""
    attributes = dict(item.get("attributes") or {})
    kind = item.get("span_kind")
    if kind and kind != "UNKNOWN":
        attributes.setdefault("openinference.span.kind", kind)
    start = item.get("start_time")
    return Span(
        trace_id=item["context"]["trace_id"],
        span_id=item["context"]["span_id"],
        parent_id=item.get("parent_id") or None,
        name=item.get("name", ""),
        start_ns=_ns(start) if isinstance(start, str) else 0,
        attributes=attributes,
    )


def annotation_of(record: GradedRecord, identifier: str = "llm-judge") -> dict[str, Any]:
    """One record as Phoenix's span annotation: the rubric as the name, the record's score,
    label and explanation; the rubric version and status in the metadata."""
    attributes = event_attributes(record)
    return {
        "span_id": record.id,
        "name": record.rubric,
        "annotator_kind": "LLM" if record.judge.model != "rules" else "CODE",
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


def _detail(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200]
    detail = data.get("detail", data) if isinstance(data, dict) else data
    return str(detail)[:200]
