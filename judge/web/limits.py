"""Body limits for the web apps: 413 as soon as a body is known to be over its route's limit,
408 when a body stops arriving for BODY_IDLE_S (a slow client must not hold a request)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from judge.web.guard import send_error

BODY_IDLE_S = 30.0


class BodyLimit:
    """ASGI middleware: 413 when a body is over its route's limit, by Content-Length at once
    or, for a chunked upload, as soon as the bytes received pass it; 408 when no part of
    the body arrives for `idle_s`. Once the body is complete, `receive` is passed through
    untouched (a streaming response waits on it for the disconnect, however long)."""

    def __init__(
        self, app: ASGIApp, limit_for: Callable[[str], int], idle_s: float = BODY_IDLE_S
    ) -> None:
        self.app = app
        self.limit_for = limit_for
        self.idle_s = idle_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await send_error(send, 413, "payload_too_large", too_large(limit))
            return
        received = 0
        complete = False

        async def limited() -> Message:
            nonlocal received, complete
            if complete:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.idle_s)
            except TimeoutError:
                raise HTTPException(
                    408, f"no part of the body came for {self.idle_s:g} s"
                ) from None
            complete = message["type"] != "http.request" or not message.get("more_body", False)
            received += len(message.get("body", b""))
            if received > limit:
                raise HTTPException(413, too_large(limit))
            return message

        await self.app(scope, limited, send)


def too_large(limit: int) -> str:
    return f"request body is over the {limit}-byte limit"
