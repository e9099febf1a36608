"""Three `judge serve` replicas on one PostgreSQL database grade every case exactly once
(issue 27's must-show): 10 jobs of 2,000 cases against the OpenAI-compatible test server,
one replica SIGKILLed while it holds a chunk, another stopped and started again; every job
ends `done` with exactly one record per case in input order, and the same Idempotency-Key
sent to two replicas at once makes one job. Needs PostgreSQL: `-m postgres` (.ci/postgres).

The kill is aimed, not timed: the victim is frozen (SIGSTOP) until the database shows it
holding an unfinished chunk, then killed, so its lease is left to expire mid-chunk.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from judge.testing import FakeOpenAIServer
from tests.helpers import case
from tests.postgres_support import postgres_url
from tests.test_service_support import ServiceProcess, wait_for_job, write_config

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
__all__ = ["postgres_url"]  # the fixture, imported for its name

JOBS, CASES, CHUNK = 10, 2000, 100
KEY = "nightly-2026-12-01"


def replica_config(folder: Path, name: str, url: str, server: FakeOpenAIServer) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_config(
        folder / f"{name}.yaml",
        judges={
            "fake": {
                "model": "judge-test-2024-01-01",
                "base_url": server.base_url,
                "concurrency": 16,
                "max_retries": 2,
                "timeout": 20,
            }
        },
        database=url,
        data_dir=str(folder / f"{name}-data"),
        cache_dir=str(folder / f"{name}-cache"),
        use_cache=False,
        replicas={"chunk_cases": CHUNK, "lease_s": 3, "poll_s": 0.1},
    )


def upload(job: int) -> str:
    # distinct content per case: every record must come from the judge, not a cache
    return "".join(
        json.dumps(case(f"j{job}-c{i:04d}", answer=f"The free trial lasts {i} days.")) + "\n"
        for i in range(CASES)
    )


def submit(api: httpx.Client, job: int, **headers: str) -> str:
    created = api.post(
        "/v1/jobs?rubric=faithfulness",
        content=upload(job),
        headers={"Content-Type": "application/x-ndjson", **headers},
    )
    assert created.status_code == 202, created.text
    return str(created.json()["id"])


def open_chunks(url: str, pid: int) -> int:
    """Unfinished chunks whose lease the process `pid` holds."""
    with psycopg.connect(url) as db:
        row = db.execute(
            "SELECT count(*) FROM chunks WHERE NOT done AND owner LIKE %s", (f"%:{pid}:%",)
        ).fetchone()
    assert row is not None
    return int(row[0])


def kill_mid_chunk(replica: ServiceProcess, url: str, deadline: float) -> int:
    """SIGKILL `replica` at a moment it holds an unfinished chunk; how many it held."""
    assert replica.proc is not None
    pid = replica.proc.pid
    while time.monotonic() < deadline:
        os.kill(pid, signal.SIGSTOP)
        held = open_chunks(url, pid)
        if held:
            replica.kill()
            return held
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.05)
    raise AssertionError("the replica never held a chunk")


def same_key_at_once(replicas: list[ServiceProcess], job: int) -> list[str]:
    """Submit one job to each replica at the same moment with one Idempotency-Key."""
    ids: list[str] = []
    start = threading.Barrier(len(replicas))

    def send(replica: ServiceProcess) -> None:
        with replica.client(token=None) as api:
            start.wait()
            ids.append(submit(api, job, **{"Idempotency-Key": KEY}))

    threads = [threading.Thread(target=send, args=(r,)) for r in replicas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return ids


@pytest.fixture
def judge_server(server_factory: Callable[..., FakeOpenAIServer]) -> FakeOpenAIServer:
    return server_factory(latency=0.002)


@pytest.fixture
def replicas(
    tmp_path: Path, postgres_url: str, judge_server: FakeOpenAIServer
) -> Iterator[list[ServiceProcess]]:
    made = [
        ServiceProcess(replica_config(tmp_path, name, postgres_url, judge_server))
        for name in ("a", "b", "c")
    ]
    try:
        yield [replica.start() for replica in made]
    finally:
        for replica in made:
            replica.stop()


def test_three_replicas_grade_every_case_exactly_once(
    replicas: list[ServiceProcess], postgres_url: str, judge_server: FakeOpenAIServer
) -> None:
    deadline = time.monotonic() + 150
    ids: list[str] = []
    for job in range(JOBS - 1):
        with replicas[job % 3].client(token=None) as api:
            ids.append(submit(api, job))
    twice = same_key_at_once(replicas[1:], JOBS - 1)
    assert len(twice) == 2 and twice[0] == twice[1], twice
    ids.append(twice[0])

    held = kill_mid_chunk(replicas[0], postgres_url, deadline)
    assert held >= 1  # the kill came mid-work: frozen, it held an unfinished chunk
    replicas[1].stop()  # a graceful restart gives its leases back
    replicas[1].start()
    replicas[0].start()  # the killed node comes back as a new replica

    with replicas[2].client(token=None) as api:
        states = [wait_for_job(api, job_id, timeout=deadline - time.monotonic()) for job_id in ids]
        listed = api.get("/v1/jobs", params={"limit": 50}).json()["jobs"]
        bodies = [api.get(f"/v1/jobs/{job_id}/records") for job_id in ids]
    assert [s["status"] for s in states] == ["done"] * JOBS, [s["error"] for s in states]
    assert all(s["progress"] == {"done": CASES, "total": CASES} for s in states)
    assert sorted(job["id"] for job in listed) == sorted(ids)  # one job for the shared key
    for job, body in enumerate(bodies):
        assert body.status_code == 200, body.text
        got = [json.loads(line)["id"] for line in body.text.splitlines()]
        assert got == [f"j{job}-c{i:04d}" for i in range(CASES)]  # once each, input order
        summary: dict[str, Any] = states[job]["summary"]
        assert summary["cases"] == CASES
    assert judge_server.stats.requests >= JOBS * CASES
    with psycopg.connect(postgres_url) as db:
        row = db.execute("SELECT count(*), count(DISTINCT (job_id, case_index)) FROM records")
        assert row.fetchone() == (JOBS * CASES, JOBS * CASES)
