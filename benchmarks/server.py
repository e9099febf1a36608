"""The test server in its own process, so its CPU time is never counted as the client's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from typing import Any


class ServerProcess:
    """`python -m judge.testserver` on a free port; `with ServerProcess(latency=0.1) as s:`.
    `cpu` pins it to one CPU (Linux; -1: anywhere); `extra` are more server options;
    `module` another server that takes `--latency` and prints its base URL first
    (`benchmarks.minimal_server`)."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        cpu: int = -1,
        extra: list[str] | None = None,
        module: str = "judge.testserver",
    ) -> None:
        self.module = module
        self.latency = latency
        self.cpu = cpu
        self.extra = list(extra or [])
        self.base_url = ""
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> ServerProcess:
        command = [sys.executable, "-m", self.module, "--latency", str(self.latency)]
        command += self.extra
        cpu = self.cpu

        def pinned() -> None:
            if cpu >= 0 and hasattr(os, "sched_setaffinity"):
                os.sched_setaffinity(0, {cpu})

        self._process = subprocess.Popen(
            command, stdout=subprocess.PIPE, text=True, preexec_fn=pinned
        )
        assert self._process.stdout is not None
        self.base_url = self._process.stdout.readline().strip()
        if not self.base_url.startswith("http://"):
            self.__exit__()
            raise RuntimeError("the test server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=30)
            self._process = None

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used so far (Linux /proc)."""
        assert self._process is not None
        with open(f"/proc/{self._process.pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _call(self, path: str, method: str = "GET") -> dict[str, Any]:
        root = self.base_url.removesuffix("/v1")
        request = urllib.request.Request(root + path, method=method)
        with urllib.request.urlopen(request, timeout=30) as response:
            return dict(json.loads(response.read()))

    def stats(self) -> dict[str, Any]:
        return self._call("/stats")

    def reset(self) -> dict[str, Any]:
        return self._call("/stats/reset", "POST")
