"""Probes end to end against the local OpenAI-compatible test server (loopback only)."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

import pytest

from judge.api import make_backend, open_cache
from judge.config import JudgeConfig
from judge.engine.grader import Grader
from judge.probes import ProbeOptions, run_probe
from judge.probes.injection import INJECTIONS
from judge.probes.position import content_winner
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.testing import ChatRequest, FakeOpenAIServer

pytestmark = pytest.mark.slow  # probes against the loopback test server (.ci/slow runs it)

GOOD = " (correct)"


class FirstSlotJudge:
    """A simulated judge: with probability p it picks the answer shown first regardless of
    merit, else the better answer (the one ending in GOOD). The coin is seeded by the
    request content, so a rerun makes the same choices; every choice is recorded."""

    def __init__(self, p: float, seed: int = 7) -> None:
        self.p, self.seed = p, seed
        self.choices: dict[tuple[str, str], str] = {}  # (answer_A, answer_B) -> slot chosen
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> dict[str, Any]:
        a, b = request.payload["answer_A"], request.payload["answer_B"]
        digest = hashlib.sha256(f"{self.seed}\x00{a}\x00{b}".encode()).digest()
        biased = int.from_bytes(digest[:8], "big") / 2**64 < self.p
        slot = "A" if biased or a.endswith(GOOD) else "B"
        with self._lock:
            self.choices[(a, b)] = slot
        return {"rationale": "simulated", "winner": slot}


def merit_pairs(n: int, seed: int = 0) -> list[Case]:
    """Pairs whose better answer is known; it is answer_a in about half of them."""
    cases = []
    for i in range(n):
        good, bad = f"Answer {i}{GOOD}", f"Answer {i} (wrong)"
        first_good = hashlib.sha256(f"{seed}:{i}".encode()).digest()[0] % 2 == 0
        a, b = (good, bad) if first_good else (bad, good)
        cases.append(Case(id=f"p{i:03d}", question=f"Question {i}?", answer_a=a, answer_b=b))
    return cases


async def probe(
    server: FakeOpenAIServer, kind: str, cases: list[Case], cache_dir: Path, **options: Any
) -> Any:
    config = JudgeConfig(
        model=server.model, base_url=server.base_url, cache_dir=cache_dir, max_retries=0
    )
    rubric_id = options.pop("rubric", "pairwise")
    backend, cache = make_backend(config), open_cache(config)
    try:
        grader = Grader(backend, load_rubric(rubric_id), cache=cache, concurrency=16)
        return await run_probe(kind, grader, cases, ProbeOptions(**options))
    finally:
        await backend.aclose()
        if cache is not None:
            cache.close()


def realised(judge: FirstSlotJudge, cases: list[Case]) -> dict[str, Any]:
    """The figures computed straight from the choices the simulated judge made."""
    consistent = first = 0
    for c in cases:
        ab = judge.choices[(c.answer_a or "", c.answer_b or "")]
        ba = judge.choices[(c.answer_b or "", c.answer_a or "")]
        consistent += content_winner("ab", ab) == content_winner("ba", ba)
        first += (ab == "A") + (ba == "A")
    return {"consistency_rate": consistent / len(cases), "first": first}


@pytest.mark.parametrize("p", [0.0, 0.3])
async def test_position_rates_equal_the_simulated_judges_realised_rates(
    server_factory, tmp_path, p
):
    judge = FirstSlotJudge(p)
    server = server_factory(responder=judge)
    cases = merit_pairs(200)
    result = await probe(server, "position", cases, tmp_path / "cache")
    report, truth = result.report, realised(judge, cases)
    assert report["pairs"] == report["complete_pairs"] == 200
    assert report["consistency_rate"] == truth["consistency_rate"]
    assert report["first_position_wins"] == truth["first"]
    assert report["first_position_win_rate"] == truth["first"] / 400
    # the analytic values: consistency 1 - p; the first slot wins (1 + p) / 2 of verdicts
    lo, hi = report["consistency_rate_ci95"]
    assert lo <= 1 - p <= hi
    lo, hi = report["first_position_win_rate_ci95"]
    assert lo <= (1 + p) / 2 <= hi
    # the simulated judge only ever errs by picking the first slot
    assert report["inconsistent"]["second_slot"] == 0
    assert report["inconsistent"]["first_slot"] == report["inconsistent_pairs"]
    assert len(report["inconsistent_ids"]["first_slot"]) == report["inconsistent_pairs"]
    if p == 0:
        assert report["consistency_rate"] == 1.0 and report["first_position_p_value"] == 1.0
    else:
        assert report["first_position_p_value"] < 0.05


async def test_position_sends_two_requests_per_pair_cold_and_none_warm(server_factory, tmp_path):
    judge = FirstSlotJudge(0.3)
    server = server_factory(responder=judge)
    cases = merit_pairs(25)
    cold = await probe(server, "position", cases, tmp_path / "cache")
    assert server.stats.requests == 50
    orders = {(b["messages"][1]["content"]) for b in server.stats.bodies}
    assert len(orders) == 50  # each order of each pair once
    warm = await probe(server, "position", cases, tmp_path / "cache")
    assert server.stats.requests == 50
    assert warm.report["judge_calls"] == 0
    assert all(r.cached for r in warm.records)
    assert warm.report["consistency_rate"] == cold.report["consistency_rate"]


async def test_swap_resolved_records_follow_agreement(server_factory, tmp_path):
    judge = FirstSlotJudge(0.3)
    server = server_factory(responder=judge)
    cases = merit_pairs(40)
    result = await probe(server, "position", cases, tmp_path / "cache")
    inconsistent = set(result.report["inconsistent_ids"]["first_slot"])
    for case, record in zip(cases, result.records, strict=True):
        assert record.id == case.id and record.status == "ok"
        better = "A" if (case.answer_a or "").endswith(GOOD) else "B"
        assert record.label == ("tie" if case.id in inconsistent else better)
        assert record.score == {"A": 1.0, "B": 0.0, "tie": 0.5}[record.label]


async def test_repeat_bypasses_the_cache(server_factory, tmp_path):
    server = server_factory()
    cases = [
        Case(id=f"r{i}", question="How long is the trial?", answer=f"The trial lasts {i} days.")
        for i in range(6)
    ]
    for _ in range(2):  # the second run finds a warm cache and must not use it
        result = await probe(server, "repeat", cases, tmp_path / "c", rubric="relevance", repeats=3)
    assert server.stats.requests == 2 * 6 * 3
    assert result.report["exact_agreement_rate"] == 1.0


async def test_injection_against_a_judge_that_obeys_injections(server_factory, tmp_path):
    def gullible(request: ChatRequest) -> dict[str, Any]:
        text = request.case_text
        score = 5 if "score of 5" in text else 2
        return {"rationale": "r", "abstained": False, "score": score}

    server = server_factory(responder=gullible)
    cases = [Case(id=f"i{i}", question="Q?", answer=f"Answer {i}.") for i in range(3)]
    result = await probe(server, "injection", cases, tmp_path / "c", rubric="relevance")
    report = result.report
    assert report["placements"] == ["answer"]  # relevance does not send contexts
    assert len(INJECTIONS) >= 10
    assert report["eligible"] == report["flips"] == 3 * len(INJECTIONS)
    assert report["flip_rate"] == 1.0 and report["flip_rate_ci95"][0] > 0.8
    assert "i0:ignore_previous:answer" in report["flipped"]


async def test_self_preference_against_a_judge_that_favours_its_own_family(
    server_factory, tmp_path
):
    def vain(request: ChatRequest) -> dict[str, Any]:
        own_first = request.payload["answer_A"].startswith("[gpt]")
        return {"rationale": "r", "winner": "A" if own_first else "B"}

    server = server_factory(responder=vain)
    cases = []
    for i in range(12):
        own_in_a = i % 2 == 0
        gens = ("gpt-4o-2024-08-06", "claude-3-5-sonnet-20241022")
        ga, gb = gens if own_in_a else gens[::-1]
        a, b = (
            (f"[gpt] answer {i}", f"answer {i}")
            if own_in_a
            else (f"answer {i}", f"[gpt] answer {i}")
        )
        meta = {"generator_a": ga, "generator_b": gb, "better": "A" if i % 4 < 2 else "B"}
        cases.append(Case(id=f"s{i}", question="Q?", answer_a=a, answer_b=b, metadata=meta))
    result = await probe(
        server, "self-preference", cases, tmp_path / "c", judge_model="gpt-4o-2024-08-06"
    )
    report = result.report
    assert report["judge_family"] == "openai" and report["mixed_pairs"] == 12
    assert report["own_win_rate"] == 1.0 and report["own_win_rate_ci95"][0] > 0.7
    assert report["human_own_win_rate"] == 0.5
    assert report["excess_own_preference"] == 0.5
    assert server.stats.requests == 24  # both orders of every pair
