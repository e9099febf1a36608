"""A minimal fixed-latency OpenAI-compatible server for the client benchmark (issue 22):
`python -m benchmarks.minimal_server --latency 1.0 [--port 0] [--cpu N]`.

It answers every `POST /v1/chat/completions` after exactly `latency` seconds with one
completion built before the first request: its content is a valid verdict for the
benchmarked rubric (faithfulness, the verdict the test server's simulated judge gives the
benchmark's case 0). Per request it only finds the end of the headers, reads
Content-Length, skips the body and schedules one `transport.write` of the precomputed
bytes (`loop.call_later`): no JSON, no routing framework, no verdict computed, so on a
CPU of its own it is not what limits the run: the client is what is measured. HTTP/1.1 keep-alive (and pipelining) on raw asyncio; `GET /health` is a
200, `GET /stats` the run's window (`Window`), `POST /stats/reset` starts a new one,
anything else a 404. A request body must come with a Content-Length (every client here
sends one; no chunked uploads). The judge's test server (`judge.testserver`) is the other
mode of `benchmarks.client`: it computes a verdict per request, in Python.

It prints its base URL (`http://127.0.0.1:PORT/v1`) on the first line of stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import time
from typing import Any

CHAT = b"POST /v1/chat/completions "
MODEL = "judge-test-2024-01-01"


def benchmark_verdict() -> str:
    """The content of every reply: the simulated judge's verdict for the benchmark's case 0,
    as the JSON text a structured-output model returns."""
    from benchmarks.cases import case
    from judge.kinds import get_kind

    kind = get_kind("faithfulness")
    payload = {k: v for k, v in case(0).items() if k in ("question", "contexts", "answer")}
    return json.dumps(kind.simulated_verdict({}, payload), ensure_ascii=False)


def completion_bytes(content: str, *, model: str = MODEL) -> bytes:
    """The whole HTTP response (status line, headers, body) of one chat completion."""
    body = json.dumps(
        {
            "id": "chatcmpl-minimal",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_minimal",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 200, "completion_tokens": 40, "total_tokens": 240},
        }
    ).encode()
    return _response(200, body)


def _response(status: int, body: bytes) -> bytes:
    reason = {200: "OK", 404: "Not Found"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: keep-alive\r\n\r\n"
    )
    return head.encode() + body


HEALTH = _response(200, b'{"status": "ok"}')
NOT_FOUND = _response(404, b'{"error": {"message": "not found", "type": "not_found"}}')


class Window:
    """Chat requests answered, and the `time.monotonic()` of the first one's arrival and
    of the last reply's write: the run's wall time as the endpoint saw it (Linux's
    CLOCK_MONOTONIC is one clock for every process, so the client can compare)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.first: float | None = None
        self.last: float | None = None

    def as_json(self) -> bytes:
        return json.dumps(
            {"requests": self.requests, "first": self.first, "last": self.last}
        ).encode()


class FixedLatency(asyncio.Protocol):
    """One connection: each complete request answered `latency` seconds after it arrived."""

    def __init__(self, latency: float, reply: bytes, window: Window) -> None:
        self.latency = latency
        self.reply = reply
        self.window = window
        self.buffer = b""
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer + data if self.buffer else data
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                break
            length = _content_length(buffer, end)
            if len(buffer) < end + 4 + length:
                break  # the body is still coming
            head = buffer[:end]
            buffer = buffer[end + 4 + length :]
            if head.startswith(CHAT):
                if self.window.first is None:
                    self.window.first = time.monotonic()
                self.loop.call_later(self.latency, self._answer)
            else:
                self._write(self._other(head))
        self.buffer = buffer

    def _answer(self) -> None:
        self._write(self.reply)
        self.window.requests += 1
        self.window.last = time.monotonic()

    def _other(self, head: bytes) -> bytes:
        if head.startswith(b"GET /health "):
            return HEALTH
        if head.startswith(b"GET /stats "):
            return _response(200, self.window.as_json())
        if head.startswith(b"POST /stats/reset "):
            self.window.reset()
            return _response(200, self.window.as_json())
        return NOT_FOUND

    def _write(self, reply: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(reply)


def _content_length(buffer: bytes, end: int) -> int:
    """The request's Content-Length (0 without one); headers end at `end`."""
    at = buffer.find(b"ontent-Length:", 0, end)
    if at < 0:
        at = buffer.find(b"ontent-length:", 0, end)
    if at < 0:
        at = buffer[:end].lower().find(b"ontent-length:")  # another spelling
    if at < 0:
        return 0
    stop = buffer.find(b"\r\n", at, end + 2)
    return int(buffer[at + 14 : stop])


async def serve(latency: float, port: int, reply: bytes, ready: Any = print) -> None:
    """Serve on 127.0.0.1:`port` (0: any free one) until cancelled; `ready(base_url)` once."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    window = Window()
    server = await loop.create_server(
        lambda: FixedLatency(latency, reply, window), sock=sock, backlog=4096
    )
    ready(f"http://127.0.0.1:{sock.getsockname()[1]}/v1")
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.minimal_server", description=__doc__
    )
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per request")
    parser.add_argument("--port", type=int, default=0, help="0 = any free port")
    parser.add_argument("--cpu", type=int, default=-1, help="pin to this CPU (-1: anywhere)")
    args = parser.parse_args(argv)
    if args.cpu >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    reply = completion_bytes(benchmark_verdict())
    asyncio.run(serve(args.latency, args.port, reply, lambda url: print(url, flush=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
