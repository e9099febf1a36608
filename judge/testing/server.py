"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests, benchmarks and manual runs.

It answers `POST /v1/chat/completions` and `GET /v1/models` like OpenAI does, with the
verdict the offline rules judge computes for the case in the user message (so a fault-free
run through it gives the same verdicts as `--offline`), and can be scripted (`script`) or
told to fail in reproducible ways (`FaultPlan`). It counts what a provider would bill.

    with FakeOpenAIServer(latency=0.1) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")

    python -m judge.testing.server --port 8099 --latency 0.2 --fault-rate 0.25

Asked for `logprobs` (with `top_logprobs`), it answers them in OpenAI's shape, deterministic
per case, with alternatives where the verdict writes a value its schema limits to a set
(judge.testing._logprobs); `logprobs="refuse"` answers such a request with a 400 naming
logprobs, `logprobs="omit"` answers it without them, as servers that cannot give them do.

Prompt tokens are an approximation unless `token_counter` is given: ceil(characters / 4)
of each message's content, plus the same for the JSON schema sent in `response_format`
(providers bill the schema too). Completion tokens: ceil(characters / 4) of the reply.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import math
import signal
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from judge.kinds import get_kind, kind_for_request, kind_for_schema
from judge.testing._batch import BatchAPI
from judge.testing._http import DROP_HEADER as _DROP_HEADER
from judge.testing._http import error_body, error_response
from judge.testing._logprobs import reply_logprobs
from judge.testing._stream import streamed_completion

DEFAULT_MODEL = "judge-test-2024-01-01"
_DROP_LOG = "ASGI callable returned without completing response."
MAX_BODIES = 10_000
LOGPROBS = ("serve", "refuse", "omit")  # what a request that asks for logprobs gets
FAULTS = ("429", "500", "503", "drop", "timeout", "malformed", "truncated", "refusal")
TRANSIENT_FAULTS = frozenset({"429", "500", "503", "drop", "timeout"})
_SCHEMA_IN_PROMPT = "The JSON must match this schema: "


@dataclass
class Reply:
    """One scripted answer. With neither `content` nor `verdict`, a 200 reply carries what
    the default responder would have said (so `Reply(delay=2)` is just a slow answer)."""

    content: str | None = None
    verdict: dict[str, Any] | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error_body: dict[str, Any] | None = None
    finish_reason: str = "stop"
    refusal: str | None = None
    delay: float = 0.0
    drop_connection: bool = False
    stall: float = 0.0  # silence after a streamed reply's first chunk (plain: more delay)
    huge_body: int = 0  # > 0: a 200 whose body is this many bytes, streamed, never held
    declare_length: bool = False  # with huge_body: say its size in Content-Length
    # an agent's turn: the tool calls the assistant message carries (OpenAI's shape; pass
    # finish_reason="tool_calls" too); the content stays null unless `content` is given
    tool_calls: tuple[dict[str, Any], ...] | None = None


