"""The model judge over HTTP, on a mock of the SDK's own transport (`MockEndpoint`):
retries, repair, truncation, fallback."""

from __future__ import annotations

import json
import logging
from functools import partial

import pytest
from tenacity import AsyncRetrying

from judge.client._http import httpx
from judge.config import JudgeConfig
from judge.engine.model import LLMJudge
from judge.errors import AuthError, ModelNotFoundError
from judge.rubric import load_rubric
from judge.schemas import Case
from tests.helpers import (
    FAITHFUL_VERDICT,
    PAIRWISE_VERDICT,
    RELEVANCE_VERDICT,
    MockEndpoint,
    api_error,
    case,
    chat_reply,
    pair,
)

BASE = "http://judge.test/v1"


def config(**overrides: object) -> JudgeConfig:
    options: dict[str, object] = {
        "model": "gpt-4o-2024-08-06",
        "base_url": BASE,
        "api_key": "sk-test-secret-123",
        "backoff_initial": 0.01,
        "backoff_max": 0.05,
        "max_retries": 3,
    }
    options.update(overrides)
    return JudgeConfig(**options)  # type: ignore[arg-type]


async def evaluate(
    rubric: str, data: dict[str, object], endpoint: MockEndpoint, **overrides: object
):  # type: ignore[no-untyped-def]
    judge = LLMJudge(config(**overrides), http_client=endpoint.client())
    try:
        return await judge.evaluate(load_rubric(rubric), Case.model_validate(data))
    finally:
        await judge.aclose()


async def test_faithfulness_verdict_with_provenance_and_strict_schema() -> None:
    route = MockEndpoint(chat_reply(FAITHFUL_VERDICT))
    outcome = await evaluate("faithfulness", case(), route)
    assert route.call_count == 1
    assert str(route.requests[0].url) == f"{BASE}/chat/completions"
    assert route.requests[0].headers["authorization"] == "Bearer sk-test-secret-123"
    assert outcome.status == "ok"
    assert outcome.judge.model == "gpt-4o-2024-08-06"
    assert outcome.judge.system_fingerprint == "fp_test123"
    assert outcome.judge.output_mode == "json_schema"
    assert outcome.usage.prompt_tokens == 100
    body = route.sent()
    assert body["temperature"] == 0.0 and body["seed"] == 42 and body["max_tokens"] == 1024
    schema = body["response_format"]["json_schema"]
    assert schema["strict"] is True and schema["name"] == "FaithfulnessVerdict"
    assert schema["schema"]["additionalProperties"] is False
    # the case travels as a JSON payload in the user turn, never inside the instructions
    assert json.loads(body["messages"][1]["content"])["answer"] == case()["answer"]
    assert case()["answer"] not in body["messages"][0]["content"]


async def test_relevance_and_pairwise_verdicts() -> None:
    route = MockEndpoint(chat_reply(RELEVANCE_VERDICT), chat_reply(PAIRWISE_VERDICT))
    relevance = await evaluate("relevance", case(), route)
    pairwise = await evaluate("pairwise", pair(), route)
    assert relevance.status == "ok" and relevance.verdict.score == 5  # type: ignore[union-attr]
    assert pairwise.status == "ok" and pairwise.verdict.winner == "A"  # type: ignore[union-attr]


@pytest.fixture(autouse=True)
def retry_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the client's retries ask for, recorded instead of slept: tests check the
    waits (Retry-After, its cap) without spending them on the clock."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr("judge.client._retry.AsyncRetrying", partial(AsyncRetrying, sleep=sleep))
    return slept


async def test_429_with_retry_after_is_honoured(
    caplog: pytest.LogCaptureFixture, retry_sleeps: list[float]
) -> None:
    route = MockEndpoint(
        api_error(429, "slow down", {"Retry-After": "1"}),
        chat_reply(FAITHFUL_VERDICT),
    )
    caplog.set_level(logging.DEBUG, logger="judge.client")
    outcome = await evaluate("faithfulness", case(), route)
    assert outcome.status == "ok"
    assert route.call_count == 2
    assert "retrying in 1.00s" in caplog.text
    assert retry_sleeps == [1.0]  # it waited what the server asked, once


