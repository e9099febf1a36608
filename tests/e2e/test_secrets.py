"""One way to keep secrets out of what the tool says: the same redactor scrubs the API key
and a password written into the base URL from every error, in the CLI's records, the
service's synchronous responses, its job records and its probe records (issue 12: job and
probe records used to be written unredacted)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from judge.cli import main
from judge.config import JudgeConfig, Redactor, secrets_of
from judge.service.config import load_service_config
from judge.testing import FakeOpenAIServer, Reply
from tests.helpers import case, read_jsonl, write_jsonl
from tests.test_service_support import InProcessService, wait_for_job

PASSWORD = "pw-7c1e9a4d2b"
KEY = "sk-test-0a1b2c3d4e5f6a7b"


def echoing(server: FakeOpenAIServer) -> Reply:
    """A 400 whose message repeats the credentials back, as some proxies do."""
    message = f"rejected request for user:{PASSWORD} with key {KEY}"
    return Reply(status=400, error_body={"error": {"message": message, "type": "invalid"}})


def with_password(server: FakeOpenAIServer) -> str:
    return server.base_url.replace("http://", f"http://user:{PASSWORD}@")


def test_the_config_knows_its_secrets_and_the_redactor_hides_them() -> None:
    config = JudgeConfig(model="m", base_url=f"http://u:{PASSWORD}@h/v1", api_key=KEY)
    assert set(secrets_of(config)) >= {KEY, PASSWORD}
    said = Redactor(secrets_of(config))(f"http://u:{PASSWORD}@h/v1 said {KEY} and {PASSWORD}")
    assert PASSWORD not in said and KEY not in said


def test_cli_records_never_hold_the_url_password(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_server.script(echoing(openai_server))
    out = tmp_path / "out.jsonl"
    env = {"OPENAI_BASE_URL": with_password(openai_server), "OPENAI_API_KEY": KEY}
    args = [
        "grade",
        str(write_jsonl(tmp_path / "in.jsonl", [case("a")])),
        "--rubric",
        "faithfulness",
    ]
    assert (
        main([*args, "-o", str(out), "--model", "judge-test-2024-01-01", "--no-cache"], env=env)
        == 1
    )
    text = out.read_text("utf-8")
    assert read_jsonl(out)[0]["status"] == "api_error"
    assert PASSWORD not in text and KEY not in text


def test_service_job_and_probe_records_never_hold_a_secret(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    config = load_service_config(
        None,
        {"JUDGE_TEST_KEY": KEY},
        data_dir=tmp_path / "data",
        judges={
            "model": {
                "model": "judge-test-2024-01-01",
                "base_url": with_password(openai_server),
                "api_key_env": "JUDGE_TEST_KEY",
                "max_retries": 0,
            }
        },
        use_cache=False,
    )
    openai_server.script(*[echoing(openai_server)] * 20)
    with InProcessService(config) as service, httpx.Client(base_url=service.base_url) as api:
        job = api.post("/v1/jobs", json={"rubric": "faithfulness", "cases": [case("a"), case("b")]})
        assert job.status_code == 202, job.text
        wait_for_job(api, job.json()["id"])
        records = api.get(f"/v1/jobs/{job.json()['id']}/records").text
        probe = api.post(
            "/v1/probes/repeat", json={"rubric": "faithfulness", "cases": [case("c")], "repeats": 2}
        )
    assert "api_error" in records
    for text in (records, probe.text, json.dumps(job.json())):
        assert PASSWORD not in text and KEY not in text
