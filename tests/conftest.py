"""Shared pytest fixtures."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from judge.testing import FakeOpenAIServer


@pytest.fixture(autouse=True, scope="session")
def _own_cache_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The verdict cache's per-user key (`judge.engine.cache_secret`) in a folder of the
    test session's, never the user's own ~/.config; subprocesses inherit it."""
    before = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config-home"))
    yield
    if before is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = before


# ---- OpenAI-compatible test server ----
# A real HTTP server on 127.0.0.1 (judge/testing/server.py): the default responder answers with
# the rules judge's verdict; `server.script(Reply(...))` queues replies; `FaultPlan` injects
# reproducible faults; `server.stats` counts requests, tokens and peak concurrency.


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A started server with default options, stopped after the test."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def server_factory() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """`server_factory(latency=0.1, faults=FaultPlan(...), ...)` -> a started server; every
    server made is stopped after the test."""
    made: list[FakeOpenAIServer] = []

    def make(**options: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(**options).start()
        made.append(server)
        return server

    yield make
    for server in made:
        server.stop()


# ---- end of OpenAI-compatible test server ----
