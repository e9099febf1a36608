"""The OpenAI-compatible test server, through the real openai SDK over loopback."""

from __future__ import annotations

import json
import threading
from typing import Any

import openai
import pytest

from judge.kinds.faithfulness import faithfulness_verdict
from judge.kinds.pairwise import pairwise_verdict
from judge.kinds.relevance import relevance_verdict
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.testing import FAULTS, FakeOpenAIServer, FaultPlan, Reply

pytestmark = pytest.mark.slow  # the test server as its own process (.ci/slow runs it)

CONTEXT = "The free trial lasts 14 days from the day you sign up. You can cancel any time."


def case(id: str = "c1", **fields: Any) -> dict[str, Any]:
    data = {"id": id, "question": "How long is the free trial?", "contexts": [CONTEXT]}
    data["answer"] = "The free trial lasts 14 days. The moon is made of cheese."
    return data | fields


def pair() -> dict[str, Any]:
    data = case("p1", answer_a="The free trial lasts 14 days.")
    data["answer_b"] = "The trial lasts 40 days and includes a gift."
    del data["answer"]
    return data


def sdk(server: FakeOpenAIServer, timeout: float = 10.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=timeout)


def messages(rubric_id: str, data: dict[str, Any], mode: str = "json_schema") -> list[Any]:
    return load_rubric(rubric_id).render(Case(**data), output_mode=mode)


def structured(rubric_id: str) -> dict[str, Any]:
    rubric = load_rubric(rubric_id)
    schema = {"name": rubric.schema_name, "schema": rubric.json_schema(), "strict": True}
    return {"type": "json_schema", "json_schema": schema}


def ask(client: openai.OpenAI, msgs: list[Any], **options: Any) -> Any:
    return client.chat.completions.create(model="judge-test", messages=msgs, **options)


def test_default_responder_answers_with_the_rules_verdict(openai_server):
    data = case()
    reply = ask(
        sdk(openai_server),
        messages("faithfulness", data),
        response_format=structured("faithfulness"),
    )
    expected = faithfulness_verdict(data["answer"], data["contexts"]).model_dump(mode="json")
    assert json.loads(reply.choices[0].message.content) == expected
    assert reply.choices[0].finish_reason == "stop"
    assert reply.model == "judge-test-2024-01-01"
    assert reply.system_fingerprint == "fp_test"
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


def test_relevance_and_pairwise_kinds_are_detected(openai_server):
    client = sdk(openai_server)
    data = case()
    got = ask(client, messages("relevance", data), response_format=structured("relevance"))
    expected = relevance_verdict(data["question"], data["answer"]).model_dump(mode="json")
    assert json.loads(got.choices[0].message.content) == expected
    p = pair()
    got = ask(client, messages("pairwise", p), response_format={"type": "json_object"})
    expected = pairwise_verdict(p["question"], p["answer_a"], p["answer_b"], p["contexts"])
    assert json.loads(got.choices[0].message.content) == expected.model_dump(mode="json")


def test_prompt_mode_wraps_the_json_in_a_fence(openai_server):
    reply = ask(sdk(openai_server), messages("relevance", case(), mode="prompt"))
    content = reply.choices[0].message.content
    assert "```json\n" in content and content.rstrip().endswith("```")
    assert json.loads(content.split("```json\n")[1].split("\n```")[0])["score"] in range(1, 6)


def test_usage_counts_messages_and_schema(openai_server):
    msgs = messages("faithfulness", case())
    with_schema = ask(sdk(openai_server), msgs, response_format=structured("faithfulness"))
    without = ask(sdk(openai_server), msgs, response_format={"type": "json_object"})
    schema_text = json.dumps(load_rubric("faithfulness").json_schema())
    assert with_schema.usage.prompt_tokens - without.usage.prompt_tokens == -(
        -len(schema_text) // 4
    )
    stats = openai_server.stats
    assert stats.requests == 2
    assert stats.prompt_tokens == with_schema.usage.prompt_tokens + without.usage.prompt_tokens
    assert stats.requests_by_mode == {"json_schema": 1, "json_object": 1}
    assert stats.bodies[0]["messages"] == msgs


def test_scripted_replies_come_first_in_order(openai_server):
    openai_server.script(
        Reply(verdict={"score": 3}),
        Reply(content="not json"),
        Reply(refusal="no", content=None),
        Reply(content='{"claims": [', finish_reason="length"),
    )
    client, msgs = sdk(openai_server), messages("relevance", case())
    assert ask(client, msgs).choices[0].message.content == '{"score": 3}'
    assert ask(client, msgs).choices[0].message.content == "not json"
    refused = ask(client, msgs).choices[0].message
    assert refused.refusal == "no" and refused.content is None
    assert ask(client, msgs).choices[0].finish_reason == "length"
    assert "```json" in ask(client, msgs).choices[0].message.content  # back to the default


