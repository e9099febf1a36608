"""Slow and idle clients cannot stop the servers (issue 20, item 10).

Before the fix about 1,100 half-sent requests, no token needed, stopped both `judge serve`
and `judge label` from answering: at the process's open-files limit (1,024 here, on purpose)
`accept()` failed and uvicorn waited for each request head for ever. Now 2,000 idle
half-open connections leave the server answering within 1 s; a half-sent head is closed
after the head timeout. Loopback only, bounded: every wait has a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from judge.web.server import capacity, guarded_protocol
from tests.label_support import CASES
from tests.test_service_support import REPO, free_port, write_config

IDLE = 2000
SERVER_FILES = 1024  # the limit the report was made under
HALF_SENT = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
# the server process runs under SERVER_FILES open files, soft and hard: it cannot raise them
PRELUDE = (
    "import resource, runpy, sys; "
    f"resource.setrlimit(resource.RLIMIT_NOFILE, ({SERVER_FILES}, {SERVER_FILES})); "
    "runpy.run_module('judge.cli', run_name='__main__')"
)


def client_files() -> None:
    """This test process holds IDLE sockets: raise its own soft limit, or skip."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = IDLE + 512
    if soft < need:
        wanted = need if hard == resource.RLIM_INFINITY else min(hard, need)
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < need:
        pytest.skip(f"the test process cannot open {need} files (hard limit {hard})")


@contextlib.contextmanager
def running(args: list[str], tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """`judge ARGS` under SERVER_FILES open files; yields (base URL, headers to send)."""
    log = (tmp_path / "server.log").open("w+b")
    proc = subprocess.Popen(
        [sys.executable, "-c", PRELUDE, *args], cwd=REPO, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        yield wait_until_listening(proc, log, args)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        log.close()


def wait_until_listening(
    proc: subprocess.Popen[bytes], log: object, args: list[str]
) -> tuple[str, dict[str, str]]:
    deadline = time.monotonic() + 60
    port = args[args.index("--port") + 1]
    base = f"http://127.0.0.1:{port}"
    while time.monotonic() < deadline:
        assert proc.poll() is None, Path(log.name).read_text()  # type: ignore[attr-defined]
        text = Path(log.name).read_text(errors="replace")  # type: ignore[attr-defined]
        token = re.search(r"token=(\S+)", text)
        headers = {"Authorization": f"Bearer {token[1]}"} if token else {}
        if args[0] == "serve" or token:
            with contextlib.suppress(httpx.HTTPError):
                if (
                    httpx.get(base + probe_path(args), headers=headers, timeout=2).status_code
                    == 200
                ):
                    return base, headers
        time.sleep(0.1)
    raise AssertionError(f"judge {args[0]} did not start")


def probe_path(args: list[str]) -> str:
    return "/healthz" if args[0] == "serve" else "/api/state"


def open_idle(port: int, count: int) -> list[socket.socket]:
    """`count` connections, each with half a request head sent, then silence."""
    held = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(HALF_SENT)
        held.append(sock)
    return held


def server_args(which: str, tmp_path: Path) -> list[str]:
    port = str(free_port())
    if which == "serve":
        config = write_config(tmp_path / "service.yaml", data_dir=str(tmp_path / "data"))
        return ["serve", "--config", str(config), "--port", port]
    db = str(tmp_path / "l.sqlite")
    return ["label", str(CASES), "--rubric", "faithfulness", "--db", db, "--port", port]


@pytest.mark.slow
@pytest.mark.parametrize("which", ["serve", "label"])
def test_2000_idle_half_open_connections_leave_the_server_answering(
    which: str, tmp_path: Path
) -> None:
    client_files()
    args = server_args(which, tmp_path)
    with running(args, tmp_path) as (base, headers):
        held = open_idle(int(args[args.index("--port") + 1]), IDLE)
        try:
            for _ in range(3):
                response = httpx.get(base + probe_path(args), headers=headers, timeout=1.0)
                assert response.status_code == 200, response.text
        finally:
            for sock in held:
                sock.close()


def test_capacity_stays_below_the_open_files_limit() -> None:
    assert capacity(1024) < 1024 - 128
    assert capacity(1_048_576) == 4096
    assert capacity(100) >= 16


class ThreadedServer:
    """A tiny app under uvicorn with the guarded protocol, in a thread (short head timeout)."""

    def __init__(self, *, max_connections: int = 64, head_timeout_s: float = 0.3) -> None:
        app = FastAPI()

        @app.get("/healthz")
        async def healthz() -> dict[str, str]:
            return {"status": "ok"}

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        protocol = guarded_protocol(max_connections=max_connections, head_timeout_s=head_timeout_s)
        config = uvicorn.Config(app, http=protocol, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.port = self.sock.getsockname()[1]

    def __enter__(self) -> ThreadedServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()


def closed_by_server(sock: socket.socket) -> bool:
    """True when the server closes the connection (within 10 s, the bound of this wait)."""
    sock.settimeout(10)
    try:
        while data := sock.recv(65536):
            if b"\r\n\r\n" in data and not data.startswith(b"HTTP/1.1 200"):
                return False
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_a_half_sent_head_is_closed_after_the_head_timeout() -> None:
    with ThreadedServer() as server:
        silent = socket.create_connection(("127.0.0.1", server.port))
        half = socket.create_connection(("127.0.0.1", server.port))
        half.sendall(HALF_SENT)
        # a kept-alive connection whose next head stops half-way is closed too
        kept = socket.create_connection(("127.0.0.1", server.port))
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + HALF_SENT)
        assert all(closed_by_server(s) for s in (silent, half, kept))
        for sock in (silent, half, kept):
            sock.close()
        assert httpx.get(f"http://127.0.0.1:{server.port}/healthz", timeout=10).status_code == 200


def test_past_capacity_the_oldest_idle_connection_makes_room() -> None:
    with ThreadedServer(max_connections=20, head_timeout_s=60) as server:
        held = open_idle(server.port, 30)
        try:
            # a request being answered is never the one dropped
            response = httpx.get(f"http://127.0.0.1:{server.port}/healthz", timeout=10)
            assert response.status_code == 200
            assert closed_by_server(held[0])  # the oldest went first
        finally:
            for sock in held:
                sock.close()


def test_guarded_protocol_keeps_asyncio_happy() -> None:
    """The protocol class is made per server: two servers never share their idle lists."""
    first = guarded_protocol(max_connections=4)
    second = guarded_protocol(max_connections=4)
    assert first is not second
    assert asyncio.Protocol in first.__mro__
