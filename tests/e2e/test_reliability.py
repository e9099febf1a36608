"""Reliability under faults (issue 6, item 2), end to end over loopback HTTP.

1,000 cases against the test server with about 10% 429, 5% 500, 5% malformed, 3% truncated
and 2% timeouts: every case ends in exactly one record; every case whose fault can be
retried or repaired ends with the verdict a fault-free run gives; truncated replies are
counted as `parse_error` with their reason; the file has no duplicate, missing or corrupt
line. Then a CLI run killed with SIGKILL and resumed ends with the same file as an
uninterrupted run. Nothing here depends on timing: waits are bounded, and the kill happens
while the server holds every request after a fixed count.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.cases import TOPICS
from judge.config import JudgeConfig
from judge.engine.files import grade_file
from judge.engine.grader import Grader
from judge.engine.model import LLMJudge
from judge.rubric import load_rubric
from judge.schemas import Case, GradedRecord
from judge.testing import FaultPlan
from tests.helpers import StallAfter, wait_for_lines, write_jsonl

pytestmark = pytest.mark.slow

MODEL = "judge-test-2024-01-01"


def make_cases(n: int) -> list[dict[str, Any]]:
    """`n` distinct cases: supported, partly unsupported, contradicted and abstaining answers."""
    cases = []
    for i in range(n):
        topic, fact = TOPICS[i % len(TOPICS)]
        question = f"How do I {topic}? (ticket {i})"
        answers = [
            fact,
            f"{fact} We also include a free gift worth {i % 50 + 10} dollars.",
            fact.replace("5", "9").replace("15", "30").replace("2", "7"),
            "I don't know, sorry.",
        ]
        answer = answers[(i // len(TOPICS)) % len(answers)]
        cases.append(
            {"id": f"case-{i:04d}", "question": question, "contexts": [fact], "answer": answer}
        )
    return cases


def read_records(path: Path) -> list[GradedRecord]:
    """Every line must be a whole, valid record: a corrupt line fails here."""
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"", "the file must end with a newline"
    return [GradedRecord.model_validate_json(line) for line in lines[:-1]]


def config(base_url: str, **options: Any) -> JudgeConfig:
    fast = {"timeout": 2.0, "max_retries": 3, "backoff_initial": 0.01, "backoff_max": 0.05}
    return JudgeConfig(
        model=MODEL, base_url=base_url, concurrency=32, use_cache=False, **(fast | options)
    )


def grade(base_url: str, input_path: Path, output: Path) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        backend = LLMJudge(config(base_url))
        try:
            grader = Grader(backend, load_rubric("faithfulness"), concurrency=32)
            return await grade_file(grader, input_path, output, use_cache=False)
        finally:
            await backend.aclose()

    return asyncio.run(run())


def user_message(data: dict[str, Any]) -> str:
    return load_rubric("faithfulness").render(Case(**data))[1]["content"]


def outcome(record: GradedRecord) -> tuple[Any, ...]:
    """What must not depend on faults, retries or interruptions (latency and usage may)."""
    return (record.id, record.status, record.label, record.score, record.verdict)


def test_thousand_cases_with_faults_end_in_one_right_record_each(tmp_path, server_factory):
    cases = make_cases(1000)
    source = write_jsonl(tmp_path / "cases.jsonl", cases)
    clean = server_factory()
    grade(clean.base_url, source, tmp_path / "clean.jsonl")
    expected = {r.id: r for r in read_records(tmp_path / "clean.jsonl")}
    assert clean.stats.requests == 1000  # a fault-free run: one request per case

    # The client times out at 2 s and the server holds a "timeout" fault 6 s: a loaded machine
    # (a normal reply slower than 0.5 s) must not turn an ordinary case into a timeout.
    plan = FaultPlan.mixed(0.25, retry_after=0.01, timeout_delay=6.0, seed=1)
    faulty = server_factory(faults=plan)
    summary = grade(faulty.base_url, source, tmp_path / "faulty.jsonl")
    records = read_records(tmp_path / "faulty.jsonl")

    assert [r.id for r in records] == [c["id"] for c in cases]  # one each, input order
    fault_of = {c["id"]: plan.fault_for(user_message(c)) for c in cases}
    drawn = Counter(fault_of.values())
    for name, share in {
        "429": 0.10,
        "500": 0.05,
        "malformed": 0.05,
        "truncated": 0.03,
        "timeout": 0.02,
    }.items():
        assert abs(drawn[name] / 1000 - share) < 0.02, (name, drawn)
    for record in records:
        fault = fault_of[record.id]
        if fault == "truncated":
            assert record.status == "parse_error", record
            assert "truncated" in (record.error or "") and record.raw
            assert record.score is None and record.label is None
        else:  # transient faults are retried, malformed replies repaired
            assert outcome(record) == outcome(expected[record.id]), (fault, record)
    by_status = Counter(r.status for r in records)
    assert by_status["parse_error"] == drawn["truncated"]
    assert summary["status"] == dict(sorted(by_status.items()))
    assert by_status["ok"] > 600 and by_status["abstained"] > 100  # the mix is exercised
    assert faulty.stats.faults["timeout"] == drawn["timeout"]
    assert faulty.stats.faults["429"] == drawn["429"]


# ---- SIGKILL and resume ----------------------------------------------------------------


def cli(input_path: Path, output: Path, base_url: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_"))}
    command = [sys.executable, "-m", "judge.cli", "grade", str(input_path), "--rubric"]
    command += ["faithfulness", "-o", str(output), "--model", MODEL, "--base-url", base_url]
    command += ["--concurrency", "8", "--no-cache", "--timeout", "1", "--max-retries", "3"]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finish(process: subprocess.Popen[bytes]) -> None:
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode()


def test_run_killed_and_resumed_gives_the_same_file(tmp_path, server_factory):
    cases = make_cases(200)
    source = write_jsonl(tmp_path / "cases.jsonl", cases)
    plan = FaultPlan(
        rate_429=0.1, rate_malformed=0.05, rate_truncated=0.05, retry_after=0.01, seed=3
    )

    reference = server_factory(faults=plan, latency=0.01)
    finish(cli(source, tmp_path / "whole.jsonl", reference.base_url))
    whole = read_records(tmp_path / "whole.jsonl")

    # every request after the 80th is held, so the kill lands mid-run whatever the speed;
    # one server for both runs: a resume must ask the same endpoint (the judge identity)
    stall = StallAfter(80)
    stalled = server_factory(faults=plan, responder=stall)
    output = tmp_path / "resumed.jsonl"
    process = cli(source, output, stalled.base_url)
    wait_for_lines(output, 40, process)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    partial = output.read_bytes()
    assert 40 <= partial.count(b"\n") < 200
    with output.open("ab") as handle:  # as if the kill had torn a line in half
        handle.write(b'{"id": "case-0199", "rubric": "faithful')

    stall.release()
    stalled.reset_stats()
    resumed = stalled
    finish(cli(source, output, resumed.base_url))
    again = read_records(output)
    assert [outcome(r) for r in again] == [outcome(r) for r in whole]
    kept = [r for r in read_records_prefix(partial) if r.status in ("ok", "abstained")]
    assert kept
    sent = {body["messages"][1]["content"] for body in resumed.stats.bodies}
    by_id = {c["id"]: c for c in cases}
    assert not sent & {user_message(by_id[r.id]) for r in kept}  # kept records are not re-sent


def read_records_prefix(data: bytes) -> list[GradedRecord]:
    return [GradedRecord.model_validate_json(line) for line in data.split(b"\n")[:-1]]
