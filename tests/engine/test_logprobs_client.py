"""Issue 50: the model judge asks for logprobs, reads the confidence from them, and goes on
without them (said once) where the endpoint refuses them or answers without them. On a
mock of the SDK's own transport (`MockEndpoint`): what is sent, how often, what is said."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

import pytest

from judge.client._http import httpx
from judge.config import JudgeConfig
from judge.engine.model import LLMJudge
from judge.engine.votes import majority
from judge.rubric import load_rubric
from judge.schemas import Case
from tests.helpers import PAIRWISE_VERDICT, MockEndpoint, api_error, chat_reply, pair

BASE = "http://judge.test/v1"


def config(**overrides: Any) -> JudgeConfig:
    options: dict[str, Any] = {
        "model": "gpt-4o-2024-08-06",
        "base_url": BASE,
        "api_key": "sk-test",
        "backoff_initial": 0.01,
        "backoff_max": 0.05,
        "max_retries": 1,
    }
    return JudgeConfig(**{**options, **overrides})


def with_logprobs(verdict: dict[str, Any], p_a: float) -> httpx.Response:
    """A reply writing `verdict` (winner A) in strict JSON, with the token `A` at p_a, `B`
    at the rest but 0.1, and ` ` (no label) at 0.1."""
    text = json.dumps(verdict, separators=(",", ":"))
    head, tail = text.split('"winner":"A"')
    pieces = [head + '"winner":"', "A", '"' + tail]

    def entry(token: str, p: float, top: list[tuple[str, float]]) -> dict[str, Any]:
        alternatives = [{"token": t, "logprob": math.log(q)} for t, q in top]
        return {"token": token, "logprob": math.log(p), "top_logprobs": alternatives}

    content = [
        entry(pieces[0], 1.0, [(pieces[0], 1.0)]),
        entry("A", p_a, [("A", p_a), ("B", 0.9 - p_a), (" ", 0.1)]),
        entry(pieces[2], 1.0, [(pieces[2], 1.0)]),
    ]
    body = json.loads(chat_reply(text).content)
    body["choices"][0]["logprobs"] = {"content": content}
    return httpx.Response(200, json=body)


async def grade_pairs(endpoint: MockEndpoint, count: int, **overrides: Any) -> list[Any]:
    judge = LLMJudge(config(**overrides), http_client=endpoint.client())
    try:
        rubric = load_rubric("pairwise")
        return [
            await judge.evaluate(rubric, Case.model_validate(pair(f"p{i}"))) for i in range(count)
        ]
    finally:
        await judge.aclose()


async def test_logprobs_are_asked_and_give_the_confidence() -> None:
    route = MockEndpoint(with_logprobs(PAIRWISE_VERDICT, 0.6))
    (outcome,) = await grade_pairs(route, 1, top_logprobs=5)
    body = route.sent(0)
    assert body["logprobs"] is True and body["top_logprobs"] == 5
    assert outcome.confidence == pytest.approx(0.6 / 0.9, abs=1e-6)
    assert outcome.confidence_source == "logprobs"


async def test_top_logprobs_zero_asks_none() -> None:
    route = MockEndpoint(chat_reply(PAIRWISE_VERDICT))
    (outcome,) = await grade_pairs(route, 1, top_logprobs=0)
    assert "logprobs" not in route.sent(0) and "top_logprobs" not in route.sent(0)
    assert outcome.confidence is None


async def test_a_refusal_is_said_once_and_logprobs_are_not_asked_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    refused = api_error(400, "logprobs is not supported with this model")
    route = MockEndpoint(refused, chat_reply(PAIRWISE_VERDICT))
    with caplog.at_level(logging.WARNING, logger="judge.client._chat"):
        outcomes = await grade_pairs(route, 3)
    assert [o.status for o in outcomes] == ["ok"] * 3
    assert all(o.confidence is None for o in outcomes)
    # the refused request once, then each case once, none asking for logprobs again
    assert route.call_count == 4
    assert route.sent(0)["logprobs"] is True
    assert all("logprobs" not in route.sent(i) for i in (1, 2, 3))
    warnings = [r for r in caplog.records if "logprobs" in r.getMessage()]
    assert len(warnings) == 1
    assert "refused" in warnings[0].getMessage()


async def test_another_bad_request_is_not_taken_for_a_logprobs_refusal() -> None:
    route = MockEndpoint(api_error(400, "messages: too long"))
    (outcome,) = await grade_pairs(route, 1, output_mode="json_schema")
    assert outcome.status == "api_error"
    assert route.call_count == 1


async def test_replies_without_logprobs_are_said_once(caplog: pytest.LogCaptureFixture) -> None:
    route = MockEndpoint(chat_reply(PAIRWISE_VERDICT))
    with caplog.at_level(logging.WARNING, logger="judge.client._chat"):
        outcomes = await grade_pairs(route, 3)
    assert all(o.status == "ok" and o.confidence is None for o in outcomes)
    assert route.sent(0)["logprobs"] is True
    assert all("logprobs" not in route.sent(i) for i in (1, 2))
    assert len([r for r in caplog.records if "logprobs" in r.getMessage()]) == 1


async def test_samples_move_the_seed_and_vote() -> None:
    """`sample` i sends seed + i; the majority of the replies' labels is the verdict."""
    b_wins = {**PAIRWISE_VERDICT, "winner": "B"}
    route = MockEndpoint(
        chat_reply(PAIRWISE_VERDICT), chat_reply(b_wins), chat_reply(PAIRWISE_VERDICT)
    )
    judge = LLMJudge(config(seed=7, top_logprobs=0), http_client=route.client())
    rubric = load_rubric("pairwise")
    try:
        outcomes = [
            await judge.evaluate(rubric, Case.model_validate(pair()), sample=i) for i in range(3)
        ]
    finally:
        await judge.aclose()
    assert [route.sent(i)["seed"] for i in range(3)] == [7, 8, 9]
    voted = majority(rubric, outcomes)
    assert voted.verdict is not None and voted.verdict.model_dump()["winner"] == "A"
    assert (voted.confidence, voted.confidence_source) == (pytest.approx(2 / 3), "votes")
    assert voted.usage.prompt_tokens == 300  # each reply says 100: all three are billed


