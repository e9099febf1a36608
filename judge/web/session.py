"""What a local app with a session token adds on top of the guard (`judge label`,
`judge view`): the token checked before anything else, and security headers on every
answer.

The page itself may carry the token in its URL (`?token=`, the URL the command printed);
every other request must send it as `Authorization: Bearer TOKEN`, which a cross-site page
cannot do without a CORS grant we never give. The token is compared in constant time and
checked before a body is read, so an anonymous caller learns nothing from how a body would
be parsed. Static files (script, style, icon) are public: they hold no data.
"""

from __future__ import annotations

import hmac
from collections.abc import Collection, Mapping

from starlette.datastructures import Headers, QueryParams
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from judge.web.guard import send_error

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # the page URL carries the token
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class TokenFirst:
    """ASGI middleware: 401 (`message` says where the token is) unless the request carries
    the session token, before any route runs. `pages` may take it as `?token=`; paths
    under `/static/` need none."""

    def __init__(
        self, app: ASGIApp, token: str, message: str, pages: Collection[str] = ("/",)
    ) -> None:
        self.app = app
        self.expected = token.encode()
        self.message = message
        self.pages = frozenset(pages)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope["path"].startswith("/static/"):
            header = Headers(scope=scope).get("authorization", "")
            given = header[7:] if header.lower().startswith("bearer ") else ""
            if not given and scope["path"] in self.pages:
                given = QueryParams(scope.get("query_string", b"")).get("token", "")
            if not hmac.compare_digest(given.encode(), self.expected):
                await send_error(send, 401, "unauthorized", self.message)
                return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """ASGI middleware: `headers` (SECURITY_HEADERS) on every response, errors from
    middleware included."""

    def __init__(self, app: ASGIApp, headers: Mapping[str, str] = SECURITY_HEADERS) -> None:
        self.app = app
        self.headers = dict(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        names = {k.lower() for k in self.headers}
        added = [(k.lower().encode(), v.encode()) for k, v in self.headers.items()]

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.decode("latin-1").lower() not in names
                ]
                message = {**message, "headers": kept + added}
            await send(message)

        await self.app(scope, receive, with_headers)