async def test_retry_after_http_date_and_cap(retry_sleeps: list[float]) -> None:
    date = "Wed, 21 Oct 2099 07:28:00 GMT"
    route = MockEndpoint(
        api_error(503, "busy", {"Retry-After": date}), chat_reply(FAITHFUL_VERDICT)
    )
    outcome = await evaluate("faithfulness", case(), route, retry_after_cap=0.05)
    assert outcome.status == "ok" and route.call_count == 2
    assert retry_sleeps == [0.05]  # a date decades away is capped


async def test_two_500s_then_ok() -> None:
    route = MockEndpoint(api_error(500), api_error(502), chat_reply(FAITHFUL_VERDICT))
    outcome = await evaluate("faithfulness", case(), route)
    assert outcome.status == "ok" and route.call_count == 3


async def test_retries_are_bounded_then_api_error() -> None:
    route = MockEndpoint(api_error(500, "down"))
    outcome = await evaluate("faithfulness", case(), route, max_retries=2)
    assert route.call_count == 3
    assert outcome.status == "api_error" and "500" in (outcome.error or "")


async def test_without_retries_one_request_is_sent() -> None:
    route = MockEndpoint(api_error(500, "down"), chat_reply(FAITHFUL_VERDICT))
    outcome = await evaluate("faithfulness", case(), route, max_retries=0)
    assert route.call_count == 1
    assert outcome.status == "api_error" and "500" in (outcome.error or "")


async def test_each_failed_attempt_is_numbered_logged_and_backed_off(
    caplog: pytest.LogCaptureFixture, retry_sleeps: list[float]
) -> None:
    # the first attempt runs outside tenacity's loop; its failure must still count as
    # attempt 1 there: the same log line, the same backoff step
    route = MockEndpoint(api_error(500), api_error(502), chat_reply(FAITHFUL_VERDICT))
    caplog.set_level(logging.DEBUG, logger="judge.client")
    outcome = await evaluate("faithfulness", case(), route)
    assert outcome.status == "ok" and route.call_count == 3
    said = [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]
    assert [m.split(" (")[0] for m in said] == ["attempt 1 failed", "attempt 2 failed"]
    # backoff 0.01 x 2^(n-1) plus up to 0.01 of jitter (config above)
    assert 0.01 <= retry_sleeps[0] <= 0.02 and 0.02 <= retry_sleeps[1] <= 0.03


async def test_connection_errors_and_timeouts_are_retried() -> None:
    route = MockEndpoint(
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        chat_reply(FAITHFUL_VERDICT),
    )
    outcome = await evaluate("faithfulness", case(), route)
    assert outcome.status == "ok" and route.call_count == 3


async def test_401_is_fatal_after_one_call() -> None:
    route = MockEndpoint(api_error(401, "Incorrect API key provided: sk-test-secret-123"))
    with pytest.raises(AuthError) as info:
        await evaluate("faithfulness", case(), route)
    assert route.call_count == 1
    assert "sk-test-secret-123" not in str(info.value)


async def test_unknown_model_is_fatal() -> None:
    route = MockEndpoint(api_error(404, "The model `nope` does not exist"))
    with pytest.raises(ModelNotFoundError):
        await evaluate("faithfulness", case(), route)
    assert route.call_count == 1