@dataclass(frozen=True)
class FaultPlan:
    """Reproducible faults: each case (the text of its first user message) draws one fault,
    or none, from sha256(seed + text) and the rates below, which must sum to at most 1.

    Transient faults (429 with Retry-After, 500, 503, a dropped connection, a timeout that
    sleeps `timeout_delay` seconds) hit only the first request for a case, so one retry
    succeeds. `malformed` answers invalid JSON to every request but the repair (the request
    carrying an assistant turn). `truncated` (finish_reason "length", cut JSON) and `refusal`
    hit every request: no retry or repair can fix them.
    """

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_503: float = 0.0
    rate_drop: float = 0.0
    rate_timeout: float = 0.0
    rate_malformed: float = 0.0
    rate_truncated: float = 0.0
    rate_refusal: float = 0.0
    retry_after: float | None = 0.01
    timeout_delay: float = 5.0
    seed: int = 0

    def __post_init__(self) -> None:
        rates = self._rates()
        if any(r < 0 for r in rates) or sum(rates) > 1.0 + 1e-9:
            raise ValueError(f"fault rates must be >= 0 and sum to <= 1, got {rates}")

    def _rates(self) -> list[float]:
        return [getattr(self, "rate_" + name) for name in FAULTS]

    def fault_for(self, text: str) -> str | None:
        """The fault this case's user message draws (one of FAULTS), or None."""
        digest = hashlib.sha256(f"{self.seed}\x00{text}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        edge = 0.0
        for name, rate in zip(FAULTS, self._rates(), strict=True):
            edge += rate
            if draw < edge:
                return name
        return None

    @classmethod
    def mixed(cls, total: float, **options: Any) -> FaultPlan:
        """`total` split like the reliability suite: 429 : 500 : malformed : truncated :
        timeout = 10 : 5 : 5 : 3 : 2."""
        share = total / 25
        return cls(
            rate_429=10 * share,
            rate_500=5 * share,
            rate_malformed=5 * share,
            rate_truncated=3 * share,
            rate_timeout=2 * share,
            **options,
        )


@dataclass
class RateLimit:
    """A provider's request rate limit: a token bucket of `burst` requests (default one
    second's worth) refilled at `per_second`. A chat request beyond it gets a 429 with
    Retry-After (seconds until one request is allowed, and `retry-after-ms`); every chat
    reply carries OpenAI's headers: `x-ratelimit-limit-requests`,
    `x-ratelimit-remaining-requests` and `x-ratelimit-reset-requests` (time to a full
    bucket, as "1.5s")."""

    per_second: float
    burst: float | None = None
    level: float = math.nan
    stamp: float = 0.0

    @property
    def capacity(self) -> float:
        return self.burst if self.burst is not None else max(self.per_second, 1.0)

    def take(self, now: float) -> tuple[bool, dict[str, str]]:
        """(allowed, headers) for a request arriving at `now` (monotonic seconds)."""
        if math.isnan(self.level):
            self.level, self.stamp = self.capacity, now
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.per_second)
        self.stamp = now
        allowed = self.level >= 1.0
        if allowed:
            self.level -= 1.0
        full_in = (self.capacity - self.level) / self.per_second
        headers = {
            "x-ratelimit-limit-requests": str(int(self.capacity)),
            "x-ratelimit-remaining-requests": str(int(self.level)),
            "x-ratelimit-reset-requests": f"{full_in:.3f}s",
        }
        if not allowed:
            wait = (1.0 - self.level) / self.per_second
            headers["retry-after"] = f"{math.ceil(wait * 1000) / 1000:g}"
            headers["retry-after-ms"] = str(math.ceil(wait * 1000))
        return allowed, headers


@dataclass
class ChatRequest:
    """What a responder sees of one chat request."""

    body: dict[str, Any]
    messages: list[dict[str, Any]]
    kind: str | None
    payload: dict[str, Any]
    response_format: dict[str, Any] | None
    is_repair: bool
    headers: dict[str, str]

    @property
    def case_text(self) -> str:
        """The first user message: the case, the same on every attempt and on the repair."""
        for message in self.messages:
            if message.get("role") == "user":
                return _text(message.get("content"))
        return ""

    @property
    def mode(self) -> str:
        return (self.response_format or {}).get("type") or "prompt"


@dataclass
class ServerStats:
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    peak_concurrency: int = 0
    in_flight: int = 0
    requests_by_path: Counter[str] = field(default_factory=Counter)
    requests_by_mode: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    rate_limited: int = 0  # 429s answered by the RateLimit
    # the Authorization header of each chat request ("" when none): which key reached it
    authorizations: Counter[str] = field(default_factory=Counter)
    bodies: deque[dict[str, Any]] = field(
        default_factory=lambda: deque(maxlen=MAX_BODIES), repr=False
    )


Responder = Callable[[ChatRequest], "Reply | dict[str, Any]"]


