"""Helpers for the service tests: `judge serve` as a real subprocess on 127.0.0.1, or the
same app under uvicorn in a thread of the test process (to hand it a controllable judge).

No tests here; the service test modules import `ServiceProcess`, `InProcessService` and
`wait_for_job`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import uvicorn
import yaml

from judge.engine.outcome import Backend
from judge.service import create_app
from judge.service.config import ServiceConfig
from tests.helpers import ChildProcess

REPO = Path(__file__).resolve().parents[1]
TOKEN = "test-service-token-5f1c"
_SCRUBBED_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "JUDGE_MODEL", "JUDGE_SERVICE_TOKEN")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_config(path: Path, **config: Any) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False), "utf-8")
    return path


class ServiceProcess(ChildProcess):
    """`python -m judge.cli serve` in a subprocess; `start`, `kill` (SIGKILL), `stop`."""

    def __init__(
        self, config: Path, *, env: dict[str, str] | None = None, verbose: int = 0
    ) -> None:
        self.config = config
        self.verbose = ["-" + "v" * verbose] if verbose else []
        self.log = config.with_suffix(".log")
        self.env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
        self.env.update(env or {})
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # a deadline, not a duration: on a loaded machine (tests in parallel) a start can take
    # tens of seconds; a healthy one answers as soon as it is up
    def start(self, timeout: float = 120.0) -> ServiceProcess:
        self.port = free_port()
        command = [sys.executable, "-m", "judge.cli", *self.verbose, "serve"]
        command += ["--port", str(self.port)]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [*command, "--config", str(self.config)],
                cwd=REPO,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"judge serve exited: {self.log.read_text('utf-8')}")
            try:
                if httpx.get(self.base_url + "/healthz", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"judge serve did not answer within {timeout} s")

    def client(self, token: str | None = TOKEN, **options: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30.0, **options)

    def log_text(self) -> str:
        return self.log.read_text("utf-8", errors="replace") if self.log.exists() else ""


class InProcessService:
    """`create_app(config, backends=...)` under uvicorn in a thread, on a loopback port:
    for tests that must hold a judge still (a real server, a judge the test controls)."""

    def __init__(self, config: ServiceConfig, backends: Mapping[str, Backend] | None = None):
        self.app = create_app(config, backends=backends)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning"))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> InProcessService:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the in-process service did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()


def wait_for_job(
    client: httpx.Client,
    job_id: str,
    *,
    until: tuple[str, ...] = ("done", "failed", "cancelled"),
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Poll the job (bounded) until its status is one of `until`; returns the last state."""
    deadline = time.monotonic() + timeout
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        response = client.get(f"/v1/jobs/{job_id}")
        assert response.status_code == 200, response.text
        state = response.json()
        if state["status"] in until:
            return state
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still {state.get('status')} after {timeout} s: {state}")


def wait_for_progress(
    client: httpx.Client, job_id: str, *, at_least: int, timeout: float = 60.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        state = client.get(f"/v1/jobs/{job_id}").json()
        if (
            state["progress"]["done"] >= at_least
            or state["status"] != "running"
            and state["status"] != "queued"
        ):
            return state
        time.sleep(0.02)
    raise AssertionError(f"job {job_id} made no progress in {timeout} s: {state}")
