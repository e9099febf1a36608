"""A judge reply that is deeply nested JSON (a broken `[[[[...` generation) is one
`parse_error` with its raw text capped, and every other case is graded: for a single judge,
for one juror of a jury, for `judge serve`'s /v1/grade and for a job (issue 33, defect 1:
each used to die of a RecursionError, exit 1 with nothing written, or a bare 500)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from judge.cli import main
from judge.engine.parse import MAX_RAW_CHARS
from judge.service.config import load_service_config
from judge.testing import FakeOpenAIServer, Reply
from judge.testing.server import ChatRequest, default_verdict
from tests.e2e.test_jury import RUBRICS
from tests.helpers import case, read_jsonl, write_jsonl
from tests.test_service_support import InProcessService, wait_for_job

POISON = "poisoned-case"
# held-out shapes: other depths, arrays and objects, in a fence, after prose
NESTED = {
    "arrays": "[" * 5_000 + "]" * 5_000,
    "objects": '{"a":' * 3_000 + "1" + "}" * 3_000,
    "mixed-in-prose": 'Verdict: {"claims": ' + '[{"x":' * 1_500 + "0" + "}]" * 1_500 + "}",
    "fenced": "```json\n" + "[" * 100_000 + "\n```",
}


def poisoning(content: str) -> Any:
    """A responder: `content` for the case whose answer names POISON, verdicts otherwise."""

    def respond(chat: ChatRequest) -> Reply | dict[str, Any]:
        if POISON in chat.case_text:
            return Reply(content=content)
        return default_verdict(chat)

    return respond


def cases() -> list[dict[str, Any]]:
    rows = [case(f"c{i}") for i in range(5)]
    rows[2]["answer"] += f" ({POISON})"
    return rows


def check_records(records: list[dict[str, Any]], content: str) -> None:
    assert [r["id"] for r in records] == [f"c{i}" for i in range(5)]
    bad = records[2]
    assert bad["status"] == "parse_error", bad
    assert "nested more than" in bad["error"]
    assert len(bad["raw"]) <= MAX_RAW_CHARS + 100
    assert bad["raw"].startswith(content[:100])
    assert all(r["status"] == "ok" for i, r in enumerate(records) if i != 2)


@pytest.mark.parametrize("shape", sorted(NESTED))
def test_a_single_judge(tmp_path: Path, server_factory: Any, shape: str) -> None:
    server = server_factory(responder=poisoning(NESTED[shape]))
    out = tmp_path / "out.jsonl"
    args = ["grade", str(write_jsonl(tmp_path / "in.jsonl", cases())), "--rubric"]
    args += ["faithfulness", "-o", str(out), "--max-error-rate", "0.5", "--no-cache"]
    args += ["--model", server.model, "--base-url", server.base_url]
    assert main(args, env={"OPENAI_API_KEY": "sk-test"}) == 0
    check_records(read_jsonl(out), NESTED[shape])


def test_one_juror_of_a_jury(tmp_path: Path, server_factory: Any) -> None:
    content = NESTED["objects"]
    good = server_factory(model="juror-a-2024-01-01")
    bad = server_factory(responder=poisoning(content), model="juror-b-2024-01-01")
    jurors = [
        {"name": name, "model": s.model, "base_url": s.base_url, "api_key_env": "JUROR_KEY"}
        for name, s in (("a", good), ("b", bad), ("c", good))
    ]
    jury = tmp_path / "jury.yaml"
    jury.write_text(yaml.safe_dump({"jurors": jurors}), "utf-8")
    out = tmp_path / "out"
    args = ["grade", str(write_jsonl(tmp_path / "in.jsonl", cases())), "--rubric"]
    args += ["faithfulness", "--jury", str(jury), "-o", str(out), "--max-error-rate", "1"]
    assert main([*args, "--no-cache"], env={"JUROR_KEY": "sk-test"}) == 0
    records = read_jsonl(out / "faithfulness.jsonl")
    assert all(r["status"] == "ok" for r in records)  # two of three jurors still agree
    juror_b = read_jsonl(out / "jurors" / "b.jsonl")
    check_records(juror_b, content)


def service_config(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    path = tmp_path / "service.yaml"
    config = {
        "judges": {"m": {"model": server.model, "base_url": server.base_url}},
        "data_dir": str(tmp_path / "data"),
        "cache_dir": str(tmp_path / "service-cache"),
        "rubrics_dirs": [str(RUBRICS)],
    }
    path.write_text(yaml.safe_dump(config), "utf-8")
    return path


def test_the_service_grade_and_a_job(tmp_path: Path, server_factory: Any) -> None:
    content = NESTED["arrays"]
    server = server_factory(responder=poisoning(content))
    config = load_service_config(service_config(tmp_path, server), {})
    body = {"rubric": "faithfulness", "cases": cases()}
    with InProcessService(config) as service, httpx.Client(base_url=service.base_url) as api:
        response = api.post("/v1/grade", json=body)
        assert response.status_code == 200, response.text
        check_records(response.json()["records"], content)

        created = api.post("/v1/jobs", json={**body, "cases": cases()})
        assert created.status_code == 202, created.text
        state = wait_for_job(api, created.json()["id"])
        assert state["status"] == "done", state
        job = api.get(f"/v1/jobs/{created.json()['id']}/records")
        check_records([json.loads(line) for line in job.text.splitlines()], content)


def test_a_nested_service_body_is_a_json_error(tmp_path: Path, server_factory: Any) -> None:
    server = server_factory()
    config = load_service_config(service_config(tmp_path, server), {})
    deep_case = json.dumps(case("c0"))[:-1] + ', "metadata": ' + "[" * 5000 + "]" * 5000 + "}"
    body = '{"rubric": "faithfulness", "cases": [' + deep_case + "]}"
    headers = {"content-type": "application/json"}
    with InProcessService(config) as service, httpx.Client(base_url=service.base_url) as api:
        for path in ("/v1/grade", "/v1/jobs"):
            response = api.post(path, content=body, headers=headers)
            assert response.status_code in (400, 422), (path, response.text)
            assert "error" in response.json()
