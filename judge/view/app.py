"""The viewer's web app: the pages (one HTML page, its script and style, shipped in the
wheel) and the JSON API they use, which scripts may use too.

    GET  /api/runs                                  every run, with its overview
    GET  /api/runs/{run}/records?status=&slice=&label=&q=&min_score=&max_score=
         &jurors=&min_spread=&human=&human_label=&judged=&ids=&tool=&missing=&sort=&order=&offset=&limit=
                                                    {"total", "records", "facets", "answers"}
    GET  /api/runs/{run}/records/{case_id}          {"record", "case", "human", "run"}
    GET  /api/runs/{run}/confusion                  people (rows) x judge (columns)
    GET  /api/runs/{run}/drift?window=N|by=day|week|month&reference=&alpha=&min_labels=&time_field=
                                                    `judge drift --json`'s report, each window's ids
    GET  /api/runs/{run}/rag                        the two-by-two of the run's pass
    GET  /api/compare?base={run}&candidate={run}    {"metrics", "regressed", "improved", ...}
    GET  /api/outputs/{id}                          a recognised summary/probe/compare file
    POST /api/label {"run", "ids"}                  a new `judge label` set of those cases

Safe as `judge label` is: with a token, every request but the static files needs it
(`Authorization: Bearer TOKEN`; the page may take `?token=`), checked before a body is read;
the request guard of `judge.web` refuses a foreign Host on loopback, cross-site writes and
undeclared bodies; every answer carries a Content-Security-Policy of this origin only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from importlib import resources
from typing import Any

import duckdb
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from judge.errors import JudgeError
from judge.view.drift import DriftQuery
from judge.view.query import RecordQuery
from judge.view.viewer import NotFound, Viewer
from judge.view.words import SearchRefused
from judge.web import BodyLimit, RequestGuard
from judge.web.assets import SHARED_STATIC, shared_asset
from judge.web.session import SecurityHeaders, TokenFirst

STATIC = {
    "view.js": "text/javascript; charset=utf-8",
    "drift.js": "text/javascript; charset=utf-8",
    "view.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
BODY_LIMIT = 1 << 20  # a list of case ids to label
UNAUTHORISED = "open the URL `judge view` printed: it carries the token"


class LabelRequest(BaseModel):
    run: str = Field(min_length=1, max_length=200)
    ids: list[str] = Field(min_length=1, max_length=10_000)


class ViewError(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def create_view_app(
    viewer: Viewer, *, token: str | None, allowed_hosts: Collection[str] = ()
) -> FastAPI:
    """The viewer's app; `token` None only where a server in front checks one itself
    (`judge serve` without a token serves its jobs as openly as its API). `allowed_hosts`:
    Host names besides loopback's (the service's, for a proxy in front)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    install_routes(app, viewer)
    app.add_middleware(BodyLimit, limit_for=lambda _path: BODY_LIMIT)
    if token is not None:
        app.add_middleware(TokenFirst, token=token, message=UNAUTHORISED)
    app.add_middleware(RequestGuard, allowed_hosts=allowed_hosts)
    app.add_middleware(SecurityHeaders)
    return app


