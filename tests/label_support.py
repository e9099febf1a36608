"""Helpers for the labelling tests: `judge label` as a real subprocess, and a records file
whose verdicts carry a marker that must never reach the page. No tests here."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx

from tests.helpers import ChildProcess

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "examples" / "cases.jsonl"
PAIRS = REPO / "examples" / "pairs.jsonl"
MARKER = "ZZ-JUDGE-RATIONALE-7f3a9c"
SCORE = 0.123456789  # a judge score no page may show
_URL = re.compile(r"open (http://\S+)")


def secret_records(
    cases: Path, path: Path, *, labels: tuple[str, ...] = ("faithful", "unfaithful")
) -> Path:
    """Graded records for every case, with MARKER in every rationale and evidence, SCORE
    as every score, and labels alternating (so stratified sampling has strata)."""
    rows = [json.loads(line) for line in cases.read_text("utf-8").splitlines() if line.strip()]
    with path.open("w", encoding="utf-8") as out:
        for i, row in enumerate(rows):
            verdict = {
                "claims": [{"claim": "c", "verdict": "supported", "evidence": MARKER}],
                "rationale": MARKER,
            }
            record = {
                "id": row["id"],
                "rubric": "faithfulness",
                "rubric_version": 1,
                "rubric_sha256": "0" * 64,
                "judge": {"model": "judge-x", "output_mode": "json_schema"},
                "status": "ok",
                "verdict": verdict,
                "score": SCORE,
                "label": labels[i % len(labels)],
                "slices": row.get("slices", []),
            }
            out.write(json.dumps(record) + "\n")
    return path


class LabelServer(ChildProcess):
    """`python -m judge.cli label ... --port 0` in a subprocess; the URL is read from the
    line it prints once its socket listens (no polling, no sleep)."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.args = [str(a) for a in args]
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.log: list[str] = []

    def start(self) -> LabelServer:
        command = [sys.executable, "-m", "judge.cli", "label", *self.args, "--port", "0"]
        self.proc = subprocess.Popen(
            command,
            cwd=REPO,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            match = _URL.search(line)
            if match:
                self.url = match[1]
                # keep draining stderr so a chatty server never blocks on a full pipe
                threading.Thread(target=self._drain, daemon=True).start()
                return self
        raise RuntimeError(f"judge label exited ({self.proc.wait()}) without printing its URL")

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    @property
    def base(self) -> str:
        return self.url.split("/?")[0]

    @property
    def token(self) -> str:
        return self.url.split("token=")[1]

    def client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.Client(base_url=self.base, headers=headers, timeout=30.0)


def answer(api: httpx.Client, annotator: str, choice: str | None, note: str = "") -> dict[str, Any]:
    """Label (or skip) the case the server offers `annotator` now; return the new state."""
    state = api.get("/api/state", params={"annotator": annotator}).json()
    body = {
        "annotator": annotator,
        "case_id": state["item"]["case_id"],
        "choice": choice,
        "note": note,
    }
    response = api.post("/api/answer", json=body)
    assert response.status_code == 200, response.text
    return {"labelled": state["item"]["case_id"], **response.json()}


class ThreadServer:
    """An ASGI app under uvicorn in a thread of this process, on a socket bound (and
    listening) before the thread starts, so the first request needs no wait."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()
