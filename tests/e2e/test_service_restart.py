"""Jobs survive a SIGKILL: the restarted service finishes each case exactly once.

The judge is a model behind the OpenAI-compatible test server, which answers a fixed
number of requests and then holds the rest, so the kill (or the cancel) lands mid-job
whatever the machine's speed; its request count shows that finished cases are not judged
again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judge.testing import FakeOpenAIServer, Reply
from tests.helpers import StallAfter, case
from tests.test_service_support import (
    ServiceProcess,
    wait_for_job,
    wait_for_progress,
    write_config,
)

# the service's end-to-end group (judge serve processes stopped and restarted): run by .ci/slow
pytestmark = pytest.mark.slow

KEY = "sk-test-SECRET-4d3c2b1a0f9e8d7c"
CONCURRENCY = 4
TOTAL = 200
ANSWERED = 40  # requests the judge answers before it holds the rest


def service_config(folder: Path, server: FakeOpenAIServer) -> Path:
    return write_config(
        folder / "service.yaml",
        judges={
            "slow": {
                "model": "judge-test-2024-01-01",
                "base_url": server.base_url,
                "api_key_env": "SLOW_JUDGE_KEY",
                "concurrency": CONCURRENCY,
                "max_retries": 0,
                "timeout": 20,
            },
            "rules": {},
        },
        default_judge="slow",
        data_dir=str(folder / "data"),
        cache_dir=str(folder / "cache"),
    )


@pytest.fixture
def stall() -> StallAfter:
    return StallAfter(ANSWERED)


@pytest.fixture
def slow_judge(
    server_factory: Callable[..., FakeOpenAIServer], stall: StallAfter
) -> FakeOpenAIServer:
    return server_factory(responder=stall)


@pytest.fixture
def service(tmp_path: Path, slow_judge: FakeOpenAIServer) -> Iterator[ServiceProcess]:
    server = ServiceProcess(
        service_config(tmp_path, slow_judge), env={"SLOW_JUDGE_KEY": KEY}
    ).start()
    yield server
    server.stop()


def cases(n: int = TOTAL) -> list[dict[str, object]]:
    # distinct content per case, so the verdict cache cannot stand in for the judge
    return [case(f"k{i:04d}", answer=f"The free trial lasts {i} days.") for i in range(n)]


@pytest.mark.slow
def test_sigkill_mid_job_then_restart_finishes_each_case_once(
    service: ServiceProcess, slow_judge: FakeOpenAIServer, stall: StallAfter
) -> None:
    submitted = cases()
    with service.client(token=None) as api:
        job_id = api.post("/v1/jobs", json={"rubric": "faithfulness", "cases": submitted}).json()[
            "id"
        ]
        state = wait_for_progress(api, job_id, at_least=stall.at_least(CONCURRENCY))
        assert state["status"] == "running", state  # the judge holds every later request
    service.kill()
    assert slow_judge.stats.requests <= ANSWERED + CONCURRENCY  # the kill landed mid-job

    stall.release()
    service.start()
    with service.client(token=None) as api:
        state = wait_for_job(api, job_id, timeout=90)
        assert state["status"] == "done", state
        assert state["progress"] == {"done": TOTAL, "total": TOTAL}
        lines = api.get(f"/v1/jobs/{job_id}/records").text.splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["id"] for r in records] == [c["id"] for c in submitted]
    assert all(r["status"] == "ok" for r in records), {r["status"] for r in records}
    # Finished cases were neither judged again nor lost: at most the calls in flight at
    # the kill were sent twice (the cache answers the rest).
    assert TOTAL <= slow_judge.stats.requests <= TOTAL + CONCURRENCY
    assert KEY not in service.log_text()


@pytest.mark.slow
def test_cancel_a_running_job(service: ServiceProcess, stall: StallAfter) -> None:
    with service.client(token=None) as api:
        body = {"rubric": "faithfulness", "judge": "slow", "cases": cases(200)}
        job_id = api.post("/v1/jobs", json=body).json()["id"]
        wait_for_progress(api, job_id, at_least=stall.at_least(CONCURRENCY))
        early = api.get(f"/v1/jobs/{job_id}/records")
        assert early.status_code == 409 and early.json()["error"]["type"] == "job_not_done"
        cancelled = api.delete(f"/v1/jobs/{job_id}")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        done = cancelled.json()["progress"]["done"]
        assert stall.at_least(CONCURRENCY) <= done <= ANSWERED  # kept at cancel time
        assert api.get(f"/v1/jobs/{job_id}").json()["status"] == "cancelled"
    service.stop()
    service.start()  # a cancelled job is not resumed
    with service.client(token=None) as api:
        assert api.get(f"/v1/jobs/{job_id}").json()["status"] == "cancelled"


def test_judge_failure_is_a_json_error_without_the_key(
    service: ServiceProcess, slow_judge: FakeOpenAIServer
) -> None:
    echoed = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "auth"}}
    slow_judge.script(Reply(status=401, error_body=echoed))
    with service.client(token=None) as api:
        response = api.post("/v1/grade", json={"rubric": "faithfulness", "cases": [case()]})
        assert response.status_code == 502, response.text
        assert response.json()["error"]["type"] == "judge_error"
        assert KEY not in response.text
        slow_judge.script(*[Reply(status=401, error_body=echoed)] * 3)
        job = api.post("/v1/jobs", json={"rubric": "faithfulness", "cases": cases(3)}).json()
        state = wait_for_job(api, job["id"])
        assert state["status"] == "failed" and KEY not in json.dumps(state)
        everything = [api.get(path).text for path in ("/healthz", "/v1/judges", "/openapi.json")]
    assert not any(KEY in text or "base_url" in text for text in everything[:2])
    assert KEY not in everything[2]
    assert KEY not in service.log_text()


def test_a_job_whose_stored_input_was_garbled_ends_failed_not_done(
    service: ServiceProcess, tmp_path: Path
) -> None:
    """Two lines of a running job's stored input garbled while the server was down: the
    resumed job must not end `done` with records missing (it used to: 1000/1000, 998)."""
    with service.client(token=None) as api:
        job_id = api.post("/v1/jobs", json={"rubric": "faithfulness", "cases": cases()}).json()[
            "id"
        ]
        wait_for_progress(api, job_id, at_least=30)
    service.kill()
    stored = tmp_path / "data" / "jobs" / job_id / "cases.jsonl"
    lines = stored.read_text("utf-8").splitlines(keepends=True)
    lines[150] = lines[150][: len(lines[150]) // 2] + "\n"  # torn
    lines[190] = "garbage\n"
    stored.write_text("".join(lines), "utf-8")

    service.start()
    with service.client(token=None) as api:
        state = wait_for_job(api, job_id, timeout=90)
        assert state["status"] == "failed", state
        assert "changed since it was submitted" in state["error"]
        assert state["progress"]["done"] < TOTAL
        assert api.get(f"/v1/jobs/{job_id}/records").status_code == 409