class _QuietDrops(logging.Filter):
    """Uvicorn logs an error for every response we cut off on purpose; those are expected."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != _DROP_LOG


logging.getLogger("uvicorn.error").addFilter(_QuietDrops())


def approx_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


class FakeOpenAIServer:
    """An OpenAI-compatible chat server in a background thread (see the module docstring)."""

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        latency: float = 0.0,
        faults: FaultPlan | None = None,
        model: str = DEFAULT_MODEL,
        system_fingerprint: str = "fp_test",
        host: str = "127.0.0.1",
        port: int = 0,
        reject_response_format: set[str] | frozenset[str] = frozenset(),
        api_key: str | None = None,
        strict_model: bool = False,
        token_counter: Callable[[str], int] = approx_tokens,
        served_models: Sequence[str] | None = None,
        rate_limit: RateLimit | None = None,
        logprobs: str = "serve",
    ) -> None:
        if logprobs not in LOGPROBS:
            raise ValueError(f"logprobs must be one of {LOGPROBS}, got {logprobs!r}")
        self.logprobs = logprobs
        self.responder = responder
        self.latency = latency
        self.faults = faults
        self.model = model
        self.system_fingerprint = system_fingerprint
        self.host, self.port = host, port
        self.reject_response_format = set(reject_response_format)
        self.api_key = api_key
        self.strict_model = strict_model
        self.token_counter = token_counter
        self.served_models = [model] if served_models is None else list(served_models)
        self.rate_limit = rate_limit
        self.stats = ServerStats()
        self._lock = threading.Lock()
        self._scripted: deque[Reply] = deque()
        self._attempts: Counter[str] = Counter()
        self._fault_by_case: dict[str, str | None] = {}
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._ids = 0
        self._closing = False
        self.batch_api = BatchAPI(self)  # /v1/files and /v1/batches
        self.starlette = Starlette(
            routes=[
                *self.batch_api.routes(),
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/health", self._health, methods=["GET"]),
                Route("/stats", self._stats, methods=["GET"]),
                Route("/stats/reset", self._reset, methods=["POST"]),
            ]
        )

    async def app(self, scope: Any, receive: Any, send: Any) -> None:
        """The ASGI app: Starlette, except that a response marked `_DROP_HEADER` is cut off
        after its headers, so the client sees the connection close mid-response."""
        dropping = False

        async def guarded_send(message: MutableMapping[str, Any]) -> None:
            nonlocal dropping
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                dropping = _DROP_HEADER.encode() in names
            if dropping and message["type"] == "http.response.body":
                return  # uvicorn closes the transport: the body never comes
            await send(message)

        await self.starlette(scope, receive, guarded_send)

    # ---- lifecycle -------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        if self._server is not None:
            return self
        # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say they are TCP;
        # without it every response waits ~40 ms for a delayed ACK (Nagle)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.listen(2048)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            lifespan="off",
            interface="asgi3",
            access_log=False,
            timeout_graceful_shutdown=1,
            backlog=2048,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="fake-openai", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)
        if not server.started:
            server.should_exit = True
            sock.close()
            raise RuntimeError("the test server did not start within 10 s")
        self._server, self._thread, self._sock = server, thread, sock
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._closing = True
        server.should_exit = True
        thread.join(timeout=10)
        self._closing = False
        self._sock.close()
        self._server = self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- control ---------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies; each chat request takes the next one before anything else."""
        with self._lock:
            self._scripted.extend(replies)

    def reset_stats(self) -> None:
        with self._lock:
            self.stats = ServerStats()
            self._attempts.clear()
            self._fault_by_case.clear()

    def fault_of(self, case_text: str) -> str | None:
        """The fault the plan gives this user message (whether or not it was sent yet)."""
        return self.faults.fault_for(case_text) if self.faults else None

    @property
    def faults_seen(self) -> dict[str, str | None]:
        """sha256 of each user message received -> the fault it drew (None = none)."""
        with self._lock:
            return dict(self._fault_by_case)

    # ---- handlers --------------------------------------------------------------------

    async def _health(self, request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def _stats(self, request: Request) -> Response:
        """The counters (not the bodies), for a client in another process."""
        return JSONResponse(self.stats_dict())

    async def _reset(self, request: Request) -> Response:
        self.reset_stats()
        return JSONResponse(self.stats_dict())

    def stats_dict(self) -> dict[str, Any]:
        with self._lock:
            stats = self.stats
            return {
                "requests": stats.requests,
                "prompt_tokens": stats.prompt_tokens,
                "completion_tokens": stats.completion_tokens,
                "peak_concurrency": stats.peak_concurrency,
                "in_flight": stats.in_flight,
                "requests_by_path": dict(stats.requests_by_path),
                "requests_by_mode": dict(stats.requests_by_mode),
                "faults": dict(stats.faults),
                "rate_limited": stats.rate_limited,
            }

    async def _models(self, request: Request) -> Response:
        self._count_path(request)
        models = [
            {"id": name, "object": "model", "created": 1704067200, "owned_by": "test"}
            for name in self.served_models
        ]
        return JSONResponse({"object": "list", "data": models})

    def _count_path(self, request: Request) -> None:
        with self._lock:
            self.stats.requests_by_path[request.url.path] += 1

    async def _chat(self, request: Request) -> Response:
        self._count_path(request)
        with self._lock:
            self.stats.in_flight += 1
            self.stats.peak_concurrency = max(self.stats.peak_concurrency, self.stats.in_flight)
        try:
            return await self._answer(request)
        finally:
            with self._lock:
                self.stats.in_flight -= 1

    async def _answer(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return error_response(400, "the body is not valid JSON", "invalid_request_error")
        problem = self._refuse(request, body)
        if problem is not None:
            return problem
        limit_headers: dict[str, str] = {}
        if self.rate_limit is not None:
            with self._lock:
                allowed, limit_headers = self.rate_limit.take(time.monotonic())
                self.stats.rate_limited += not allowed
            if not allowed:
                message = "Rate limit reached for requests"
                response = error_response(429, message, "rate_limit_exceeded")
                response.headers.update(limit_headers)
                return response
        chat = parse_chat_request(body, dict(request.headers))
        prompt_tokens = self._prompt_tokens(chat)
        with self._lock:
            self.stats.requests += 1
            self.stats.prompt_tokens += prompt_tokens
            self.stats.requests_by_mode[chat.mode] += 1
            self.stats.bodies.append(body)
            scripted = self._scripted.popleft() if self._scripted else None
        reply = scripted or self._planned(chat)
        plain = reply.status != 200 or bool(reply.huge_body) or reply.drop_connection
        streamed = body.get("stream") is True and not plain
        if not streamed:
            await self._sleep(self.latency + reply.delay + reply.stall)
        if reply.drop_connection:
            return Response(b"{}" * 64, headers={_DROP_HEADER: "1"})
        if reply.status != 200:
            return self._error(reply)
        if reply.huge_body:
            return _huge(reply)
        content, verdict = reply.content, reply.verdict
        if content is None and verdict is not None:
            content = json.dumps(verdict)
        if content is None and reply.refusal is None and not reply.tool_calls:
            verdict = default_verdict(chat)
            content = render_content(verdict, chat.mode)
        completion_tokens = self.token_counter(content or reply.refusal or "")
        with self._lock:
            self.stats.completion_tokens += completion_tokens
        completion = self._completion(chat, content, reply, prompt_tokens, completion_tokens)
        if content and body.get("logprobs") is True and self.logprobs == "serve":
            completion["choices"][0]["logprobs"] = self._logprobs(chat, content, verdict)
        if streamed:
            options = body.get("stream_options") or {}
            return streamed_completion(
                completion,
                delay=self.latency + reply.delay,
                stall=reply.stall,
                sleep=self._sleep,
                include_usage=isinstance(options, dict) and options.get("include_usage") is True,
                headers={**limit_headers, **reply.headers},
            )
        return JSONResponse(completion, headers={**limit_headers, **reply.headers})

    def _logprobs(self, chat: ChatRequest, content: str, verdict: Any) -> dict[str, Any]:
        """The reply's logprobs (judge.testing._logprobs); a scripted text is read for its
        verdict, and without one every token is sure."""
        if verdict is None:
            try:
                verdict = json.loads(content)
            except (ValueError, RecursionError):  # a scripted reply may be anything
                verdict = None
        top = chat.body.get("top_logprobs")
        top = top if isinstance(top, int) and not isinstance(top, bool) else 0
        return reply_logprobs(content, verdict, request_schema(chat), chat.case_text, top)

    async def _sleep(self, seconds: float) -> None:
        # in slices, so that stop() does not wait for a long scripted delay to run out
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0 and not self._closing:
            await asyncio.sleep(min(left, 0.25))

    def _refuse(self, request: Request, body: Any) -> Response | None:
        sent = request.headers.get("authorization", "")
        with self._lock:
            self.stats.authorizations[sent] += 1
        if self.api_key is not None and sent != f"Bearer {self.api_key}":
            return error_response(401, "Incorrect API key provided", "invalid_api_key")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return error_response(400, "'messages' is required", "invalid_request_error")
        if self.strict_model and body.get("model") != self.model:
            return error_response(
                404, f"The model '{body.get('model')}' does not exist", "model_not_found"
            )
        if self.logprobs == "refuse" and body.get("logprobs"):
            return error_response(
                400, "logprobs are not supported for this model", "invalid_request_error"
            )
        mode = (body.get("response_format") or {}).get("type")
        if mode in self.reject_response_format:
            return error_response(
                400, f"response_format {mode} is not supported", "invalid_request_error"
            )
        return None

    def _prompt_tokens(self, chat: ChatRequest) -> int:
        texts = [_text(m.get("content")) for m in chat.messages]
        schema = ((chat.response_format or {}).get("json_schema") or {}).get("schema")
        if schema is not None:
            texts.append(json.dumps(schema))
        return sum(self.token_counter(t) for t in texts)

    def _planned(self, chat: ChatRequest) -> Reply:
        """The responder's reply, or the fault the plan gives this case on this attempt."""
        fault = self._fault(chat)
        if fault is not None:
            return fault_reply(fault, chat, self.faults or FaultPlan())
        if self.responder is None:
            return Reply()
        answer = self.responder(chat)
        return answer if isinstance(answer, Reply) else Reply(verdict=answer)

    def _fault(self, chat: ChatRequest) -> str | None:
        if self.faults is None:
            return None
        text = chat.case_text
        key = hashlib.sha256(text.encode()).hexdigest()
        fault = self.faults.fault_for(text)
        with self._lock:
            self._fault_by_case[key] = fault
            if not chat.is_repair:
                self._attempts[key] += 1
            first = self._attempts[key] == 1
        if fault in TRANSIENT_FAULTS and not (first and not chat.is_repair):
            return None
        if fault == "malformed" and chat.is_repair:
            return None
        if fault is not None:
            with self._lock:
                self.stats.faults[fault] += 1
        return fault

    def _error(self, reply: Reply) -> Response:
        body = reply.error_body or error_body(
            f"scripted HTTP {reply.status}", _ERROR_TYPES.get(reply.status, "api_error")
        )
        return JSONResponse(body, status_code=reply.status, headers=reply.headers)

    def _completion(
        self, chat: ChatRequest, content: str | None, reply: Reply, prompt: int, completion: int
    ) -> dict[str, Any]:
        with self._lock:
            self._ids += 1
            number = self._ids
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "refusal": reply.refusal,
        }
        if reply.tool_calls:
            message["tool_calls"] = [dict(call) for call in reply.tool_calls]
        return {
            "id": f"chatcmpl-test-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "system_fingerprint": self.system_fingerprint,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": reply.finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }


def _huge(reply: Reply) -> Response:
    """A reply of `reply.huge_body` bytes (the opening of a JSON object, then spaces),
    streamed in 1 MiB chunks: the server never holds it whole."""
    size, chunk = reply.huge_body, b" " * (1 << 20)

    async def body() -> AsyncIterator[bytes]:
        head = b'{"id": "chatcmpl-huge", "choices": ['
        yield head
        left = size - len(head)
        while left > 0:
            yield chunk[: min(left, len(chunk))]
            left -= len(chunk)

    headers = {**reply.headers, "content-type": "application/json"}
    if reply.declare_length:
        headers["content-length"] = str(size)
    return StreamingResponse(body(), headers=headers)


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    404: "model_not_found",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "service_unavailable",
}


