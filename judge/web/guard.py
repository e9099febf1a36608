"""What a web page must not do to our local servers: drive them cross-site, or read them
through DNS rebinding. Shared by `judge serve` and `judge label` (ASGI middleware).

A tokenless service on 127.0.0.1 trusts whoever can reach it, and every web page the user
opens can reach it: a cross-site `fetch(url, {method: "POST", mode: "no-cors"})` goes out
without a preflight when its Content-Type is missing or one of the CORS-safelisted ones
(text/plain, form types). Three checks close that door, before any route runs:

1. **Host, on loopback** (DNS rebinding): a page on `evil.example` whose name is re-pointed
   at 127.0.0.1 reaches us with `Host: evil.example`, and then reads our answers as its
   own origin. A request that came in on a loopback address must name a loopback host:
   `localhost` (or `*.localhost`), a loopback IP literal, or one of `allowed_hosts` (a
   reverse proxy's name). Else 400, nothing run.
2. **Cross-site origin** on a state-changing method (anything but GET, HEAD, OPTIONS):
   `Sec-Fetch-Site: cross-site` or `same-site` (another port of localhost is same-site),
   or an `Origin` other than our own host, is 403. Clients that are not browsers send
   neither header and pass.
3. **A declared body type**: a POST, PUT or PATCH must say its Content-Type and it must be
   one the route takes (`application/json` and `+json`, or the uploads a route lists); a
   missing or other type is 415. That alone forces a browser into a CORS preflight, which
   we never grant.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Collection, Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
JSON_TYPE = "application/json"
LOOPBACK_NAMES = ("localhost",)


def is_loopback_address(host: str) -> bool:
    """True for a loopback IP literal (127.0.0.0/8, ::1), with or without IPv6 brackets."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """`Host` header -> host name, lower case, without the port: `[::1]:80` -> `::1`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def media_type(header: str) -> str:
    return header.split(";")[0].strip().lower()


def json_only(_path: str) -> Collection[str]:
    return (JSON_TYPE,)


class RequestGuard:
    """ASGI middleware applying the three checks above; `body_types(path)` names the media
    types a path's bodies may have (any `+json` type counts as JSON)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Iterable[str] = (),
        body_types: Callable[[str], Collection[str]] = json_only,
    ) -> None:
        self.app = app
        self.allowed_hosts = {h.lower() for h in allowed_hosts}
        self.body_types = body_types

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            problem = self.check(scope)
            if problem is not None:
                status, kind, message = problem
                await send_error(send, status, kind, message)
                return
        await self.app(scope, receive, send)

    def check(self, scope: Scope) -> tuple[int, str, str] | None:
        """(status, type, message) for a request to refuse, else None."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        server = scope.get("server") or ("", 0)
        if is_loopback_address(str(server[0])) and not self._loopback_name(host_name(host)):
            return (
                400,
                "bad_host",
                "the Host header is not a name of this server: on loopback it answers "
                "localhost, 127.0.0.1 and [::1] only (a proxy's name goes in allowed_hosts)",
            )
        method = scope["method"].upper()
        if method in SAFE_METHODS:
            return None
        site = headers.get("sec-fetch-site", "").lower()
        origin = headers.get("origin")
        if site in ("cross-site", "same-site") or (
            origin is not None and not _same_origin(origin, host)
        ):
            return (403, "cross_site", "cross-site requests are refused")
        if method in BODY_METHODS:
            given = media_type(headers.get("content-type", ""))
            wanted = self.body_types(scope["path"])
            json_ok = JSON_TYPE in wanted and given.endswith("+json")
            if given not in wanted and not json_ok:
                return (
                    415,
                    "unsupported_media_type",
                    f"send the body as {' or '.join(sorted(wanted))} (Content-Type), "
                    f"not {given or 'no Content-Type'}",
                )
        return None

    def _loopback_name(self, name: str) -> bool:
        return (
            name in LOOPBACK_NAMES
            or name.endswith(".localhost")
            or is_loopback_address(name)
            or name in self.allowed_hosts
        )


def _same_origin(origin: str, host: str) -> bool:
    """An `Origin` names our own host (and port) exactly; `null` never does."""
    parts = urlsplit(origin.strip().lower())
    return bool(parts.netloc) and parts.netloc == host.strip().lower()


async def send_error(send: Send, status: int, kind: str, message: str) -> None:
    """A JSON error `{"error": {"type", "message"}}` sent straight from middleware."""
    body: dict[str, Any] = {"error": {"type": kind, "message": message}}
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
