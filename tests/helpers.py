"""Shared test helpers: canned cases, OpenAI-shaped replies on a mock of the SDK's own
transport (`MockEndpoint`), and a test-server responder that puts a kill at a fixed request
count."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from judge.client._http import httpx  # the SDK's own: httpx2 under openai 3.x, httpx under 2.x
from judge.kinds import Scored, kind_for_schema
from judge.testing import Reply

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"

TRIAL_CONTEXT = (
    "The free trial lasts 14 days from the day you sign up. "
    "You can cancel any time before day 14 and pay nothing."
)
TRIAL_ANSWER = "The free trial lasts 14 days from sign-up. You can cancel any time. The moon is made of cheese."


def case(id: str = "c1", **fields: Any) -> dict[str, Any]:
    base = {"id": id, "question": "How long is the free trial?", "contexts": [TRIAL_CONTEXT]}
    base["answer"] = TRIAL_ANSWER
    base.update(fields)
    return base


def pair(id: str = "p1", **fields: Any) -> dict[str, Any]:
    base = {
        "id": id,
        "question": "How long is the free trial?",
        "contexts": [TRIAL_CONTEXT],
        "answer_a": "The free trial lasts 14 days.",
        "answer_b": "The trial lasts 40 days and includes a free gift.",
    }
    base.update(fields)
    return base


FAITHFUL_VERDICT = {
    "claims": [
        {"claim": "The trial lasts 14 days.", "verdict": "supported", "evidence": "lasts 14 days"},
        {"claim": "Cancel any time.", "verdict": "supported", "evidence": "cancel any time"},
    ]
}
RELEVANCE_VERDICT = {"rationale": "Answers it directly.", "abstained": False, "score": 5}
PAIRWISE_VERDICT = {"rationale": "A matches the context.", "winner": "A"}


def chat_reply(
    content: str | dict[str, Any] | None,
    *,
    finish_reason: str = "stop",
    model: str = "gpt-4o-2024-08-06",
    fingerprint: str | None = "fp_test123",
    refusal: str | None = None,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
) -> httpx.Response:
    """An OpenAI chat.completion response."""
    text = json.dumps(content) if isinstance(content, dict) else content
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "system_fingerprint": fingerprint,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": refusal},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return httpx.Response(200, json=body)


def api_error(
    status: int, message: str = "error", headers: dict[str, str] | None = None
) -> httpx.Response:
    body = {"error": {"message": message, "type": "test_error", "code": None}}
    return httpx.Response(status, json=body, headers=headers or {})


class MockEndpoint:
    """A scripted endpoint on the transport the SDK actually uses (`MockTransport` of its
    httpx), for `LLMJudge(config, http_client=endpoint.client())`. Each request takes the
    next of `replies` (a response, or an exception to raise, as a dropped connection would);
    the last one repeats. `requests` holds what was sent; `sent(i)` its JSON body."""

    def __init__(self, *replies: httpx.Response | Exception) -> None:
        assert replies, "script at least one reply"
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        return httpx.Response(reply.status_code, headers=reply.headers, content=reply.content)

    @property
    def call_count(self) -> int:
        return len(self.requests)

    def sent(self, index: int = -1) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(self.requests[index].content)
        return body

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self))


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    # split on "\n" alone: str.splitlines also splits inside a string holding U+2028 or
    # U+0085, which records keep as they are (ensure_ascii=False)
    return [json.loads(line) for line in path.read_text("utf-8").split("\n") if line.strip()]


class StallAfter:
    """A test-server responder (`server_factory(responder=StallAfter(n))`) that answers the
    first `n` requests and holds every later one until `release()`.

    A client killed while the server holds has finished a known number of cases, however
    fast or loaded the machine: the kill point is a request count, not a moment. Records
    come out in input order while requests race to the server, so a held case may precede
    answered ones: with at most C requests in flight the finished prefix is `at_least(C)`
    to `n` cases long. Requests held when the client dies stay parked until the server stops.
    """

    HOLD_S = 600.0  # longer than any test; stop() ends a held request at once

    def __init__(self, answers: int) -> None:
        self.answers = answers
        self.seen = 0
        self.released = False

    def __call__(self, request: Any) -> Reply:
        self.seen += 1
        held = not self.released and self.seen > self.answers
        return Reply(delay=self.HOLD_S) if held else Reply()

    def at_least(self, concurrency: int) -> int:
        """Cases finished in input order once the server holds: every case before the first
        held one was answered, and at most `concurrency - 1` answered cases come after it."""
        return self.answers - concurrency + 1

    def release(self) -> None:
        """Answer every request from now on (those already held stay held)."""
        self.released = True


def wait_for_lines(path: Path, count: int, process: subprocess.Popen[bytes]) -> None:
    """Wait until `path` holds `count` lines. The bound (60 s) only stops a broken run from
    hanging the suite; a correct run gets there whatever the machine's speed."""
    for _ in range(600):
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        time.sleep(0.1)
    raise AssertionError(f"{path} never reached {count} lines")


def score_verdict(verdict: BaseModel) -> tuple[str, float | None, str | None]:
    """(status, score, label) of a built-in kind's verdict, as its kind reads it."""
    kind = kind_for_schema(type(verdict).__name__)
    assert kind is not None, type(verdict).__name__
    scored: Scored = kind.score(None, verdict)  # type: ignore[arg-type]
    return scored.status, scored.score, scored.label


class ChildProcess:
    """A command the test started (`self.proc`): stop it politely, or SIGKILL it as when a
    machine dies (no shutdown code runs)."""

    proc: subprocess.Popen[Any] | None = None

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()


HANG_GUARD_S = 60  # a guard against a hang, not a timing: fixed code ends at once


def ends(run: Callable[[], Any], guard: float = HANG_GUARD_S) -> Any:
    """Run `run` in a thread and return what it returns (or raise what it raised); fail the
    test, rather than hang it, when it has not ended after `guard` seconds."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = run()
        except BaseException as exc:  # handed back to the test
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(guard)
    assert not thread.is_alive(), "did not end"
    if "error" in out:
        raise out["error"]
    return out.get("value")
