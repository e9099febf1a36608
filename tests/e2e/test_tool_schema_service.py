"""`judge serve` keeps answering while a `tool_arguments` request carries hostile schemas
(issue 52, item 2): the validation runs off the event loop, `/healthz` answers within 2 s,
and a request over its timeout is a 504 whose worker stops."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.kinds import tool_arguments
from judge.kinds._bounded_schema import MAX_CALL_STEPS, MAX_CASE_SECONDS, Steps
from judge.lexical import BudgetExceeded
from judge.service.config import Limits, ServiceConfig
from tests.test_service_support import InProcessService, ServiceProcess, write_config
from tests.unit.test_tool_schema_bounds import doubling

pytestmark = pytest.mark.slow  # a service per test, as the other service guards


def hostile_case(case_id: str, calls: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "convert"}]
    for n in range(calls):
        call = {"id": f"k{n}", "function": {"name": "convert", "arguments": '{"v": 3}'}}
        messages += [
            {"role": "assistant", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"k{n}", "content": "done"},
        ]
    schema = doubling(26, {"type": "string", "pattern": "^(c+c+)+d$"})
    tools = [{"type": "function", "function": {"name": "convert", "parameters": schema}}]
    return {"id": case_id, "messages": messages, "tools": tools}


class Gate:
    """Stands in for the schema check: holds the worker until released, taking steps (so
    a cancelled case stops, as a real validation does)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.stopped = threading.Event()

    def __call__(self, schema: Any, arguments: Any, steps: Steps, limit: int) -> list[str]:
        self.entered.set()
        try:
            while not self.release.wait(0.005):
                for _ in range(300):
                    steps.tick()
                steps.new_call()
        except BudgetExceeded:
            self.stopped.set()
            raise
        return []


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate()
    monkeypatch.setattr(tool_arguments, "schema_errors", held)
    yield held
    held.release.set()


def test_healthz_answers_within_2_s_while_a_schema_is_checked(tmp_path: Path, gate: Gate) -> None:
    config = ServiceConfig(data_dir=tmp_path / "data")
    body = {"rubric": "tool_arguments", "cases": [hostile_case("h1", 1)]}
    with InProcessService(config) as service, ThreadPoolExecutor(1) as pool:
        grading = pool.submit(httpx.post, service.base_url + "/v1/grade", json=body, timeout=60)
        assert gate.entered.wait(30), "the check never started"
        for _ in range(3):
            assert httpx.get(service.base_url + "/healthz", timeout=2).status_code == 200
        assert not grading.done()
        gate.release.set()
        response = grading.result()
    assert response.status_code == 200, response.text
    assert response.json()["records"][0]["label"] == "valid"


def test_a_schema_check_over_the_request_timeout_is_504_and_stops(
    tmp_path: Path, gate: Gate
) -> None:
    limits = Limits(request_timeout_s=0.3)
    config = ServiceConfig(data_dir=tmp_path / "data", limits=limits)
    body = {"rubric": "tool_arguments", "cases": [hostile_case("h2", 1)]}
    with InProcessService(config) as service:
        response = httpx.post(service.base_url + "/v1/grade", json=body, timeout=60)
        assert response.status_code == 504, response.text
        assert gate.stopped.wait(30), "the worker went on after the 504"
        assert httpx.get(service.base_url + "/healthz", timeout=2).status_code == 200


def test_real_hostile_schemas_are_answered_with_reasons(tmp_path: Path) -> None:
    """No stand-in: exponential anyOf over a catastrophic pattern, several calls and cases.
    Every call ends within its steps; the service answers health checks meanwhile."""
    config = ServiceConfig(data_dir=tmp_path / "data")
    body = {"rubric": "tool_arguments", "cases": [hostile_case(f"r{n}", 3) for n in range(2)]}
    assert len(json.dumps(body)) < 20_000
    health: list[int] = []
    with InProcessService(config) as service, ThreadPoolExecutor(1) as pool:
        grading = pool.submit(httpx.post, service.base_url + "/v1/grade", json=body, timeout=120)
        with httpx.Client(base_url=service.base_url, timeout=2) as prober:
            while not grading.done():
                health.append(prober.get("/healthz").status_code)
        response = grading.result()
    assert response.status_code == 200, response.text
    assert set(health) <= {200}
    bounds = (  # the steps, or the case's clock on a busy machine: a bound either way
        f"not checkable: validation took over {MAX_CALL_STEPS:,} steps for this call",
        f"not checkable: the case's validation ran over {MAX_CASE_SECONDS:g} s",
    )
    for record in response.json()["records"]:
        assert record["label"] == "invalid"
        errors = [call["errors"][0] for call in record["verdict"]["invalid"]]
        assert len(errors) == 3 and set(errors) <= set(bounds)


def test_a_served_process_answers_and_stops_on_sigterm_mid_request(tmp_path: Path) -> None:
    """`judge serve` as a process: while hostile schemas are checked, /healthz answers
    within 2 s, and SIGTERM ends the process (the old code's blocked loop ignored it)."""
    folder = tmp_path / "svc"
    folder.mkdir()
    config = write_config(folder / "service.yaml", data_dir=str(folder / "data"))
    server = ServiceProcess(config).start()
    try:
        body = {"rubric": "tool_arguments", "cases": [hostile_case(f"s{n}", 4) for n in range(3)]}
        with ThreadPoolExecutor(1) as pool:
            grading = pool.submit(httpx.post, server.base_url + "/v1/grade", json=body, timeout=120)
            answered = []
            with httpx.Client(base_url=server.base_url, timeout=2) as prober:
                while len(answered) < 5 and not grading.done():
                    answered.append(prober.get("/healthz").status_code)
            assert not grading.done()  # the health checks ran while it was graded
            assert server.proc is not None
            server.proc.send_signal(signal.SIGTERM)
            assert server.proc.wait(timeout=60) is not None  # it stops, in bounded time
            with contextlib.suppress(httpx.HTTPError):
                grading.result()
        assert answered == [200] * 5
    finally:
        server.stop()
