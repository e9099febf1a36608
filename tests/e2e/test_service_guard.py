"""The service stays responsive and gives nothing away: judging off the event loop under a
time budget, upload limits, authentication before parsing, no Host echo, strong tokens off
loopback, redacted logs, and a busy port refused in one line (issue 16, items 12 and 15)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.cli import main as cli_main
from judge.cli.serve import check_token
from judge.config import Redactor
from judge.engine.outcome import Outcome
from judge.engine.rules import OFFLOAD_CHARS, RulesJudge
from judge.errors import UsageError
from judge.lexical import Budget, BudgetExceeded
from judge.rubric import Rubric, load_rubric
from judge.schemas import Case
from judge.service.config import Limits, ServiceConfig
from judge.testing import FakeOpenAIServer
from tests.helpers import case, pair
from tests.test_service_support import (
    REPO,
    TOKEN,
    InProcessService,
    ServiceProcess,
    write_config,
)

# the service's end-to-end group (a judge serve process per case): run by .ci/slow
pytestmark = pytest.mark.slow

LONG_ANSWER = "The free trial lasts 14 days from the day you sign up. " * 500  # ~27 KB


class GatedJudge(RulesJudge):
    """The rules judge, held inside its (synchronous) work until the test releases it, as a
    long CPU-bound case would be; it stops when its budget says so."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()
        self.stopped = threading.Event()

    def evaluate_sync(self, rubric: Rubric, case: Case, *, budget: Budget | None = None) -> Outcome:
        self.entered.set()
        try:
            while not self.release.wait(0.01):
                if budget is not None:
                    budget.check()
        except BudgetExceeded:
            self.stopped.set()
            raise
        return super().evaluate_sync(rubric, case, budget=budget)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    folder = tmp_path_factory.mktemp("guard")
    config = write_config(
        folder / "service.yaml",
        token=TOKEN,
        data_dir=str(folder / "data"),
        cache_dir=str(folder / "cache"),
    )
    server = ServiceProcess(config).start()
    yield server
    server.stop()


def big_grade_body() -> dict[str, Any]:
    return {"rubric": "faithfulness", "cases": [case("big", answer=LONG_ANSWER)]}


# ---- item 12: CPU-bound judging off the event loop, under a time budget -----------------


def test_healthz_answers_while_a_large_rules_case_is_judged(tmp_path: Path) -> None:
    assert len(LONG_ANSWER) > OFFLOAD_CHARS
    judge = GatedJudge()
    config = ServiceConfig(data_dir=tmp_path / "data")
    with (
        InProcessService(config, backends={"rules": judge}) as service,
        ThreadPoolExecutor(1) as pool,
    ):
        try:
            grading = pool.submit(
                httpx.post, service.base_url + "/v1/grade", json=big_grade_body(), timeout=60
            )
            assert judge.entered.wait(30), "the judge never started"
            health = httpx.get(service.base_url + "/healthz", timeout=10)
            assert health.status_code == 200
            assert not grading.done()  # the large case is still being judged
        finally:
            judge.release.set()
        response = grading.result()
    assert response.status_code == 200, response.text
    assert response.json()["records"][0]["status"] == "ok"


def test_a_request_over_its_timeout_is_504_and_its_worker_stops(tmp_path: Path) -> None:
    judge = GatedJudge()  # never released: only the timeout ends it
    config = ServiceConfig(data_dir=tmp_path / "data", limits=Limits(request_timeout_s=0.2))
    with InProcessService(config, backends={"rules": judge}) as service:
        response = httpx.post(service.base_url + "/v1/grade", json=big_grade_body(), timeout=60)
        assert response.status_code == 504, response.text
        assert response.json()["error"]["type"] == "timeout"
        assert judge.stopped.wait(30), "the worker thread went on after the 504"
        assert httpx.get(service.base_url + "/healthz", timeout=10).status_code == 200


