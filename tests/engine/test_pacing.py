"""`--concurrency auto` (issue 22 item 4): the AIMD window, Retry-After held globally, the
rate-limit headers and the rpm/tpm caps, checked on the controller's arithmetic with the
clock passed in (no test here depends on timing), then end to end against the test
server's rate-limit mode."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.client._pacing import Bucket, Pacer, Pacing, parse_reset
from judge.config import JudgeConfig
from judge.engine.model import LLMJudge
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.service.config import load_service_config
from judge.testing import FakeOpenAIServer, RateLimit
from tests.helpers import (
    FAITHFUL_VERDICT,
    MockEndpoint,
    api_error,
    case,
    chat_reply,
    read_jsonl,
    write_jsonl,
)


def run_round(pacing: Pacing, now: float, latency: float = 1.0) -> int:
    """Fill the window at `now`, then every request succeeds after `latency`."""
    started = 0
    while pacing.ready_at(now) == now:
        pacing.started(now)
        started += 1
    for _ in range(started):
        pacing.succeeded(now + latency, latency)
    return started


def test_slow_start_doubles_each_round_then_additive_after_a_refusal() -> None:
    pacing = Pacing(start=4, ceiling=1000)
    assert [run_round(pacing, float(t)) for t in range(4)] == [4, 8, 16, 32]
    pacing.started(10.0)
    pacing.refused(10.5, sent_at=10.0, retry_after=None)
    assert pacing.window == 32  # 64 halved
    # additive increase: +1/window per success, about +1 per round trip from now on
    for t in range(3):
        run_round(pacing, 20.0 + t)
    assert pacing.limit == pytest.approx(35, abs=0.1)


def test_many_refusals_of_one_round_halve_once() -> None:
    pacing = Pacing(start=64)
    for _ in range(64):
        pacing.started(0.0)
    for i in range(10):  # ten 429s for requests all sent before the first decrease
        pacing.refused(1.0 + i / 100, sent_at=0.0, retry_after=None)
    assert pacing.window == 32 and pacing.stats.refused == 10
    pacing.started(2.0)
    pacing.refused(2.5, sent_at=2.0, retry_after=None)  # a later round: halves again
    assert pacing.window == 16
    for _ in range(20):
        pacing.started(3.0)
        pacing.refused(3.5, sent_at=3.0, retry_after=None)
    assert pacing.window == 8  # never below 1, once per round


def test_the_window_never_falls_below_one_nor_passes_the_ceiling() -> None:
    pacing = Pacing(start=2, ceiling=5)
    for t in range(10):
        run_round(pacing, float(t))
    assert pacing.window == 5 and pacing.stats.peak_limit == 5
    for t in range(10):
        pacing.started(100.0 + t)
        pacing.refused(100.5 + t, sent_at=100.0 + t, retry_after=None)
    assert pacing.window == 1


def test_growth_stops_when_latency_does_not_hold() -> None:
    pacing = Pacing(start=4, latency_slack=2.0)
    run_round(pacing, 0.0, latency=1.0)
    assert pacing.window == 8
    run_round(pacing, 10.0, latency=3.0)  # three times the fastest: the endpoint queues
    assert pacing.window == 8 and not pacing.slow_start


def test_an_idle_window_does_not_grow() -> None:
    pacing = Pacing(start=16)
    for t in range(5):  # one request at a time: the window proves nothing
        pacing.started(float(t))
        pacing.succeeded(t + 0.5, 0.5)
    assert pacing.window == 16


def test_retry_after_holds_every_request() -> None:
    pacing = Pacing(start=8)
    pacing.started(0.0)
    pacing.refused(1.0, sent_at=0.0, retry_after=2.5)
    assert pacing.ready_at(1.0) == 3.5  # not just the refused request: all of them
    assert pacing.ready_at(4.0) == 4.0


def test_remaining_requests_are_spread_over_the_reset() -> None:
    pacing = Pacing(start=16)
    pacing.started(0.0)
    headers = {
        "x-ratelimit-limit-requests": "10",
        "x-ratelimit-remaining-requests": "2",
        "x-ratelimit-reset-requests": "0.8s",
    }
    pacing.succeeded(0.1, 0.1, headers)
    # 8 spent come back in 0.8 s: one each 0.1 s, so starts are 0.1 s apart on average,
    # with one interval of slack (a start the event loop made late does not delay the next)
    starts = []
    now = 0.1
    for _ in range(5):
        now = pacing.ready_at(now) or now
        pacing.started(now)
        starts.append(round(now, 6))
    assert starts == [0.1, 0.1, 0.2, 0.3, 0.4]
    assert pacing.ready_at(0.45) == pytest.approx(0.5)
    pacing.started(0.55)  # the event loop ran it 50 ms late
    assert pacing.ready_at(0.55) == pytest.approx(0.6)  # the next is not pushed to 0.65
    pacing.succeeded(0.5, 0.2, {**headers, "x-ratelimit-remaining-requests": "50"})
    assert pacing.ready_at(0.5) == 0.5  # plenty left: no spacing


def test_none_remaining_holds_until_one_comes_back() -> None:
    pacing = Pacing(start=4)
    pacing.started(0.0)
    headers = {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s"}
    pacing.succeeded(1.0, 1.0, headers)
    assert pacing.ready_at(1.0) == 361.0  # no limit header: until the reset itself


def test_rpm_and_tpm_caps_are_token_buckets() -> None:
    pacing = Pacing(start=100, adaptive=False, rpm=120)  # 2 a second, a burst of 2
    for _ in range(2):
        assert pacing.ready_at(0.0) == 0.0
        pacing.started(0.0)
    assert pacing.ready_at(0.0) == pytest.approx(0.5)
    tokens = Pacing(start=100, adaptive=False, tpm=6000)  # 100 tokens a second
    tokens.started(0.0, tokens=100)
    assert tokens.ready_at(0.0, tokens=50) == pytest.approx(0.5)
    assert tokens.window == 100  # not adaptive: a refusal leaves a fixed window alone
    tokens.refused(1.0, sent_at=0.0, retry_after=None)
    assert tokens.window == 100


def test_bucket_and_reset_parsing() -> None:
    bucket = Bucket(capacity=2, rate=1)
    bucket.take(0.0, 2)
    assert bucket.ready_at(0.5) == pytest.approx(1.0)
    assert parse_reset("1s") == 1.0 and parse_reset("6m0s") == 360.0
    assert parse_reset("20ms") == pytest.approx(0.02) and parse_reset("1h2m3.5s") == 3723.5
    assert parse_reset("0.25") == 0.25 and parse_reset("soon") is None and parse_reset("") is None


async def test_the_pacer_holds_requests_beyond_the_window() -> None:
    pacer = Pacer(Pacing(start=2, adaptive=False))
    entered: list[int] = []
    gate = asyncio.Event()

    async def request(number: int) -> None:
        async with pacer.slot() as slot:
            entered.append(number)
            await gate.wait()
            slot.succeeded()

    tasks = [asyncio.create_task(request(i)) for i in range(5)]
    for _ in range(20):
        await asyncio.sleep(0)
    assert len(entered) == 2 and pacer.pacing.in_flight == 2
    gate.set()
    await asyncio.gather(*tasks)
    assert sorted(entered) == [0, 1, 2, 3, 4] and pacer.pacing.in_flight == 0


def test_rate_limit_mode_of_the_test_server() -> None:
    limit = RateLimit(per_second=10)
    answers = [limit.take(0.0) for _ in range(11)]
    assert all(ok for ok, _ in answers[:10]) and not answers[10][0]
    refused = answers[10][1]
    assert refused["retry-after-ms"] == "100" and refused["x-ratelimit-remaining-requests"] == "0"
    assert answers[0][1]["x-ratelimit-limit-requests"] == "10"
    assert limit.take(0.1)[0]  # one came back


def test_concurrency_auto_and_caps_are_config_and_cli_options(
    tmp_path: Path,
    server_factory: Callable[..., FakeOpenAIServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert JudgeConfig(concurrency="auto").max_in_flight == 1024
    server = server_factory(rate_limit=RateLimit(per_second=1000))
    cases = [case(f"c{i}", answer=f"The free trial lasts 14 days. ({i})") for i in range(30)]
    source = write_jsonl(tmp_path / "in.jsonl", cases)
    out = tmp_path / "o.jsonl"
    env = {"OPENAI_API_KEY": "x"}
    args = ["grade", str(source), "--rubric", "faithfulness", "-o", str(out), "--no-cache"]
    args += ["--model", server.model, "--base-url", server.base_url, "--concurrency", "auto"]
    assert main([*args, "--rpm", "100000"], env=env) == 0
    assert len(read_jsonl(out)) == 30
    err = capsys.readouterr().err
    assert "requests: 30 sent, 0 refused (429/503)" in err
    assert "--concurrency auto reached" in err
    with pytest.raises(SystemExit) as refused:
        main([*args[:-1], "many"], env=env)
    assert refused.value.code == 2
    assert "invalid int value: 'many' (a number, or auto)" in capsys.readouterr().err


async def test_a_429_through_the_client_halves_the_window_and_is_counted() -> None:
    endpoint = MockEndpoint(
        api_error(429, "slow down", {"retry-after-ms": "0"}), chat_reply(FAITHFUL_VERDICT)
    )
    cfg = JudgeConfig(
        model="m", base_url="http://judge.test/v1", api_key="k", concurrency="auto",
        backoff_initial=0, backoff_max=0,
    )  # fmt: skip
    judge = LLMJudge(cfg, http_client=endpoint.client())
    try:
        outcome = await judge.evaluate(load_rubric("faithfulness"), Case.model_validate(case()))
    finally:
        await judge.aclose()
    assert outcome.status == "ok" and endpoint.call_count == 2
    sent = judge.request_summary()
    assert sent["sent"] == 2 and sent["refused"] == 1 and sent["peak_in_flight"] == 1
    assert sent["window"] == {"peak": 16, "final": 8}  # started at 16, halved once


def test_service_yaml_takes_concurrency_auto_and_caps(tmp_path: Path) -> None:
    path = tmp_path / "service.yaml"
    path.write_text(
        "judges:\n  local:\n    model: m\n    base_url: http://127.0.0.1:9/v1\n"
        "    concurrency: auto\n    rpm: 600\n    tpm: 90000\n"
    )
    config = load_service_config(path, {}).judge_config("local")
    assert config.concurrency == "auto" and config.max_in_flight == 1024
    assert (config.rpm, config.tpm) == (600, 90000)


async def test_the_pacer_waits_for_hold_and_survives_cancelled_waiters() -> None:
    pacer = Pacer(Pacing(start=1, adaptive=False))
    async with pacer.slot() as slot:
        waiting = asyncio.create_task(pacer.slot().__aenter__())
        await asyncio.sleep(0)
        waiting.cancel()  # a case cancelled while it waits for room
        slot.refused(retry_after=0.0)
    await asyncio.gather(waiting, return_exceptions=True)
    assert pacer.pacing.in_flight == 0
    async with pacer.slot() as again:  # the window is free again
        again.succeeded()
    assert pacer.pacing.in_flight == 0 and pacer.stats.requests == 2
