"""A slow server that is making progress is never abandoned (issue 37 point 2), over
loopback with the test server's streamed replies: after a first timeout the client asks
for a streamed reply, where --timeout bounds the silence between chunks, not the whole
generation; a timed-out request is re-sent at most once; every timeout names --timeout.

No timing is asserted: every delay is several times the timeout it must outlast, and every
gap between chunks several times shorter than the timeout it must stay under."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.client._direct import assemble_stream
from judge.client._http import aiohttp_available
from judge.config import JudgeConfig
from judge.engine.model import LLMJudge
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.testing import FakeOpenAIServer, Reply
from judge.testing._stream import PIECES
from tests.helpers import case

pytestmark = pytest.mark.skipif(not aiohttp_available(), reason="needs openai[aiohttp]")

TIMEOUT = 1.0
SLOW = 3.0  # 3x the timeout in all; a gap between chunks is SLOW / PIECES, 2.7x under it
SAID = f"--timeout {TIMEOUT:g}"


def config(server: FakeOpenAIServer, **more: object) -> JudgeConfig:
    options: dict[str, object] = {
        "model": server.model,
        "base_url": server.base_url,
        "timeout": TIMEOUT,
        "max_retries": 5,
        "backoff_initial": 0.0,
        "backoff_max": 0.0,
    }
    options.update(more)
    return JudgeConfig(**options)  # type: ignore[arg-type]


async def evaluate(server: FakeOpenAIServer, stream: bool | None = None, **more: object):  # type: ignore[no-untyped-def]
    judge = LLMJudge(config(server, **more))
    judge.client = type(judge.client)(judge.config, stream=stream)
    try:
        return await judge.evaluate(load_rubric("faithfulness"), Case.model_validate(case()))
    finally:
        await judge.aclose()


def streamed(server: FakeOpenAIServer) -> list[bool]:
    return [body.get("stream") is True for body in server.stats.bodies]


def test_the_gaps_are_well_under_the_timeout() -> None:
    assert SLOW > 2.5 * TIMEOUT and SLOW / PIECES < TIMEOUT / 2.5


async def test_a_slow_server_making_progress_finishes_on_the_second_request(
    server_factory: Callable[..., FakeOpenAIServer],
) -> None:
    """Before: every request waited --timeout for the whole reply, so a generation longer
    than --timeout failed every attempt (6 requests, the case an api_error)."""
    server = server_factory(latency=SLOW)
    outcome = await evaluate(server)
    assert outcome.status == "ok", outcome.error
    assert server.stats.requests == 2
    assert streamed(server) == [False, True]  # plain first, streamed after the timeout
    assert outcome.usage.completion_tokens > 0  # the usage of the streamed reply


async def test_a_streaming_client_never_abandons_a_slow_server(
    server_factory: Callable[..., FakeOpenAIServer],
) -> None:
    server = server_factory(latency=SLOW)
    outcome = await evaluate(server, stream=True)
    assert outcome.status == "ok", outcome.error
    assert server.stats.requests == 1 and streamed(server) == [True]


async def test_a_silent_stream_fails_after_two_requests_naming_the_timeout(
    server_factory: Callable[..., FakeOpenAIServer],
) -> None:
    server = server_factory()
    server.script(Reply(stall=60), Reply(stall=60), Reply(stall=60))
    outcome = await evaluate(server, stream=True)
    assert outcome.status == "api_error"
    assert SAID in (outcome.error or ""), outcome.error
    assert server.stats.requests == 2  # sent, and re-sent once: not --max-retries 5 times


async def test_plain_timeouts_are_resent_at_most_once(
    server_factory: Callable[..., FakeOpenAIServer],
) -> None:
    server = server_factory()
    server.script(Reply(delay=60), Reply(delay=60), Reply(delay=60))
    outcome = await evaluate(server, stream=False)
    assert outcome.status == "api_error"
    assert f"no reply within {SAID} s" in (outcome.error or ""), outcome.error
    assert server.stats.requests == 2 and streamed(server) == [False, False]


async def test_a_stream_that_stops_making_progress_is_not_asked_a_third_time(
    server_factory: Callable[..., FakeOpenAIServer],
) -> None:
    server = server_factory()
    server.script(Reply(delay=60), Reply(stall=60), Reply(stall=60))
    outcome = await evaluate(server)
    assert outcome.status == "api_error"
    assert f"silent for {SAID} s" in (outcome.error or ""), outcome.error
    assert server.stats.requests == 2 and streamed(server) == [False, True]


async def test_a_streamed_reply_carries_what_a_plain_one_does(
    server_factory: Callable[..., FakeOpenAIServer],
) -> None:
    plain_server, stream_server = server_factory(), server_factory()
    plain = await evaluate(plain_server, stream=False)
    stream = await evaluate(stream_server, stream=True)
    assert stream.status == plain.status == "ok"
    assert stream.verdict == plain.verdict
    assert stream.usage == plain.usage
    assert stream.judge.system_fingerprint == plain.judge.system_fingerprint == "fp_test"
    assert stream.judge.output_mode == plain.judge.output_mode == "json_schema"
    assert stream_server.stats.bodies[0]["stream_options"] == {"include_usage": True}


def test_assemble_stream_joins_the_chunks() -> None:
    head = {"id": "c1", "model": "m", "object": "chat.completion.chunk"}
    events = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        {**head, "choices": [{"index": 0, "delta": {"content": '{"a": '}}]},
        {**head, "choices": [{"index": 0, "delta": {"content": "1}"}, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
        {**head, "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}},
    ]
    body = assemble_stream([json.dumps(e).encode() for e in events])
    assert body["choices"][0]["message"]["content"] == '{"a": 1}'
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 2} and body["model"] == "m"
    with pytest.raises(ValueError, match="finish_reason"):
        assemble_stream([json.dumps(e).encode() for e in events[:3]])
    with pytest.raises(ValueError, match="mid-stream"):
        assemble_stream([b'{"error": {"message": "out of memory"}}'])


def test_the_cli_grades_a_case_slower_than_its_timeout(
    tmp_path: Path, server_factory: Callable[..., FakeOpenAIServer]
) -> None:
    """Issue 37: default settings spent 6 min 20 s failing one case on a slow CPU server;
    now the case is graded, with two requests, the second streamed."""
    server = server_factory(latency=SLOW)
    source = tmp_path / "cases.jsonl"
    source.write_text(json.dumps(case()) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_"))}
    command = [sys.executable, "-m", "judge.cli", "grade", str(source), "--rubric"]
    command += ["faithfulness", "-o", str(tmp_path / "out.jsonl"), "--model", server.model]
    command += ["--base-url", server.base_url, "--no-cache", "--timeout", f"{TIMEOUT:g}"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "out.jsonl").read_text())
    assert record["status"] == "ok"
    assert server.stats.requests == 2 and streamed(server) == [False, True]
    assert f"{SAID} s" in done.stderr  # the switch to streamed replies is said once