def fault_reply(fault: str, chat: ChatRequest, plan: FaultPlan) -> Reply:
    """The reply that enacts one fault."""
    if fault == "429":
        headers = {} if plan.retry_after is None else {"retry-after": f"{plan.retry_after:g}"}
        return Reply(
            status=429,
            headers=headers,
            error_body=error_body("Rate limit reached", "rate_limit_exceeded"),
        )
    if fault in ("500", "503"):
        return Reply(
            status=int(fault), error_body=error_body("The server had an error", "server_error")
        )
    if fault == "drop":
        return Reply(drop_connection=True)
    if fault == "timeout":
        return Reply(delay=plan.timeout_delay)
    if fault == "malformed":
        return Reply(content='{"claims": [{"claim": "unterminated')
    full = render_content(default_verdict(chat), "json_schema")
    if fault == "truncated":
        return Reply(content=full[: max(1, len(full) // 2)], finish_reason="length")
    return Reply(refusal="I'm sorry, I can't help with that.")


def parse_chat_request(body: dict[str, Any], headers: dict[str, str]) -> ChatRequest:
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    response_format = body.get("response_format")
    chat = ChatRequest(
        body=body,
        messages=messages,
        kind=None,
        payload={},
        response_format=response_format if isinstance(response_format, dict) else None,
        is_repair=any(m.get("role") == "assistant" for m in messages),
        headers={k: v for k, v in headers.items() if k.lower() != "authorization"},
    )
    try:
        payload = json.loads(chat.case_text)
    except ValueError:
        payload = None
    chat.payload = payload if isinstance(payload, dict) else {}
    chat.kind = detect_kind(chat)
    return chat


def request_schema(chat: ChatRequest) -> dict[str, Any]:
    """The verdict schema the request carries: in `response_format`, or in the system
    prompt (prompt mode); empty when there is none (JSON mode)."""
    schema = ((chat.response_format or {}).get("json_schema") or {}).get("schema")
    if isinstance(schema, dict):
        return schema
    system = " ".join(_text(m.get("content")) for m in chat.messages if m.get("role") == "system")
    _, found, rest = system.partition(_SCHEMA_IN_PROMPT)
    if found:
        try:
            parsed, _ = json.JSONDecoder().raw_decode(rest)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def detect_kind(chat: ChatRequest) -> str | None:
    """From the schema name; else the kind that recognises the schema's fields and the
    payload (the registry decides, never this module)."""
    schema_name = ((chat.response_format or {}).get("json_schema") or {}).get("name")
    kind = kind_for_schema(schema_name)
    if kind is None:
        fields = set(request_schema(chat).get("properties") or {})
        kind = kind_for_request(fields, chat.payload)
    return kind.name if kind else None


def default_verdict(chat: ChatRequest) -> dict[str, Any]:
    """The verdict the kind simulates for the case in the user message (for the built-in
    kinds, the verdict `judge.engine.rules` gives it)."""
    kind = get_kind(chat.kind or "faithfulness")
    return kind.simulated_verdict(request_schema(chat), chat.payload)


def render_content(verdict: dict[str, Any], mode: str) -> str:
    """Just the JSON in a structured mode; a sentence and a fenced block in prompt mode."""
    text = json.dumps(verdict, ensure_ascii=False)
    if mode in ("json_schema", "json_object"):
        return text
    return f"Here is my verdict.\n```json\n{text}\n```"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


# ---- command line ----------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m judge.testing.server",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,  # the examples keep their lines
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = any free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--fault-rate", type=float, default=0.0, help="total, split 10:5:5:3:2")
    for name in FAULTS:
        parser.add_argument(f"--rate-{name}", type=float, default=None)
    parser.add_argument("--retry-after", type=float, default=0.01)
    parser.add_argument("--timeout-delay", type=float, default=5.0)
    parser.add_argument("--fault-seed", type=int, default=0)
    parser.add_argument(
        "--reject", action="append", default=[], help="refuse this response_format type"
    )
    parser.add_argument(
        "--logprobs",
        choices=LOGPROBS,
        default="serve",
        help="a request asking for logprobs: answer them (serve), refuse it with a 400 "
        "(refuse), or answer without them (omit)",
    )
    parser.add_argument(
        "--rate-limit",
        type=float,
        default=None,
        metavar="N",
        help="allow N chat requests per second (429 beyond, with Retry-After and the "
        "x-ratelimit-* headers)",
    )
    args = parser.parse_args(argv)
    options = {
        "retry_after": args.retry_after,
        "timeout_delay": args.timeout_delay,
        "seed": args.fault_seed,
    }
    plan = FaultPlan.mixed(args.fault_rate, **options) if args.fault_rate else None
    explicit = {f"rate_{n}": getattr(args, f"rate_{n}") for n in FAULTS}
    if any(v is not None for v in explicit.values()):
        plan = FaultPlan(**{k: v for k, v in explicit.items() if v is not None}, **options)
    server = FakeOpenAIServer(
        latency=args.latency,
        faults=plan,
        model=args.model,
        host=args.host,
        port=args.port,
        reject_response_format=set(args.reject),
        rate_limit=RateLimit(args.rate_limit) if args.rate_limit else None,
        logprobs=args.logprobs,
    )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with server:
        print(server.base_url, flush=True)
        while not stop.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
