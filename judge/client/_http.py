"""The HTTP layer under the SDK: which httpx the installed `openai` speaks, the transport,
no redirects, and a cap on the size of a reply.

- openai 3.x runs on `httpx2`, 2.x on `httpx`: `httpx` below is whichever the SDK uses,
  so one client module serves both (`SDK_MAJOR` says which).
- Chat completions go straight on aiohttp when it is installed (`judge.client._direct`,
  the `openai[aiohttp]` extra); `chat_clients` gives the SDK's clients otherwise, or when
  asked: its aiohttp transport (`openai.DefaultAioHttpClient`: one pool of `concurrency`
  connections, whose cost per request stays flat as concurrency grows) or a few small
  httpx pools used in turn (httpcore rescans every connection for every queued request,
  O(N^2) in one big pool; benchmarks/CLIENT.md).
- Redirects are never followed: a 3xx is an error (`judge.client._retry.translate_error`),
  so the prompt goes to the configured endpoint and nowhere else.
- A reply body larger than `MAX_REPLY_BYTES` is refused as it streams in (or at once from
  its Content-Length) with `ReplyTooLarge`: memory stays bounded whatever the server sends.
"""

from __future__ import annotations

import functools
import itertools
import ssl
from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai

SDK_MAJOR = int(openai.__version__.split(".", 1)[0])
if SDK_MAJOR >= 3:
    import httpx2 as httpx
else:  # openai 2.x
    import httpx  # type: ignore[no-redef]

__all__ = [
    "MAX_REPLY_BYTES",
    "POOL_SIZE",
    "SDK_MAJOR",
    "ReplyTooLarge",
    "aiohttp_available",
    "async_client",
    "chat_clients",
    "default_tls",
    "httpx",
    "sync_client",
]

MAX_REPLY_BYTES = 16 * 1024 * 1024  # a verdict is a few kB; max_tokens bounds an honest reply
POOL_SIZE = 8  # connections per httpx pool when aiohttp is not installed


class ReplyTooLarge(openai.APIError):
    """A reply body over the cap: refused unread, never retried."""

    def __init__(self, request: Any, limit: int, size: int | None = None) -> None:
        said = f" (Content-Length {size:,})" if size is not None else ""
        message = (
            f"the reply body is larger than {limit:,} bytes{said}; not read (a judge's "
            "reply is a few kB: check --base-url)"
        )
        super().__init__(message, request, body=None)
        self.limit = limit


class _CappedAsync(httpx.AsyncByteStream):
    """A response byte stream that stops with ReplyTooLarge past `limit` bytes."""

    def __init__(self, stream: Any, limit: int, request: Any) -> None:
        self._stream, self._limit, self._request = stream, limit, request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._stream:
            seen += len(chunk)
            if seen > self._limit:
                raise ReplyTooLarge(self._request, self._limit)
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class _CappedSync(httpx.SyncByteStream):
    """`_CappedAsync` for the sync client."""

    def __init__(self, stream: Any, limit: int, request: Any) -> None:
        self._stream, self._limit, self._request = stream, limit, request

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self._stream:
            seen += len(chunk)
            if seen > self._limit:
                raise ReplyTooLarge(self._request, self._limit)
            yield chunk

    def close(self) -> None:
        self._stream.close()


# Replies are asked for unencoded (NO_ENCODING); one compressed all the same is capped at
# what could inflate to the limit (gzip and deflate inflate at most ~1,032:1).
NO_ENCODING = {"Accept-Encoding": "identity"}
_INFLATE = 1100


def _raw_limit(response: Any, limit: int) -> int:
    """The cap on the bytes as they arrive: `limit`, or less when the body is encoded."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    limit = limit if encoding in ("", "identity") else max(limit // _INFLATE, 1)
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise ReplyTooLarge(response.request, limit, int(length))
    return limit


def _cap_hooks(limit: int | None, *, sync: bool = False) -> dict[str, list[Any]]:
    """Event hooks that wrap each response's stream before the client reads the body."""
    if limit is None:
        return {}

    def cap(response: Any) -> None:
        raw = _raw_limit(response, limit)
        response.stream = _CappedSync(response.stream, raw, response.request)

    async def acap(response: Any) -> None:
        raw = _raw_limit(response, limit)
        response.stream = _CappedAsync(response.stream, raw, response.request)

    return {"response": [cap if sync else acap]}


def aiohttp_available() -> bool:
    """Whether the SDK's aiohttp transport can be built (the `openai[aiohttp]` extra)."""
    try:
        import aiohttp  # noqa: F401

        if SDK_MAJOR >= 3:
            import openai._vendor.httpx_aiohttp  # noqa: F401
        else:
            import httpx_aiohttp  # noqa: F401
    except ImportError:
        return False
    return True


def chat_clients(
    concurrency: int, *, limit: int | None = MAX_REPLY_BYTES, transport: str = "auto"
) -> list[httpx.AsyncClient]:
    """HTTP clients for chat completions at `concurrency` requests in flight: one aiohttp
    pool (`transport` "aiohttp", or "auto" when installed), else httpx pools of POOL_SIZE."""
    hooks = _cap_hooks(limit)
    if transport == "aiohttp" or (transport == "auto" and aiohttp_available()):
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        client = openai.DefaultAioHttpClient(
            limits=limits, follow_redirects=False, event_hooks=hooks, headers=NO_ENCODING
        )
        return [client]
    shards = -(-concurrency // POOL_SIZE)
    size = -(-concurrency // shards)
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    tls = default_tls()
    return [
        openai.DefaultAsyncHttpxClient(
            limits=limits,
            verify=tls,
            follow_redirects=False,
            event_hooks=hooks,
            headers=NO_ENCODING,
        )
        for _ in itertools.repeat(None, shards)
    ]


@functools.cache
def default_tls() -> ssl.SSLContext:
    """The TLS context httpx builds by default (`verify=True`: its CA bundle, SSL_CERT_FILE
    and SSL_CERT_DIR), built once a process and shared by every client: loading the CA
    bundle costs ~40 ms, as much as a hundred cases' client CPU, and the SDK client of the
    direct path (`judge.client._direct`) builds one for every judge it serves."""
    return httpx.create_ssl_context()


def async_client(*, limit: int | None = None) -> httpx.AsyncClient:
    """One async httpx client that follows no redirect (the Batch API's control plane:
    its file downloads stream to disk, so they take no cap)."""
    return openai.DefaultAsyncHttpxClient(
        verify=default_tls(), follow_redirects=False, event_hooks=_cap_hooks(limit)
    )


def sync_client(*, limit: int | None = MAX_REPLY_BYTES) -> httpx.Client:
    """One sync httpx client (`GET /models`): no redirects, replies capped."""
    return openai.DefaultHttpxClient(
        follow_redirects=False, event_hooks=_cap_hooks(limit, sync=True), headers=NO_ENCODING
    )
