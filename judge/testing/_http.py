"""What the test server's chat and Batch API routes share: OpenAI-shaped error bodies and
the header that tells the server to cut a response off mid-body."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

DROP_HEADER = "x-test-drop-connection"


def error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": kind, "param": None}}


def error_response(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse(error_body(message, kind), status_code=status)