async def test_malformed_then_valid_is_ok_after_one_repair() -> None:
    route = MockEndpoint(chat_reply('{"claims": [oops'), chat_reply(FAITHFUL_VERDICT))
    outcome = await evaluate("faithfulness", case(), route)
    assert outcome.status == "ok" and route.call_count == 2
    repair = route.sent(1)["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"claims": [oops'}
    assert "not valid JSON" in repair[-1]["content"]
    assert outcome.usage.prompt_tokens == 200  # both requests are counted


async def test_malformed_twice_is_parse_error_with_raw() -> None:
    route = MockEndpoint(
        chat_reply("not json"),
        chat_reply('{"score": 9, "rationale": "x", "abstained": false}'),
    )
    outcome = await evaluate("relevance", case(), route)
    assert route.call_count == 2
    assert outcome.status == "parse_error"
    assert outcome.raw == '{"score": 9, "rationale": "x", "abstained": false}'
    assert "score" in (outcome.error or "") and outcome.verdict is None


async def test_finish_reason_length_is_parse_error_without_repair() -> None:
    route = MockEndpoint(chat_reply('{"claims": [{"claim": "The tr', finish_reason="length"))
    outcome = await evaluate("faithfulness", case(), route)
    assert route.call_count == 1
    assert outcome.status == "parse_error" and "truncated" in (outcome.error or "")
    assert outcome.raw == '{"claims": [{"claim": "The tr'


async def test_refusal_is_parse_error() -> None:
    route = MockEndpoint(chat_reply(None, refusal="I can't help with that."))
    outcome = await evaluate("faithfulness", case(), route)
    assert outcome.status == "parse_error" and "refused" in (outcome.error or "")


async def test_server_refusing_json_schema_falls_back_and_records_mode() -> None:
    rejected = api_error(400, "response_format json_schema is not supported by this model")
    route = MockEndpoint(rejected, chat_reply(FAITHFUL_VERDICT))
    outcome = await evaluate("faithfulness", case(), route)
    assert outcome.status == "ok" and outcome.judge.output_mode == "json_object"
    assert route.sent(0)["response_format"]["type"] == "json_schema"
    assert route.sent(1)["response_format"] == {"type": "json_object"}


async def test_falls_back_to_schema_in_prompt() -> None:
    rejected = api_error(400, "response_format is not supported")
    fenced = "Here is my verdict:\n```json\n" + json.dumps(FAITHFUL_VERDICT) + "\n```"
    route = MockEndpoint(rejected, rejected, chat_reply(fenced))
    outcome = await evaluate("faithfulness", case(), route)
    assert outcome.status == "ok" and outcome.judge.output_mode == "prompt"
    body = route.sent(2)
    assert "response_format" not in body
    assert '"additionalProperties":false' in body["messages"][0]["content"]


async def test_other_400s_are_not_mistaken_for_format_refusals() -> None:
    route = MockEndpoint(api_error(400, "maximum context length exceeded"))
    outcome = await evaluate("faithfulness", case(), route)
    assert outcome.status == "api_error" and route.call_count == 1


async def test_zero_claims_is_abstained() -> None:
    route = MockEndpoint(chat_reply({"claims": []}))
    outcome = await evaluate("faithfulness", case(answer="I don't know."), route)
    assert outcome.status == "abstained"


async def test_the_sent_body_is_request_body_whatever_is_encoded_once() -> None:
    """The fixed parts (model, sampling, schema) are encoded once per mode and schema; what
    goes on the wire is still exactly `request_body`, for each of two rubrics in turn.
    (Logprobs not asked: these replies carry none, which stops the asking after the first.)"""
    replies = [chat_reply(FAITHFUL_VERDICT), chat_reply(RELEVANCE_VERDICT)]
    route = MockEndpoint(*replies, chat_reply(FAITHFUL_VERDICT))
    judge = LLMJudge(config(top_logprobs=0), http_client=route.client())
    try:
        for name, data in (
            ("faithfulness", case()),
            ("relevance", case()),
            ("faithfulness", case("c2")),
        ):
            rubric = load_rubric(name)
            await judge.evaluate(rubric, Case.model_validate(data))
            ready = judge.prepared(rubric)
            messages = ready.render(Case.model_validate(data), "json_schema")
            expected = judge.client.request_body(
                messages, "json_schema", ready.schema_name, ready.schema
            )
            assert route.sent() == expected
            assert messages == rubric.render(Case.model_validate(data))  # = Rubric.render
    finally:
        await judge.aclose()
