"""The labelling web app: one page at `/`, a small JSON API under `/api`, static files.

Blind by construction: the store holds no verdict, and every response is built from the
item's view (the rubric's inputs of the case), the label choices and the annotator's own
answers. Every request but the static files needs the session token, as a bearer header or,
for the page itself, `?token=` in the URL the server printed; the page then sends it as a
bearer header, which a cross-site page cannot do without a CORS grant we never give.
The token is checked before a body is read (an anonymous caller learns nothing from how a
body would be parsed), bodies are capped at BODY_LIMIT bytes, and the request guard of
`judge.web` refuses cross-site requests, bodies not declared JSON and, on loopback, any
Host but a loopback name (DNS rebinding).
The Content-Security-Policy allows scripts, styles and requests from this origin only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from judge.label.choices import (
    Choice,
    is_pairwise,
    shown_answers,
    shown_order,
    to_rubric_label,
)
from judge.label.queue import Queues
from judge.label.store import Event, LabelStore, StoredItem
from judge.rubric import Rubric
from judge.web import BodyLimit, RequestGuard
from judge.web.assets import SHARED_STATIC, shared_asset
from judge.web.session import CSP, SECURITY_HEADERS, SecurityHeaders, TokenFirst

__all__ = ["CSP", "SECURITY_HEADERS", "LabelSession", "create_label_app"]

_STATIC = {
    "label.js": "text/javascript; charset=utf-8",
    "label.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
ANNOTATOR = re.compile(r"^[\w][\w .@-]{0,63}$")
BODY_LIMIT = 64 << 10  # an answer is a name, a case id, a choice and a note of 4,000 chars
_UNAUTHORISED = "open the URL `judge label` printed: it carries the token"


@dataclass
class LabelSession:
    """What the app serves: the rubric, its choices, the store and the queues."""

    rubric: Rubric
    choices: list[Choice]
    store: LabelStore
    queues: Queues
    seed: int
    token: str
    annotator: str | None = None  # the name the page starts with, if any


class Answer(BaseModel):
    annotator: str = Field(min_length=1, max_length=64)
    case_id: str = Field(min_length=1, max_length=512)
    choice: str | None = Field(default=None, max_length=64)  # None: skip
    note: str | None = Field(default=None, max_length=4000)


class Undo(BaseModel):
    annotator: str = Field(min_length=1, max_length=64)


class LabelError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def create_label_app(session: LabelSession) -> FastAPI:
    """The FastAPI app of one labelling session (no OpenAPI pages: nothing to document)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @app.exception_handler(LabelError)
    async def on_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, LabelError)
        return JSONResponse({"error": {"message": exc.message}}, status_code=exc.status)

    @app.get("/", include_in_schema=False)
    def page() -> Response:
        return Response(_asset("label.html"), media_type="text/html; charset=utf-8")

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name in SHARED_STATIC:  # the transcript, drawn as the viewer draws it
            return Response(shared_asset(name), media_type=SHARED_STATIC[name])
        if name not in _STATIC:
            raise LabelError(404, "no such file")
        return Response(_asset(name), media_type=_STATIC[name])

    @app.get("/api/state")
    def state(annotator: str | None = None) -> dict[str, Any]:
        return _state(session, _name(annotator) if annotator else None)

    @app.post("/api/answer")
    def answer(body: Answer) -> dict[str, Any]:
        return _answer(session, body)

    @app.post("/api/undo")
    def undo(body: Undo) -> dict[str, Any]:
        name = _name(body.annotator)
        event = session.store.undo(name)
        return _state(session, name, undone=event)

    # outermost last: headers on every answer, then the guard, the token, the body limit
    app.add_middleware(BodyLimit, limit_for=lambda _path: BODY_LIMIT)
    app.add_middleware(TokenFirst, token=session.token, message=_UNAUTHORISED)
    app.add_middleware(RequestGuard)
    app.add_middleware(SecurityHeaders)
    return app


def _asset(name: str) -> bytes:
    return resources.files("judge.label").joinpath("static", name).read_bytes()


def _name(annotator: str) -> str:
    name = annotator.strip()
    if not ANNOTATOR.match(name):
        raise LabelError(422, "a name is letters, digits, spaces, . @ - or _, up to 64")
    return name


def _answer(session: LabelSession, body: Answer) -> dict[str, Any]:
    name = _name(body.annotator)
    item = session.store.item(body.case_id)
    if item is None:
        raise LabelError(404, f"case {body.case_id!r} is not in this labelling set")
    order = shown_order(session.seed, name, item.case_id) if is_pairwise(session.rubric) else None
    if body.choice is None:
        session.store.record(name, item.case_id, label=None, shown_order=order)
        return _state(session, name)
    if body.choice not in {c.name for c in session.choices}:
        raise LabelError(422, f"{body.choice!r} is not a label of {session.rubric.ref}")
    label = to_rubric_label(session.rubric, body.choice, order)
    note = (body.note or "").strip() or None
    session.store.record(name, item.case_id, label=label, note=note, shown_order=order)
    return _state(session, name)


def _state(
    session: LabelSession, annotator: str | None, *, undone: Event | None = None
) -> dict[str, Any]:
    """Everything the page shows; never a verdict, score or rationale (none is stored)."""
    out: dict[str, Any] = {
        "rubric": {"ref": session.rubric.ref, "title": session.rubric.title},
        "choices": [c.as_dict() for c in session.choices],
        "annotator": annotator or session.annotator,
    }
    name = out["annotator"]
    if name is None:
        return out
    item = session.store.item(undone.case_id) if undone else None
    item = item or session.queues.next_item(name)
    out["item"] = _item_view(session, name, item) if item else None
    out["progress"] = session.queues.progress(name)
    if undone is not None and undone.action == "label":
        out["previous"] = {"choice": _shown_choice(session, undone), "note": undone.note or ""}
    return out


def _item_view(session: LabelSession, annotator: str, item: StoredItem) -> dict[str, Any]:
    pairwise = is_pairwise(session.rubric)
    order = shown_order(session.seed, annotator, item.case_id) if pairwise else None
    view = item.view
    out = {
        "case_id": item.case_id,
        "question": view.get("question") or "",
        "contexts": view.get("contexts") or [],
        "answers": shown_answers(view, order),
    }
    if view.get("reference"):
        out["reference"] = view["reference"]
    for name in ("messages", "expected_tool_calls", "goal"):  # a conversation's transcript
        if view.get(name) is not None:  # [] expected calls: "none expected", shown
            out[name] = view[name]
    if not out.get("goal") and isinstance(view.get("messages"), list):
        goal = _first_user_text(view["messages"])  # what the user asked: the goal unnamed
        if goal:
            out["goal"] = goal
    if view.get("messages_a") or view.get("messages_b"):  # two, in this annotator's order
        pair = [view.get("messages_a") or [], view.get("messages_b") or []]
        out["conversations"] = pair if order in (None, "ab") else pair[::-1]
    return out


def _first_user_text(messages: list[Any]) -> str | None:
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str) and content.strip():
                return content
    return None


def _shown_choice(session: LabelSession, event: Event) -> str | None:
    """The choice as the page showed it, for a label read back from the store."""
    if not is_pairwise(session.rubric) or event.label in (None, "tie"):
        return event.label
    first = "A" if event.shown_order == "ab" else "B"
    return "first" if event.label == first else "second"
