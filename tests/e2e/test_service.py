"""The grading service end to end: `judge serve` as a real process, driven over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.cli import main as cli_main
from judge.config import Redactor
from judge.errors import UsageError
from judge.rubric import load_rubric
from judge.service._jobs import JobStore
from judge.service.config import TOKEN_ENV, load_service_config
from tests.helpers import case, pair, read_jsonl
from tests.test_service_support import (
    REPO,
    TOKEN,
    ServiceProcess,
    wait_for_job,
    write_config,
)

# the service's end-to-end group (a judge serve process, graded against the CLI): run by .ci/slow
pytestmark = pytest.mark.slow

EXAMPLES = REPO / "examples"
GRADE_BODY_LIMIT = 256 * 1024
MAX_CASES = 60


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    folder = tmp_path_factory.mktemp("service")
    config = write_config(
        folder / "service.yaml",
        token=TOKEN,
        data_dir=str(folder / "data"),
        cache_dir=str(folder / "cache"),
        limits={"grade_body_bytes": GRADE_BODY_LIMIT, "grade_cases": MAX_CASES},
    )
    server = ServiceProcess(config).start()
    yield server
    server.stop()


@pytest.fixture
def api(service: ServiceProcess) -> Iterator[httpx.Client]:
    with service.client() as client:
        yield client


def rows(path: Path) -> list[dict[str, Any]]:
    return read_jsonl(path)


def essentials(record: dict[str, Any]) -> tuple[Any, ...]:
    return (
        record["id"],
        record["status"],
        record["label"],
        record["score"],
        record["rubric_sha256"],
        record["verdict"],
    )


def assert_error(response: httpx.Response, status: int, field: str | None = None) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["type"] and error["message"]
    if field is not None:
        assert error.get("field") == field, error


# ---- the same records as `judge grade` -------------------------------------------------


@pytest.mark.parametrize(
    ("rubric", "source"),
    [
        ("faithfulness@1", "cases.jsonl"),
        ("relevance@1", "cases.jsonl"),
        ("pairwise@1", "pairs.jsonl"),
        ("retrieval@1", "rag/cases.jsonl"),  # retrieved and relevant ids reach the service
        ("correctness@1", "rag/cases.jsonl"),
    ],
)
def test_grade_matches_the_cli(api: httpx.Client, tmp_path: Path, rubric: str, source: str) -> None:
    cases = rows(EXAMPLES / source)
    out = tmp_path / "cli.jsonl"
    code = cli_main(
        ["grade", str(EXAMPLES / source), "--rubric", rubric, "--offline", "-o", str(out)],
        env={},
    )
    assert code == 0
    response = api.post("/v1/grade", json={"rubric": rubric, "cases": cases})
    assert response.status_code == 200, response.text
    body = response.json()
    served, local = body["records"], rows(out)
    assert [essentials(r) for r in served] == [essentials(r) for r in local]
    assert [r["id"] for r in served] == [c["id"] for c in cases]
    assert body["summary"]["cases"] == len(cases)
    assert body["summary"]["rubric"] == rubric


def test_grade_one_case_with_the_default_judge_and_aliases(api: httpx.Client) -> None:
    ragas = {
        "id": 7,
        "user_input": "How long is the free trial?",
        "retrieved_contexts": ["The free trial lasts 14 days from the day you sign up."],
        "response": "The free trial lasts 14 days.",
    }
    response = api.post("/v1/grade", json={"rubric": "faithfulness", "cases": [ragas]})
    assert response.status_code == 200, response.text
    (record,) = response.json()["records"]
    assert (record["id"], record["status"], record["label"]) == ("7", "ok", "faithful")
    assert record["judge"]["model"] == "rules"


# ---- a job of 500 cases ----------------------------------------------------------------


def test_job_of_500_cases_completes_in_input_order(api: httpx.Client) -> None:
    cases = [
        case(f"case-{i:03d}", answer=f"The free trial lasts {i % 30} days.") for i in range(500)
    ]
    cases.reverse()  # input order, not id order
    created = api.post("/v1/jobs", json={"rubric": "faithfulness@1", "cases": cases})
    assert created.status_code == 202, created.text
    assert created.json()["status"] == "queued"
    job_id = created.json()["id"]
    state = wait_for_job(api, job_id)
    assert state["status"] == "done", state
    assert state["progress"] == {"done": 500, "total": 500}
    assert state["summary"]["cases"] == 500
    response = api.get(f"/v1/jobs/{job_id}/records")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    records = [json.loads(line) for line in response.text.splitlines()]
    assert [r["id"] for r in records] == [c["id"] for c in cases]
    assert all(r["status"] == "ok" for r in records)


def test_jsonl_upload_and_idempotent_retry(api: httpx.Client) -> None:
    body = "".join(json.dumps(case(f"u{i}")) + "\n" for i in range(20)).encode()
    headers = {"Content-Type": "application/x-ndjson", "Idempotency-Key": "upload-once-1"}
    url = "/v1/jobs?rubric=faithfulness@1&judge=rules"
    first = api.post(url, content=body, headers=headers)
    again = api.post(url, content=body, headers=headers)
    assert first.status_code == again.status_code == 202, first.text
    assert first.json()["id"] == again.json()["id"]
    assert wait_for_job(api, first.json()["id"])["status"] == "done"
    records = api.get(f"/v1/jobs/{first.json()['id']}/records").text.splitlines()
    assert len(records) == 20
    other = api.post(url, content=body + json.dumps(case("u99")).encode() + b"\n", headers=headers)
    assert_error(other, 409, "Idempotency-Key")


def test_json_job_idempotency_key(api: httpx.Client) -> None:
    body = {"rubric": "relevance", "cases": [case("r1"), case("r2")]}
    headers = {"Idempotency-Key": "json-once-1"}
    ids = {api.post("/v1/jobs", json=body, headers=headers).json()["id"] for _ in range(3)}
    assert len(ids) == 1


def test_upload_that_does_not_validate_names_the_line(api: httpx.Client) -> None:
    body = json.dumps(case("ok1")) + "\nnot json\n" + json.dumps(case("ok1")) + "\n"
    response = api.post(
        "/v1/jobs?rubric=faithfulness",
        content=body,
        headers={"Content-Type": "application/x-ndjson"},
    )
    assert_error(response, 422, "body")
    problems = response.json()["error"]["problems"]
    assert any(p.startswith("line 2") for p in problems)
    assert any("duplicate id" in p for p in problems)


def test_upload_nested_5000_deep_is_422_naming_the_line(api: httpx.Client) -> None:
    body = json.dumps(case("ok1")) + "\n" + "[" * 5000 + "]" * 5000 + "\n"  # was a 500
    headers = {"Content-Type": "application/x-ndjson"}
    response = api.post("/v1/jobs?rubric=faithfulness", content=body, headers=headers)
    assert_error(response, 422, "body")
    assert any(p.startswith("line 2") for p in response.json()["error"]["problems"])


def test_unknown_job_and_cancel_of_a_finished_job(api: httpx.Client) -> None:
    assert_error(api.get("/v1/jobs/job_nope"), 404)
    assert_error(api.get("/v1/jobs/job_nope/records"), 404)
    assert_error(api.delete("/v1/jobs/job_nope"), 404)
    job_id = api.post("/v1/jobs", json={"rubric": "faithfulness", "cases": [case()]}).json()["id"]
    wait_for_job(api, job_id)
    assert_error(api.delete(f"/v1/jobs/{job_id}"), 409)  # nothing to cancel (issue 20 item 15)
    assert api.get(f"/v1/jobs/{job_id}").json()["status"] == "done"


# ---- rubrics, judges, probes, calibration ----------------------------------------------


def test_rubrics(api: httpx.Client) -> None:
    listed = {(r["id"], r["version"]): r for r in api.get("/v1/rubrics").json()}
    assert listed[("faithfulness", 1)]["sha256"] == load_rubric("faithfulness@1").sha256
    detail = api.get("/v1/rubrics/pairwise/1").json()
    assert detail["kind"] == "pairwise" and detail["json_schema"]["properties"]["winner"]
    assert_error(api.get("/v1/rubrics/pairwise/99"), 404)
    assert_error(api.get("/v1/rubrics/..%2F..%2Fetc/1"), 404)  # decoded: no such route
    assert_error(api.get("/v1/rubrics/..etc/1"), 422)


def test_judges_show_no_endpoint_or_key(api: httpx.Client) -> None:
    (judge,) = api.get("/v1/judges").json()
    assert judge["name"] == "rules" and judge["offline"] and judge["default"]
    assert "base_url" not in judge and "api_key" not in json.dumps(judge)


def test_position_probe(api: httpx.Client) -> None:
    pairs = rows(EXAMPLES / "pairs.jsonl")
    response = api.post("/v1/probes/position", json={"rubric": "pairwise", "cases": pairs})
    assert response.status_code == 200, response.text
    report = response.json()["report"]
    assert report["probe"] == "position"
    assert len(response.json()["records"]) == len(pairs)
    wrong = api.post("/v1/probes/position", json={"rubric": "faithfulness", "cases": [case()]})
    assert_error(wrong, 422, "rubric")


def test_calibrate_a_finished_job_against_human_labels(api: httpx.Client) -> None:
    cases = rows(EXAMPLES / "cases.jsonl")
    job_id = api.post("/v1/jobs", json={"rubric": "faithfulness", "cases": cases}).json()["id"]
    wait_for_job(api, job_id)
    records = [json.loads(x) for x in api.get(f"/v1/jobs/{job_id}/records").text.splitlines()]
    humans = [{"id": r["id"], "label": r["label"]} for r in records if r["status"] == "ok"]
    response = api.post(
        "/v1/calibrate", json={"judge_job": job_id, "human_labels": humans, "n_bootstrap": 50}
    )
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["n"] == len(humans) and report["observed_agreement"] == 1.0
    assert str(api.base_url.host) not in json.dumps(report.get("settings", {}))
    both = api.post("/v1/calibrate", json={"judge_labels": humans, "human_labels": humans})
    assert both.json()["observed_agreement"] == 1.0
    assert_error(api.post("/v1/calibrate", json={"human_labels": humans}), 422, "judge_labels")


# ---- authentication, limits, validation ------------------------------------------------


def test_token_is_required(service: ServiceProcess) -> None:
    with service.client(token=None) as anonymous:
        assert anonymous.get("/healthz").status_code == 200
        response = anonymous.post("/v1/grade", json={"rubric": "faithfulness", "cases": [case()]})
        assert_error(response, 401)
        assert response.headers["www-authenticate"] == "Bearer"
        assert_error(anonymous.get("/v1/jobs/x"), 401)
    with service.client(token="wrong-token") as wrong:
        assert_error(wrong.get("/v1/rubrics"), 401)


def test_oversized_body_is_413(api: httpx.Client) -> None:
    big = [case(f"b{i}", answer="word " * 2000) for i in range(40)]  # ~400 KB
    assert_error(api.post("/v1/grade", json={"rubric": "faithfulness", "cases": big}), 413)

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"rubric": "faithfulness", "cases": ['
        for i in range(40):
            yield json.dumps(case(f"c{i}", answer="word " * 2000)).encode() + b","
        yield json.dumps(case("last")).encode() + b"]}"

    chunked = api.post("/v1/grade", content=chunks(), headers={"Content-Type": "application/json"})
    assert_error(chunked, 413)


def test_too_many_cases_is_413(api: httpx.Client) -> None:
    cases = [case(f"m{i}", contexts=["c"], answer="a.") for i in range(MAX_CASES + 1)]
    assert_error(
        api.post("/v1/grade", json={"rubric": "faithfulness", "cases": cases}), 413, "cases"
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"rubric": "faithfulness", "cases": [case(answer=None)]}, "cases[0].answer"),
        (
            {"rubric": "faithfulness", "cases": [case(), case("c2", contexts=[])]},
            "cases[1].contexts",
        ),
        ({"rubric": "faithfulness", "cases": [case(answer="x" * 100_001)]}, "cases[0].answer"),
        (
            {"rubric": "faithfulness", "cases": [case(contexts=["x" * 100_001])]},
            "cases[0].contexts[0]",
        ),
        ({"rubric": "faithfulness", "cases": [case(id="")]}, "cases[0].id"),
        ({"rubric": "faithfulness", "cases": [case(), case()]}, "cases[1].id"),
        ({"rubric": "faithfulness", "cases": [case(colour="red")]}, "cases[0].colour"),
        ({"rubric": "faithfulness", "cases": []}, "cases"),
        ({"rubric": "nope", "cases": [case()]}, "rubric"),
        ({"rubric": "../../etc/passwd", "cases": [case()]}, "rubric"),
        ({"rubric": "faithfulness", "judge": "gpt-9", "cases": [case()]}, "judge"),
        (
            {"rubric": "faithfulness", "base_url": "http://169.254.169.254", "cases": [case()]},
            "base_url",
        ),
        ({"rubric": "faithfulness", "api_key": "sk-mine", "cases": [case()]}, "api_key"),
        ({"rubric": "pairwise", "cases": [pair(answer_b=None)]}, "cases[0].answer_b"),
    ],
)
def test_malformed_request_is_422_naming_the_field(
    api: httpx.Client, body: dict[str, Any], field: str
) -> None:
    assert_error(api.post("/v1/grade", json=body), 422, field)


def test_errors_are_json_everywhere(api: httpx.Client) -> None:
    assert_error(
        api.post("/v1/grade", content=b"{not json", headers={"Content-Type": "application/json"}),
        422,
    )
    assert_error(api.get("/v1/nowhere"), 404)
    assert_error(api.put("/v1/grade", json={}), 405)
    assert_error(api.post("/v1/jobs", content=b"x", headers={"Content-Type": "image/png"}), 415)
    assert_error(
        api.post("/v1/jobs", content=b"{}", headers={"Content-Type": "application/x-ndjson"}),
        422,
        "rubric",
    )


# ---- configuration and startup ---------------------------------------------------------


def test_binding_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    argv = ["serve", "--host", "0.0.0.0", "--data-dir", str(tmp_path)]
    assert cli_main(argv, env={}) == 2


def test_config_files_and_secrets(tmp_path: Path) -> None:
    toml = tmp_path / "service.toml"
    toml.write_text(
        '[judges.small]\nmodel = "m-2024-01-01"\nbase_url = "http://127.0.0.1:1/v1"\n'
        'api_key_env = "SMALL_KEY"\n[judges.rules]\n',
        "utf-8",
    )
    config = load_service_config(toml, {"SMALL_KEY": "sk-secret-0123456789", TOKEN_ENV: "tok"})
    assert config.judge_names() == ["small", "rules"] and config.default_name() == "small"
    judge = config.judge_config("small")
    assert judge.api_key is not None and judge.api_key.get_secret_value() == "sk-secret-0123456789"
    assert "sk-secret" not in repr(config) and "sk-secret" not in config.model_dump_json()
    assert config.token is not None and config.token.get_secret_value() == "tok"
    with pytest.raises(UsageError, match="SMALL_KEY"):
        load_service_config(toml, {})
    bad = write_config(tmp_path / "bad.yaml", judges={"x": {"modle": "m"}})
    with pytest.raises(UsageError, match="modle"):
        load_service_config(bad, {})
    assert load_service_config(None, {}).judge_names() == ["rules"]


def test_redactor() -> None:
    redact = Redactor(["hunter2-secret"])
    text = redact("key hunter2-secret and sk-proj-abcdefghijkl and Bearer abc.def")
    assert "hunter2" not in text and "sk-proj" not in text and "abc.def" not in text


def test_one_server_per_data_dir(tmp_path: Path) -> None:
    first = JobStore(tmp_path)
    with pytest.raises(UsageError, match="data dir"):
        JobStore(tmp_path)
    first.close()
    JobStore(tmp_path).close()  # the lock goes with its holder
