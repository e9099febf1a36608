"""The cascade's rules with scripted judges (judge.engine.cascade): who is asked what, what
a failure at a rung does, an abstention decided, and a rerun under a new certificate."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from judge.engine.cascade import Rung, grade_cascade
from judge.engine.certificate import Certificate, load_certificate
from judge.engine.grader import Grader
from judge.engine.outcome import Outcome
from judge.kinds.faithfulness import FaithfulnessVerdict
from judge.rubric import Rubric, load_rubric
from judge.schemas import Case, JudgeInfo, Usage
from tests.helpers import case, read_jsonl, write_jsonl

RUBRIC = load_rubric("faithfulness")
IDS = [f"c{i}" for i in range(8)]


class Scripted:
    """A judge with a confidence per case id; ids in `fail` get an api_error, in `broken`
    a parse_error, in `abstain` a verdict with no claim (abstained)."""

    def __init__(self, model: str, sure: dict[str, float], **odd: set[str]) -> None:
        self.name = model
        self.sure = sure
        self.fail, self.broken = odd.get("fail", set()), odd.get("broken", set())
        self.abstain = odd.get("abstain", set())
        self.asked: list[str] = []

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        self.asked.append(case.id)
        info = JudgeInfo(model=self.name, output_mode="json_schema")
        usage = Usage(prompt_tokens=100, completion_tokens=10)
        if case.id in self.fail:
            return Outcome("api_error", info, error="HTTP 500: scripted")
        if case.id in self.broken:
            return Outcome("parse_error", info, error="not JSON", raw="{", usage=usage)
        claims = [] if case.id in self.abstain else [{"claim": "c", "verdict": "supported"}]
        verdict = FaithfulnessVerdict.model_validate(
            {"claims": [{**c, "evidence": ""} for c in claims]}
        )
        status = "abstained" if case.id in self.abstain else "ok"
        sure = self.sure.get(case.id)
        return Outcome(status, info, verdict=verdict, usage=usage, confidence=sure)

    def cache_identity(self) -> dict[str, Any] | None:
        return None

    async def aclose(self) -> None:
        return None


def certificate(path: Path, thresholds: list[float | None]) -> Certificate:
    rubric = {"id": RUBRIC.id, "version": RUBRIC.version, "sha256": RUBRIC.sha256}
    rungs = [
        {"judge": {"model": m}, "threshold": t, "cost_per_1000": 5.0}
        for m, t in zip(["cheap", "strong"], thresholds, strict=True)
    ]
    body = {"format": "llm-judge-certificate/1", "agreement": 0.9, "delta": 0.1, "n": 200}
    path.write_text(json.dumps({**body, "rubric": rubric, "rungs": rungs, "certified": True}))
    return load_certificate(path)


def run(judges: list[Scripted], cert: Certificate, folder: Path) -> dict[str, Any]:
    cases = write_jsonl(folder / "cases.jsonl", [case(i) for i in IDS])
    rungs = [
        Rung(Grader(j, RUBRIC), folder / f"rung{n}.jsonl", (1.0, 2.0))
        for n, j in enumerate(judges, 1)
    ]
    return asyncio.run(grade_cascade(rungs, cert, cases, folder / "out.jsonl"))


def test_failures_go_down_the_cascade_and_a_last_failure_stays_one(tmp_path: Path) -> None:
    cheap = Scripted(
        "cheap",
        {"c0": 0.9, "c1": 0.2, "c3": 0.95, "c4": 0.5, "c6": 0.99, "c7": 0.3},
        fail={"c2"},
        abstain={"c6"},
    )
    strong = Scripted(
        "strong", {"c1": 0.9, "c2": 0.85, "c4": 0.1}, broken={"c5", "c7"}
    )  # c5: no confidence at rung 1 either
    summary = run([cheap, strong], certificate(tmp_path / "cert.json", [0.8, 0.8]), tmp_path)
    assert sorted(cheap.asked) == IDS
    assert strong.asked == ["c1", "c2", "c4", "c5", "c7"]  # input order, the undecided only
    out = {r["id"]: r for r in read_jsonl(tmp_path / "out.jsonl")}
    assert [r["id"] for r in read_jsonl(tmp_path / "out.jsonl")] == IDS
    decided = {i: r["decided_by"]["rung"] for i, r in out.items() if "decided_by" in r}
    assert decided == {"c0": 1, "c3": 1, "c6": 1, "c1": 2, "c2": 2}
    assert out["c6"]["status"] == "abstained"  # an abstention is a verdict: decided
    assert out["c4"]["status"] == "escalated"
    assert out["c4"]["error"] == (
        "confidence 0.5 below rung 1's certified threshold 0.8; "
        "confidence 0.1 below rung 2's certified threshold 0.8"
    )
    assert out["c5"]["status"] == out["c7"]["status"] == "parse_error"  # not escalated
    assert "decided_by" not in out["c5"] and out["c5"]["certificate"]
    cascade = summary["cascade"]
    assert (cascade["decided"], cascade["escalated"], cascade["cases"]) == (5, 1, 8)
    assert [(r["reached"], r["decided"]) for r in cascade["rungs"]] == [(8, 3), (5, 2)]
    # tokens: cheap answered 7 (its api_error spent none), strong 3 of its 5 with a verdict
    # and 2 parse errors: 5 with usage; price (1, 2) per million
    assert cascade["rungs"][0]["tokens"] == {"prompt": 700, "completion": 70}
    assert cascade["rungs"][1]["tokens"] == {"prompt": 500, "completion": 50}
    assert cascade["cost_all_last_rung_usd"] == pytest.approx(600e-6 / 5 * 8, abs=1e-6)


def test_a_rerun_under_a_new_certificate_asks_only_the_newly_undecided(tmp_path: Path) -> None:
    sure = {i: 0.1 * n for n, i in enumerate(IDS)}  # c0 0.0 ... c7 0.7
    cheap, strong = Scripted("cheap", sure), Scripted("strong", dict.fromkeys(IDS, 0.99))
    run([cheap, strong], certificate(tmp_path / "a.json", [0.5, 0.9]), tmp_path)
    assert strong.asked == ["c0", "c1", "c2", "c3", "c4"]
    cheap2, strong2 = Scripted("cheap", sure), Scripted("strong", dict.fromkeys(IDS, 0.99))
    summary = run([cheap2, strong2], certificate(tmp_path / "b.json", [0.65, 0.9]), tmp_path)
    assert cheap2.asked == []  # rung 1 answered every case last time
    assert strong2.asked == ["c5", "c6"]  # newly below rung 1's threshold
    assert [r["decided"] for r in summary["cascade"]["rungs"]] == [1, 7]


def test_a_rung_certified_to_decide_nothing_passes_every_case_on(tmp_path: Path) -> None:
    cheap, strong = Scripted("cheap", dict.fromkeys(IDS, 1.0)), Scripted("strong", {})
    summary = run([cheap, strong], certificate(tmp_path / "c.json", [None, 0.5]), tmp_path)
    assert strong.asked == IDS
    assert summary["cascade"]["decided"] == 0 and summary["cascade"]["coverage"] == 0.0
    reasons = {r["error"] for r in read_jsonl(tmp_path / "out.jsonl")}
    assert reasons == {"rung 1 is certified to decide nothing; no confidence at rung 2"}
    assert summary["scored"] == 0 and summary["mean_score"] is None