async def test_a_case_over_the_rules_budget_is_an_api_error_record() -> None:
    rubric = load_rubric("faithfulness")
    big = Case(**case("big", answer=LONG_ANSWER))
    small = Case(**case("small"))
    for item in (big, small):  # in a worker thread and inline alike
        outcome = await RulesJudge(time_budget_s=0).evaluate(rubric, item)
        assert outcome.status == "api_error" and "budget" in (outcome.error or "")
    unbounded = await RulesJudge().evaluate(rubric, big)
    assert unbounded.status == "ok"


def test_the_largest_allowed_rules_request_is_answered(service: ServiceProcess) -> None:
    """The largest /v1/grade body the default limits allow, for the costliest rubric (two
    100,000-character answers, eight 100,000-character contexts): an answer, not a timeout,
    and the server keeps answering health checks meanwhile."""
    words = [f"w{i}" for i in range(3000)]
    sentences = [" ".join(words[(i * 7 + k) % 3000] for k in range(12)) + "." for i in range(900)]
    block = " ".join(sentences)[:100_000]
    body = {
        "rubric": "pairwise",
        "cases": [pair("largest", contexts=[block] * 8, answer_a=block, answer_b=block[::-1])],
    }
    data = json.dumps(body).encode()
    assert len(data) <= 1 << 20
    with service.client() as api, ThreadPoolExecutor(1) as pool:
        headers = {"Content-Type": "application/json"}
        grading = pool.submit(api.post, "/v1/grade", content=data, headers=headers, timeout=300)
        health = []
        with httpx.Client(base_url=service.base_url, timeout=60) as prober:
            while not grading.done():
                health.append(prober.get("/healthz").status_code)
        response = grading.result()
    assert response.status_code == 200, response.text[:300]
    assert response.json()["records"][0]["status"] == "ok"
    assert set(health) <= {200}


def test_job_uploads_have_the_grade_field_limits(service: ServiceProcess) -> None:
    too_long = case("u2", answer="x" * 100_001)
    lines = [json.dumps(case("u1")), json.dumps(too_long), json.dumps(case("u3"))]
    with service.client() as api:
        upload = api.post(
            "/v1/jobs?rubric=faithfulness",
            content="\n".join(lines) + "\n",
            headers={"Content-Type": "application/x-ndjson"},
        )
        assert upload.status_code == 422, upload.text
        error = upload.json()["error"]
        assert error["field"] == "body" and error["message"].startswith("line 2 (id 'u2'): answer")
        many = case("u4", contexts=["c"] * 101)
        listed = api.post(
            "/v1/jobs?rubric=faithfulness",
            content=json.dumps(many) + "\n",
            headers={"Content-Type": "application/x-ndjson"},
        )
        assert listed.status_code == 422 and "contexts" in listed.json()["error"]["message"]
        as_json = api.post("/v1/jobs", json={"rubric": "faithfulness", "cases": [too_long]})
        assert as_json.status_code == 422 and as_json.json()["error"]["field"] == "cases[0].answer"


def test_a_deeply_nested_upload_is_a_json_error_and_the_connection_lives(
    service: ServiceProcess,
) -> None:
    deep = '{"id": "d1", "question": "q", "contexts": ["c"], "answer": '
    deep += "[" * 5000 + "]" * 5000 + "}\n"
    with service.client() as api:
        response = api.post(
            "/v1/jobs?rubric=faithfulness",
            content=deep,
            headers={"Content-Type": "application/x-ndjson"},
        )
        assert response.status_code == 422, response.text
        assert response.json()["error"]["field"] == "body"
        assert api.get("/v1/rubrics").status_code == 200  # same connection, still usable


# ---- item 15: authentication first, no Host echo, strong tokens, redaction, busy port --


