"""`judge serve` grades conversation cases: POST /v1/grade with `messages`, with a model
judge (the loopback test server) for conversation_faithfulness and turn_relevancy; a
conversation out of order is a 422 naming the case."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from judge.service import create_app, load_service_config
from judge.testing import FakeOpenAIServer
from tests.conversation_judges_support import conversation, with_reply

# the service's end-to-end group (an app with a judge, a few seconds): run by .ci/slow
pytestmark = pytest.mark.slow


def test_grade_conversations_over_http(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    config = load_service_config(
        None,
        {"JUDGE_TEST_KEY": "sk-test"},
        data_dir=tmp_path / "data",
        judges={
            "model": {
                "model": "judge-test-2024-01-01",
                "base_url": openai_server.base_url,
                "api_key_env": "JUDGE_TEST_KEY",
            }
        },
        use_cache=False,
    )
    cases = [conversation("c1"), with_reply(conversation("c2"), 6, "It arrives in 9 days.")]
    with TestClient(create_app(config)) as api:
        offline = api.post(
            "/v1/grade", json={"rubric": "conversation_faithfulness", "cases": cases}
        )
        body = {"rubric": "turn_relevancy@1", "judge": "model", "cases": cases}
        model = api.post("/v1/grade", json=body)
        broken = conversation("bad")
        broken["messages"] = broken["messages"][3:]  # a tool result with no call before it
        refused = api.post("/v1/grade", json={"rubric": "turn_relevancy", "cases": [broken]})
    assert offline.status_code == 200, offline.text
    records = offline.json()["records"]
    assert [(r["id"], r["label"]) for r in records] == [("c1", "faithful"), ("c2", "unfaithful")]
    assert model.status_code == 200, model.text
    records = model.json()["records"]
    assert [r["status"] for r in records] == ["ok", "ok"]
    assert [[t["turn"] for t in r["verdict"]["turns"]] for r in records] == [[4, 6], [4, 6]]
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert "cases[0]" in error["message"] and "no tool call before it" in error["message"]
