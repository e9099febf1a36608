"""HTTP plumbing of the grading service: JSON errors everywhere, body limits, bearer auth.

Every error leaves as `{"error": {"type", "message", "field"?}}` with its status code, from
our own checks, from request validation, from routing (404/405) and from anything unforeseen
(500, with the traceback in the log and nothing internal in the body; the connection stays
usable). The bearer token is checked before anything reads the body (BearerAuth), so an
anonymous client learns nothing from how its body is parsed.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from judge.service._models import ErrorResponse
from judge.web import BodyLimit as BodyLimit  # re-exported: the service's body limit

log = logging.getLogger(__name__)

_STATUS_TYPES = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
}
# pydantic names union members in error locations ("constrained-str", "list[str]"): not fields
_TYPE_TAG = re.compile(r"^(str|int|bool|float|dict|list|none|constrained-\w+)$|\[")
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse, "description": kind}
    for code, kind in (
        (400, "the request cannot be read"),
        (401, "missing or wrong bearer token"),
        (413, "body or list over the limit"),
        (422, "invalid request (the field is named)"),
        (500, "internal error"),
    )
}


def json_errors(**extra: str) -> dict[int | str, dict[str, Any]]:
    """Error responses spelled out as application/json, for routes whose own media type is
    not JSON (FastAPI would otherwise document their errors in the route's media type)."""
    schema = {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}
    described = {code: spec["description"] for code, spec in ERROR_RESPONSES.items()}
    described |= {int(code.lstrip("_")): text for code, text in extra.items()}
    return {
        code: {"description": text, "content": {"application/json": schema}}
        for code, text in described.items()
    }


class ServiceError(Exception):
    """An error with its HTTP status, a machine-readable type and the field at fault."""

    def __init__(
        self,
        status: int,
        kind: str,
        message: str,
        *,
        field: str | None = None,
        problems: list[str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message
        self.field, self.problems, self.headers = field, problems, headers


def error_response(error: ServiceError) -> JSONResponse:
    detail: dict[str, Any] = {"type": error.kind, "message": error.message}
    if error.field is not None:
        detail["field"] = error.field
    if error.problems:
        detail["problems"] = error.problems
    return JSONResponse({"error": detail}, status_code=error.status, headers=error.headers)


def field_name(loc: tuple[Any, ...] | list[Any]) -> str:
    """('body', 'cases', 3, 'answer') -> 'cases[3].answer'; union type tags dropped."""
    out = ""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:] or parts
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _TYPE_TAG.search(str(part)):
            out += f".{part}" if out else str(part)
    return out or "body"


def validation_error(errors: list[Any]) -> ServiceError:
    """A 422 naming the first field at fault, with up to ten problems listed."""
    problems = [f"{field_name(e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in errors]
    first = errors[0] if errors else {}
    field = field_name(first.get("loc", ()))
    message = problems[0] if problems else "invalid request"
    return ServiceError(422, "invalid_request", message, field=field, problems=problems[:10])


def install_error_handlers(app: FastAPI) -> None:
    async def on_service_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ServiceError)
        return error_response(exc)

    async def on_validation(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(validation_error(list(exc.errors())))

    async def on_http(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        kind = _STATUS_TYPES.get(exc.status_code, "http_error")
        message = exc.detail if isinstance(exc.detail, str) else kind.replace("_", " ")
        headers = dict(exc.headers) if exc.headers else None
        return error_response(ServiceError(exc.status_code, kind, message, headers=headers))

    async def on_crash(request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error on %s %s: %s", request.method, request.url.path, type(exc))
        return error_response(ServiceError(500, "internal_error", "internal server error"))

    app.add_exception_handler(ServiceError, on_service_error)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(HTTPException, on_http)
    app.add_exception_handler(Exception, on_crash)


async def _send_json(
    send: Send, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    headers += extra or []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


_UNAUTHORIZED = "a valid bearer token is required (Authorization: Bearer TOKEN)"


def check_token(expected: str | None, credentials: HTTPAuthorizationCredentials | None) -> None:
    """Raise 401 unless the bearer token matches (compared in constant time)."""
    if expected is None:
        return
    given = credentials.credentials if credentials is not None else ""
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise ServiceError(
            401, "unauthorized", _UNAUTHORIZED, headers={"WWW-Authenticate": "Bearer"}
        )


class BearerAuth:
    """ASGI middleware: 401 for a request under `prefix` without the token, sent before the
    route (and its body parsing) runs. The routes' own dependency documents the scheme."""

    def __init__(self, app: ASGIApp, token: str, prefix: str = "/v1") -> None:
        self.app = app
        self.expected = token.encode()
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == self.prefix or path.startswith(self.prefix + "/"):
            header = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, given = header.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self.expected):
                body = {"error": {"type": "unauthorized", "message": _UNAUTHORIZED}}
                await _send_json(send, 401, body, [(b"www-authenticate", b"Bearer")])
                return
        await self.app(scope, receive, send)


class CatchAll:
    """ASGI middleware: an exception no handler took becomes a JSON 500 and is logged, and
    the server goes on with the connection (Starlette's last-resort handler answers, then
    re-raises, and the server drops the connection)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking)
        except Exception as exc:
            method, path = scope.get("method"), scope["path"]
            log.error("internal error on %s %s: %s", method, path, type(exc).__name__, exc_info=exc)
            if started:
                raise  # headers are out: nothing valid can follow
            body = {"error": {"type": "internal_error", "message": "internal server error"}}
            await _send_json(send, 500, body)