def test_an_unauthenticated_body_is_never_parsed(service: ServiceProcess) -> None:
    junk = b"\x00not json at all " * 56_000  # ~900 KB
    with service.client(token=None) as anonymous:
        for path in ("/v1/grade", "/v1/jobs", "/v1/jobs?rubric=faithfulness", "/v1/calibrate"):
            response = anonymous.post(
                path, content=junk, headers={"Content-Type": "application/json"}
            )
            assert response.status_code == 401, (path, response.text[:200])
            assert response.json()["error"]["type"] == "unauthorized"
            assert response.headers["www-authenticate"] == "Bearer"
    with service.client(token=None) as client:
        spelled = {"Authorization": f"bearer {TOKEN}"}  # the scheme is case-insensitive
        assert client.get("/v1/rubrics", headers=spelled).status_code == 200
        wrong = {"Authorization": f"Basic {TOKEN}"}
        assert client.get("/v1/rubrics", headers=wrong).status_code == 401


@pytest.mark.parametrize("path", ["/v1/rubrics/", "/v1/grade/", "/healthz/", "/v1/jobs/"])
def test_a_trailing_slash_never_echoes_the_host(service: ServiceProcess, path: str) -> None:
    with service.client(follow_redirects=False) as api:
        response = api.request(
            "POST" if path in ("/v1/grade/", "/v1/jobs/") else "GET",
            path,
            headers={"Host": "echo-me.localhost"},  # a name loopback answers (issue 20 item 7)
            json={},
        )
    assert "location" not in response.headers
    assert "echo-me" not in response.text
    assert response.status_code == 404 and response.json()["error"]["type"] == "not_found"


def test_a_short_token_is_refused_off_loopback(tmp_path: Path, capsys: Any) -> None:
    argv = ["serve", "--host", "0.0.0.0", "--data-dir", str(tmp_path / "d")]
    assert cli_main(argv, env={"JUDGE_SERVICE_TOKEN": "x"}) == 2
    assert "at least 16 characters" in capsys.readouterr().err
    with pytest.raises(UsageError, match="at least 16"):
        check_token("10.0.0.7", "fifteen-chars-x")
    check_token("10.0.0.7", "sixteen-chars-xx")
    check_token("127.0.0.1", "x")  # loopback: any token, or none
    check_token("::1", None)


def test_verbose_logs_never_show_a_password_in_the_base_url(
    tmp_path: Path, server_factory: Callable[..., FakeOpenAIServer]
) -> None:
    password = "hunter2-in-the-url-77"
    judge_server = server_factory()
    base_url = judge_server.base_url.replace("http://", f"http://judgeuser:{password}@")
    config = write_config(
        tmp_path / "service.yaml",
        judges={"model": {"model": "judge-test-2024-01-01", "base_url": base_url}},
        data_dir=str(tmp_path / "data"),
        cache_dir=str(tmp_path / "cache"),
    )
    service = ServiceProcess(config, env={"OPENAI_API_KEY": "sk-unused-0000"}, verbose=2).start()
    try:
        with service.client(token=None) as api:
            graded = api.post("/v1/grade", json={"rubric": "faithfulness", "cases": [case()]})
            judges = api.get("/v1/judges").text
    finally:
        service.stop()
    assert graded.status_code == 200, graded.text
    log = service.log_text()
    assert "DEBUG" in log and "/chat/completions" in log  # -vv did log the requests
    assert password not in log and password not in judges and password not in graded.text


def test_redactor_hides_url_user_information() -> None:
    redact = Redactor([])
    line = redact("POST http://alice:s3cret@10.0.0.1:8000/v1/chat and https://tok@h.example/x")
    assert "s3cret" not in line and "alice" not in line and "tok@" not in line
    assert "http://***@10.0.0.1:8000/v1/chat" in line


def test_a_busy_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "judge.cli", "serve", "--port", str(port)]
        command += ["--data-dir", str(tmp_path / "data")]
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0] and "in use" in lines[0]
    assert "judge serve: http" not in done.stderr  # no banner for a server that never ran