def test_a_streamed_reply_keeps_each_chunk_s_logprobs_in_order() -> None:
    from judge.client._direct import assemble_stream

    def chunk(text: str, finish: str | None = None) -> bytes:
        choice: dict[str, Any] = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
        if text:
            choice["logprobs"] = {"content": [{"token": text, "logprob": -0.5, "top_logprobs": []}]}
        return json.dumps({"id": "x", "model": "m", "choices": [choice]}).encode()

    body = assemble_stream([chunk('{"a"'), chunk(": 1}"), chunk("", "stop")])
    choice = body["choices"][0]
    assert choice["message"]["content"] == '{"a": 1}'
    assert [t["token"] for t in choice["logprobs"]["content"]] == ['{"a"', ": 1}"]


async def test_the_test_server_s_streamed_reply_gives_the_same_confidence() -> None:
    from judge.testing import FakeOpenAIServer

    rubric = load_rubric("pairwise")
    found = []
    with FakeOpenAIServer() as server:
        for stream in (False, True):
            cfg = config(base_url=server.base_url, model="judge-test-2024-01-01")
            judge = LLMJudge(cfg)
            judge.client._stream = stream  # as after a first timeout (judge.client._chat)
            try:
                outcome = await judge.evaluate(rubric, Case.model_validate(pair()))
            finally:
                await judge.aclose()
            found.append((outcome.confidence_source, outcome.confidence))
        streamed = [body.get("stream") is True for body in server.stats.bodies]
    assert streamed == [False, True]
    assert found[0] == found[1] and found[0][0] == "logprobs"
