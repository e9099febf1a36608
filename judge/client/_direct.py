"""Chat completions straight on aiohttp: the hot path, when `openai[aiohttp]` is installed
and no `http_client` is given.

The body is already exactly what the API takes and the reply is read as JSON once, so the
SDK's request building (options models, header merging, URL parsing: about 2 ms of CPU a
request at high concurrency, benchmarks/CLIENT.md) buys nothing here. What the SDK gives
is kept: its errors. A refused request becomes the SDK's own exception, built by the SDK
from the response (`_make_status_error_from_response`), a dropped connection or a timeout
its APIConnectionError / APITimeoutError, so `translate_error`, the retries, the redactor
and the records are the same on either path. Like the SDK path: no redirects, a reply
capped at MAX_REPLY_BYTES as it streams in, proxies from the environment, one pool of
`concurrency` connections kept alive between requests.

`post_stream` asks for the same reply as server-sent events (`"stream": true`) and puts
the chunks back together into one chat.completion body. Its use: `--timeout` bounds each
read, so on a streamed reply it bounds the silence between two chunks, not the whole
generation: a slow server that is making progress (a CPU model writing a long verdict)
is never abandoned, and its generation is never thrown away and asked for again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import openai

from judge.client._http import MAX_REPLY_BYTES, ReplyTooLarge, httpx
from judge.config import without_userinfo

log = logging.getLogger("judge.client")

__all__ = ["DirectChat"]


class DirectChat:
    """POST chat-completion bodies to one endpoint; (status, headers, JSON bytes) back."""

    def __init__(
        self,
        sdk: openai.AsyncOpenAI,
        *,
        concurrency: int,
        timeout: float,
        limit: int = MAX_REPLY_BYTES,
    ) -> None:
        self._sdk = sdk  # its base URL, key and headers; it builds the errors
        self.url = str(sdk.base_url).rstrip("/") + "/chat/completions"
        headers = {k: v for k, v in sdk.default_headers.items() if isinstance(v, str)}
        headers.update({"Accept-Encoding": "identity", "Content-Type": "application/json"})
        if urlsplit(self.url).password is None:
            headers["Authorization"] = f"Bearer {sdk.api_key}"
        # else, as httpx does, the URL's user and password are sent as basic auth instead
        self._shown = without_userinfo(self.url)  # what a log may say
        headers.pop("X-Stainless-Retry-Count", None)
        self.headers = headers
        self._concurrency = concurrency
        # the SDK's (httpx's) meaning: each phase (a pooled connection, connecting, each
        # read) may take `timeout`, not the whole request
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=timeout, sock_connect=timeout, sock_read=timeout
        )
        self._limit = limit
        self._session: aiohttp.ClientSession | None = None
        self._proxy = proxy_for(self.url)

    def _open(self) -> aiohttp.ClientSession:
        # made on first use, inside the running loop; connections kept alive between requests
        connector = aiohttp.TCPConnector(limit=self._concurrency, limit_per_host=0)
        # trust_env off: it reads ~/.netrc in a thread for every request; the proxy is
        # read from the environment once instead (proxy_for)
        self._session = aiohttp.ClientSession(connector=connector, auto_decompress=False)
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post(self, content: bytes) -> tuple[Mapping[str, str], bytes]:
        """The reply's headers and body for a 2xx; the SDK's exception for anything else."""
        return await self._exchange(content, self._read)

    async def post_stream(self, content: bytes) -> tuple[Mapping[str, str], bytes]:
        """`post` for a body that asks for a streamed reply: the events put back together
        into one chat.completion body (`assemble_stream`)."""
        return await self._exchange(content, self._read_events)

    async def _exchange(self, content: bytes, read: Any) -> tuple[Mapping[str, str], bytes]:
        session = self._session or self._open()
        try:
            async with session.post(
                self.url,
                data=content,
                headers=self.headers,
                allow_redirects=False,
                timeout=self._timeout,
                proxy=self._proxy,
            ) as response:
                ok = 200 <= response.status < 300
                body = await (read if ok else self._read)(response)
                log.debug("HTTP Request: POST %s %d", self._shown, response.status)
                if ok:
                    return response.headers, body
                raise self._status_error(response, body)
        except TimeoutError:
            raise openai.APITimeoutError(request=self._request()) from None
        except aiohttp.ClientError as exc:
            raise openai.APIConnectionError(message=str(exc), request=self._request()) from exc

    async def _read(self, response: aiohttp.ClientResponse) -> bytes:
        """The body, refused (ReplyTooLarge) once past the cap, or at once from its
        Content-Length; an encoded body is capped at what could inflate to the limit."""
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        limit = self._limit if encoding in ("", "identity") else max(self._limit // 1100, 1)
        length = response.content_length
        if length is not None and length > limit:
            raise ReplyTooLarge(self._request(), limit, length)
        if length is not None and encoding in ("", "identity"):
            # aiohttp reads exactly Content-Length bytes, already checked against the cap:
            # one read, not a chunk loop (the usual reply; 15 us a request saved)
            return await response.read()
        chunks, seen = [], 0
        async for chunk in response.content.iter_any():
            seen += len(chunk)
            if seen > limit:
                raise ReplyTooLarge(self._request(), limit)
            chunks.append(chunk)
        body = b"".join(chunks)
        if encoding not in ("", "identity"):
            body = _inflate(body, encoding, self._limit, self._request)
        return body

    async def _read_events(self, response: aiohttp.ClientResponse) -> bytes:
        """A server-sent event stream, capped like `_read`, as one chat.completion body.
        A reply that is not an event stream (a server that ignores `stream`) is read as
        it is."""
        if "text/event-stream" not in response.headers.get("content-type", ""):
            return await self._read(response)
        events, seen = [], 0
        async for line in response.content:
            seen += len(line)
            if seen > self._limit:
                raise ReplyTooLarge(self._request(), self._limit)
            if line.startswith(b"data:"):
                data = line[5:].strip()
                if data == b"[DONE]":
                    break
                events.append(data)
        return json.dumps(assemble_stream(events)).encode()

    def _request(self) -> httpx.Request:
        return httpx.Request("POST", self.url)

    def _status_error(self, response: aiohttp.ClientResponse, body: bytes) -> openai.APIError:
        answer = httpx.Response(
            response.status,
            headers=list(response.raw_headers),
            content=body,
            request=self._request(),
        )
        return self._sdk._make_status_error_from_response(answer)


def assemble_stream(events: list[bytes]) -> dict[str, Any]:
    """The chat.completion body that a list of chat.completion.chunk events (JSON, in order)
    stand for: the first choice's content and refusal joined, its last finish_reason, and
    the model, fingerprint and usage the chunks carry (usage comes in the last one, asked
    for with `stream_options.include_usage`), and the chunks' logprobs joined. An event that is not JSON is a ValueError,
    as an unreadable plain body is."""
    content: list[str] = []
    refusal: list[str] = []
    tokens: list[Any] = []
    body: dict[str, Any] = {"object": "chat.completion"}
    finish = None
    for event in events:
        chunk = json.loads(event)
        if not isinstance(chunk, Mapping):
            raise ValueError("a streamed event is not a JSON object")
        if "error" in chunk:
            raise ValueError(f"the server reported an error mid-stream: {chunk['error']}")
        for key in ("id", "model", "system_fingerprint", "usage"):
            if chunk.get(key):
                body[key] = chunk[key]
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            logprobs = choice.get("logprobs")
            if isinstance(logprobs, Mapping) and isinstance(logprobs.get("content"), list):
                tokens.extend(logprobs["content"])
            content.append(delta.get("content") or "")
            refusal.append(delta.get("refusal") or "")
            finish = choice.get("finish_reason") or finish
    if finish is None:
        raise ValueError("the streamed reply ended before its finish_reason")
    message = {
        "role": "assistant",
        "content": "".join(content),
        "refusal": "".join(refusal) or None,
    }
    first: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
    if tokens:  # each chunk's logprobs, in order: the reply's
        first["logprobs"] = {"content": tokens}
    body["choices"] = [first]
    return body


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for `url` (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, with
    NO_PROXY), as httpx and the SDK would use it; None for none."""
    from urllib.request import getproxies_environment, proxy_bypass

    parts = urlsplit(url)
    proxies = getproxies_environment()
    if not proxies or proxy_bypass(parts.hostname or ""):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


def _inflate(body: bytes, encoding: str, limit: int, request: Any) -> bytes:
    """A gzip or deflate body decoded, at most `limit` bytes of it (ReplyTooLarge past)."""
    import zlib

    if encoding not in ("gzip", "deflate"):
        raise openai.APIConnectionError(
            message=f"the reply is encoded as {encoding!r}, which was not asked for",
            request=request(),
        )
    wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    out = inflater.decompress(body, limit + 1)
    if len(out) > limit:
        raise ReplyTooLarge(request(), limit)
    return out