def install_routes(app: FastAPI, viewer: Viewer) -> None:
    @app.exception_handler(ViewError)
    async def on_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ViewError)
        body = {"error": {"type": exc.kind, "message": exc.message}}
        return JSONResponse(body, status_code=exc.status)

    @app.get("/", include_in_schema=False)
    def page() -> Response:
        return Response(asset("view.html"), media_type="text/html; charset=utf-8")

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name in SHARED_STATIC:  # the transcript, drawn as the label app draws it
            return Response(shared_asset(name), media_type=SHARED_STATIC[name])
        if name not in STATIC:
            raise ViewError(404, "not_found", "no such file")
        return Response(asset(name), media_type=STATIC[name])

    @app.get("/api/runs")
    def runs() -> Response:
        return _json(_guarded(viewer.runs))

    @app.get("/api/runs/{run_id}/records")
    def records(
        run_id: str,
        status: str | None = None,
        slice: str | None = None,
        label: str | None = None,
        q: str | None = None,
        min_score: float | None = None,
        max_score: float | None = None,
        jurors: str | None = None,
        min_spread: float | None = None,
        human: str | None = None,
        human_label: str | None = None,
        judged: str | None = None,
        ids: str | None = None,
        tool: str | None = None,
        missing: str | None = None,
        sort: str = "input",
        order: str = "asc",
        offset: int = 0,
        limit: int = 50,
    ) -> Response:
        query = RecordQuery(
            status=tuple(s for s in (status or "").split(",") if s),
            slice=slice or None,
            label=label or None,
            q=q or None,
            min_score=min_score,
            max_score=max_score,
            jurors=jurors or None,
            min_spread=min_spread,
            human=human or None,
            human_label=human_label or None,
            judged=judged or None,
            ids=tuple(i for i in (ids or "").split(",") if i),
            tool=tool or None,
            missing=missing or None,
            sort=sort,
            order=order,
            offset=offset,
            limit=limit,
        )
        problems = query.problems()
        if problems:
            raise ViewError(400, "bad_request", "; ".join(problems))
        found = _guarded(lambda: viewer.records(run_id, query))
        rows = ",".join(found["records"])
        text = (
            f'{{"total":{found["total"]},"records":[{rows}],'
            f'"facets":{json.dumps(found["facets"])},"answers":{json.dumps(found["answers"])},'
            f'"goals":{json.dumps(found["goals"])},"reasons":{json.dumps(found["reasons"])}}}'
        )
        return Response(text, media_type="application/json")

    @app.get("/api/runs/{run_id}/records/{case_id:path}")
    def record(run_id: str, case_id: str) -> Response:
        return _json(_guarded(lambda: viewer.record(run_id, case_id)))

    @app.get("/api/runs/{run_id}/confusion")
    def confusion(run_id: str) -> Response:
        return _json(_guarded(lambda: viewer.confusion(run_id)))

    @app.get("/api/runs/{run_id}/drift")
    def drift(
        run_id: str,
        window: int | None = None,
        by: str | None = None,
        reference: str = "first",
        alpha: float = 0.05,
        min_labels: int = 30,
        time_field: str | None = None,
        positive_label: str | None = None,
    ) -> Response:
        query = DriftQuery(
            window=window,
            by=by or None,  # type: ignore[arg-type]  # checked by problems()
            reference=reference or "first",
            alpha=alpha,
            min_labels=min_labels,
            time_field=time_field or None,
            positive_label=positive_label or None,
        )
        problems = query.problems()
        if problems:
            raise ViewError(400, "bad_request", "; ".join(problems))
        return _json(_guarded(lambda: viewer.drift(run_id, query)))

    @app.get("/api/runs/{run_id}/rag")
    def rag(run_id: str) -> Response:
        return _json(_guarded(lambda: viewer.rag(run_id)))

    @app.get("/api/compare")
    def compare(base: str, candidate: str) -> Response:
        return _json(_guarded(lambda: viewer.compare(base, candidate)))

    @app.get("/api/outputs/{output_id}")
    def output(output_id: str) -> Response:
        return _json(_guarded(lambda: viewer.output(output_id)))

    @app.post("/api/label")
    def label(body: LabelRequest) -> Response:
        return _json(_guarded(lambda: viewer.label(body.run, body.ids)))


def _guarded(work: Callable[[], Any]) -> Any:
    try:
        return work()
    except NotFound as exc:
        raise ViewError(404, "not_found", str(exc)) from None
    except SearchRefused as exc:
        raise ViewError(400, "bad_request", str(exc)) from None
    except JudgeError as exc:
        raise ViewError(422, "invalid_request", str(exc)) from None
    except duckdb.Error as exc:  # out of memory, an index changed under a query: one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ViewError(503, "unavailable", f"the query could not run: {first}") from None


def _json(data: Any) -> Response:
    text = json.dumps(data, allow_nan=False, default=str)
    return Response(text, media_type="application/json")


def asset(name: str) -> bytes:
    return resources.files("judge.view").joinpath("static", name).read_bytes()