def test_scripted_errors_look_like_openai(openai_server):
    openai_server.script(
        Reply(status=429, headers={"retry-after": "0.5"}),
        Reply(status=500),
        Reply(status=401, error_body={"error": {"message": "bad key", "type": "x", "code": "y"}}),
    )
    client, msgs = sdk(openai_server), messages("relevance", case())
    with pytest.raises(openai.RateLimitError) as limited:
        ask(client, msgs)
    assert limited.value.response.headers["retry-after"] == "0.5"
    assert limited.value.body["type"] == "rate_limit_exceeded"
    with pytest.raises(openai.InternalServerError):
        ask(client, msgs)
    with pytest.raises(openai.AuthenticationError, match="bad key"):
        ask(client, msgs)


def test_dropped_connection_is_a_connection_error(openai_server):
    openai_server.script(Reply(drop_connection=True))
    client, msgs = sdk(openai_server), messages("relevance", case())
    with pytest.raises(openai.APIConnectionError) as dropped:
        ask(client, msgs)
    assert not isinstance(dropped.value, openai.APITimeoutError)
    assert ask(client, msgs).choices[0].message.content  # the server is still fine


def test_a_delay_past_the_client_timeout_is_a_timeout(openai_server):
    openai_server.script(Reply(delay=5))
    with pytest.raises(openai.APITimeoutError):
        ask(sdk(openai_server, timeout=0.2), messages("relevance", case()))


def test_custom_responder_sees_the_parsed_request(server_factory):
    seen = []

    def responder(request):
        seen.append(request)
        return {"rationale": "scripted", "abstained": False, "score": 2}

    server = server_factory(responder=responder)
    msgs = messages("relevance", case())
    reply = ask(sdk(server), msgs, response_format=structured("relevance"))
    assert json.loads(reply.choices[0].message.content)["rationale"] == "scripted"
    request = seen[0]
    assert request.kind == "relevance"
    assert request.payload == {"question": case()["question"], "answer": case()["answer"]}
    assert not request.is_repair
    assert "authorization" not in request.headers
    repair = msgs + [{"role": "assistant", "content": "x"}, {"role": "user", "content": "fix"}]
    ask(sdk(server), repair)
    assert seen[1].is_repair and seen[1].case_text == msgs[1]["content"]


def test_reject_response_format_refuses_that_mode_only(server_factory):
    server = server_factory(reject_response_format={"json_schema"})
    client, msgs = sdk(server), messages("faithfulness", case())
    with pytest.raises(
        openai.BadRequestError, match="response_format json_schema is not supported"
    ):
        ask(client, msgs, response_format=structured("faithfulness"))
    assert ask(client, msgs, response_format={"type": "json_object"}).choices[0].message.content


def test_api_key_and_model_checks(server_factory):
    server = server_factory(api_key="secret", strict_model=True, model="m-2024-01-01")
    msgs = messages("relevance", case())
    with pytest.raises(openai.AuthenticationError):
        sdk(server).chat.completions.create(model="m-2024-01-01", messages=msgs)
    client = openai.OpenAI(base_url=server.base_url, api_key="secret", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="other", messages=msgs)
    assert client.chat.completions.create(model="m-2024-01-01", messages=msgs).choices
    assert [m.id for m in client.models.list()] == ["m-2024-01-01"]


