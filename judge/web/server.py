"""uvicorn settings that keep slow or idle clients from holding a server.

Without them, about 1,100 half-sent requests, no token needed, would stop `judge serve` and `judge label`
from answering: each open connection holds a file descriptor, uvicorn waits for a request
head for ever, and at the process's open-files limit (1,024 on many systems) `accept()`
fails and nothing new is answered. Three measures, all here:

1. The soft open-files limit is raised to the hard one at start (`raise_open_files_limit`).
2. A connection must send a whole request head within HEAD_TIMEOUT_S of opening (or of its
   previous response); else it is closed. uvicorn's own keep-alive timer stops at the first
   byte of the next request, so a half-sent head used to be held for ever.
3. Connections are capped below the open-files limit (`capacity`): past it, each new
   connection closes the oldest one still waiting for its request head. A flood of idle
   connections thus only ever displaces other idle connections; a request being answered
   is never dropped, and `/healthz` answers at once (tests/e2e/test_slow_clients.py holds
   2,000 idle connections open against a server limited to 1,024 files).

A body that stops arriving is cut by `judge.web.limits.BodyLimit`'s idle timeout.
"""

from __future__ import annotations

import asyncio
import resource
import socket
from collections import OrderedDict
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
ACCEPT_BURST = 128  # connections asyncio accepts in one go (uvicorn's `backlog`)
RESERVED_FILES = ACCEPT_BURST + 96  # the accept burst, SQLite, logs, judge connections
MAX_CONNECTIONS = 4096


def raise_open_files_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit (as far as allowed); the soft limit
    in force afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if wanted > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft


def capacity(open_files: int) -> int:
    """How many connections a server with `open_files` descriptors keeps open at most."""
    return max(16, min(MAX_CONNECTIONS, open_files - RESERVED_FILES))


def guarded_protocol(
    *, max_connections: int, head_timeout_s: float = HEAD_TIMEOUT_S
) -> type[H11Protocol]:
    """An H11Protocol class for one server: head timeout and oldest-idle-first shedding."""
    waiting: OrderedDict[H11Protocol, None] = OrderedDict()  # idle, oldest first

    class GuardedH11Protocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._wait_for_head()
            while len(self.connections) > max_connections and len(waiting) > 1:
                oldest = next(iter(waiting))
                if oldest is self:
                    break
                oldest._close_idle()  # type: ignore[attr-defined]

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:  # a request head has arrived
                self._head_arrived()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._wait_for_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_arrived()
            super().connection_lost(exc)

        def _wait_for_head(self) -> None:
            self._head_arrived()
            waiting[self] = None
            self._head_timer = self.loop.call_later(head_timeout_s, self._close_idle)

        def _head_arrived(self) -> None:
            waiting.pop(self, None)
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _close_idle(self) -> None:
            self._head_arrived()
            if not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol


def server_config(app: Any, **options: Any) -> uvicorn.Config:
    """uvicorn's Config for our apps: the guarded protocol, short keep-alive, no Server
    header; the open-files limit raised first."""
    limit = raise_open_files_limit()
    return uvicorn.Config(
        app,
        http=guarded_protocol(max_connections=capacity(limit)),
        backlog=ACCEPT_BURST,
        timeout_keep_alive=KEEP_ALIVE_S,
        server_header=False,
        log_level=options.pop("log_level", "warning"),
        **options,
    )


def serve(app: Any, sock: socket.socket, **options: Any) -> None:
    """Run `app` on the bound socket `sock` until stopped (SIGINT, SIGTERM)."""
    uvicorn.Server(server_config(app, **options)).run(sockets=[sock])