def test_peak_concurrency_counts_requests_in_flight(server_factory):
    server = server_factory(latency=0.3)
    msgs = messages("relevance", case())
    threads = [threading.Thread(target=ask, args=(sdk(server), msgs)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert server.stats.requests == 4
    assert 1 <= server.stats.peak_concurrency <= 4  # how many overlap depends on scheduling
    assert server.stats.in_flight == 0
    server.reset_stats()
    assert server.stats.requests == 0 and server.stats.peak_concurrency == 0


# ---- faults ----------------------------------------------------------------------------


def test_fault_plan_is_deterministic_and_near_its_rates():
    plan = FaultPlan.mixed(0.25, seed=7)
    texts = [f"case {i}" for i in range(4000)]
    drawn = [plan.fault_for(t) for t in texts]
    assert drawn == [plan.fault_for(t) for t in texts]
    share = {name: drawn.count(name) / len(texts) for name in FAULTS}
    assert abs(share["429"] - 0.10) < 0.02
    assert abs(share["truncated"] - 0.03) < 0.01
    assert drawn.count(None) / len(texts) == pytest.approx(0.75, abs=0.03)
    assert [FaultPlan.mixed(0.25, seed=8).fault_for(t) for t in texts] != drawn
    with pytest.raises(ValueError):
        FaultPlan(rate_429=0.7, rate_500=0.5)


def case_with_fault(plan: FaultPlan, fault: str, rubric_id: str = "relevance") -> list[Any]:
    for i in range(10_000):
        msgs = messages(rubric_id, case(id=str(i), question=f"How long is trial number {i}?"))
        if plan.fault_for(msgs[1]["content"]) == fault:
            return msgs
    raise AssertionError(f"no case draws {fault}")


@pytest.mark.parametrize("fault", ["429", "500", "503", "drop"])
def test_transient_faults_hit_the_first_attempt_only(server_factory, fault):
    plan = FaultPlan(**{f"rate_{fault}": 0.5}, retry_after=0.25)
    server = server_factory(faults=plan)
    msgs = case_with_fault(plan, fault)
    errors = {"429": openai.RateLimitError, "500": openai.InternalServerError}
    errors |= {"503": openai.InternalServerError, "drop": openai.APIConnectionError}
    with pytest.raises(errors[fault]) as first:
        ask(sdk(server), msgs)
    if fault == "429":
        assert first.value.response.headers["retry-after"] == "0.25"
    assert ask(sdk(server), msgs).choices[0].message.content
    assert server.fault_of(msgs[1]["content"]) == fault
    assert list(server.faults_seen.values()) == [fault]
    assert server.stats.faults == {fault: 1}


def test_timeout_fault_sleeps_past_the_client_timeout_once(server_factory):
    plan = FaultPlan(rate_timeout=0.5, timeout_delay=5)
    server = server_factory(faults=plan)
    msgs = case_with_fault(plan, "timeout")
    with pytest.raises(openai.APITimeoutError):
        ask(sdk(server, timeout=0.2), msgs)
    assert ask(sdk(server, timeout=2), msgs).choices[0].message.content


def test_malformed_fault_is_fixed_by_the_repair_request(server_factory):
    plan = FaultPlan(rate_malformed=0.5)
    server = server_factory(faults=plan)
    msgs = case_with_fault(plan, "malformed")
    bad = ask(sdk(server), msgs).choices[0].message.content
    with pytest.raises(json.JSONDecodeError):
        json.loads(bad)
    repair = msgs + [{"role": "assistant", "content": bad}, {"role": "user", "content": "fix it"}]
    good = ask(sdk(server), repair, response_format=structured("relevance"))
    assert json.loads(good.choices[0].message.content)["score"] in range(1, 6)


def test_truncated_and_refusal_faults_hit_every_attempt(server_factory):
    plan = FaultPlan(rate_truncated=0.5, rate_refusal=0.5)
    server = server_factory(faults=plan)
    truncated, refused = case_with_fault(plan, "truncated"), case_with_fault(plan, "refusal")
    for _ in range(2):
        cut = ask(sdk(server), truncated, response_format=structured("relevance")).choices[0]
        assert cut.finish_reason == "length"
        with pytest.raises(json.JSONDecodeError):
            json.loads(cut.message.content)
        assert ask(sdk(server), refused).choices[0].message.refusal


def test_scripted_replies_override_faults(server_factory):
    plan = FaultPlan(rate_500=1.0)
    server = server_factory(faults=plan)
    server.script(Reply(verdict={"score": 4}))
    assert (
        ask(sdk(server), messages("relevance", case())).choices[0].message.content == '{"score": 4}'
    )


def test_command_line_prints_the_base_url():
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-m", "judge.testserver", "--latency", "0", "--fault-rate", "0.25"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        client = openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=10)
        assert [m.id for m in client.models.list()] == ["judge-test-2024-01-01"]
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


def test_stats_endpoint_serves_the_counters(openai_server):
    import httpx

    ask(sdk(openai_server), messages("relevance", case()))
    root = openai_server.base_url.removesuffix("/v1")
    stats = httpx.get(f"{root}/stats").json()
    assert stats["requests"] == 1 and stats["prompt_tokens"] > 0
    assert stats["requests_by_path"] == {"/v1/chat/completions": 1}
    assert httpx.post(f"{root}/stats/reset").json()["requests"] == 0
    assert openai_server.stats.requests == 0
