"""`judge serve` with a certified judge (issue 50): the service's configuration names a
certificate file for a judge (relative to the configuration); its verdicts below the
certified threshold come back `escalated` with the reason, the rest name their rung and
every record the certificate's hash; a request for another rubric is refused (422), and a
bad certificate stops the server at start (exit 2, naming the file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from judge.engine.certificate import certificate_hash
from judge.engine.outcome import Outcome
from judge.errors import UsageError
from judge.kinds.faithfulness import FaithfulnessVerdict
from judge.rubric import Rubric, load_rubric
from judge.schemas import Case, JudgeInfo
from judge.service import create_app, load_service_config
from tests.helpers import case

RUBRIC = load_rubric("faithfulness")
SURE = {"c1": 0.95, "c2": 0.4, "c3": 0.81}  # the scripted judge's confidence per case


class Confident:
    """A judge answering one supported claim per case, with a confidence per id."""

    name = "scripted"

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        self.asked.append(case.id)
        verdict = FaithfulnessVerdict.model_validate(
            {"claims": [{"claim": "c", "verdict": "supported", "evidence": "e"}]}
        )
        info = JudgeInfo(model="scripted", output_mode="json_schema")
        return Outcome("ok", info, verdict=verdict, confidence=SURE[case.id])

    def cache_identity(self) -> dict[str, Any] | None:
        return None

    async def aclose(self) -> None:
        return None


def write_certificate(path: Path, rubric: Rubric = RUBRIC) -> dict[str, Any]:
    body = {
        "format": "llm-judge-certificate/1",
        "agreement": 0.9,
        "delta": 0.05,
        "n": 300,
        "rubric": {"id": rubric.id, "version": rubric.version, "sha256": rubric.sha256},
        "rungs": [{"judge": {"model": "scripted"}, "threshold": 0.8}],
        "certified": True,
    }
    path.write_text(json.dumps(body), "utf-8")
    return body


def test_a_certified_judge_escalates_what_it_is_unsure_of(tmp_path: Path) -> None:
    body = write_certificate(tmp_path / "cert.json")
    conf = tmp_path / "service.yaml"
    conf.write_text(yaml.safe_dump({"judges": {"sure": {"certificate": "cert.json"}}}), "utf-8")
    config = load_service_config(conf, {}, data_dir=tmp_path / "data", cache_dir=None)
    judge = Confident()
    with TestClient(create_app(config, backends={"sure": judge})) as api:
        cases = [case(i) for i in SURE]
        reply = api.post("/v1/grade", json={"rubric": "faithfulness", "cases": cases})
        assert reply.status_code == 200, reply.text
        records = reply.json()["records"]
        assert [r["status"] for r in records] == ["ok", "escalated", "ok"]
        assert {r["certificate"] for r in records} == {certificate_hash(body)}
        assert records[0]["decided_by"] == {"rung": 1, "model": "scripted"}
        assert records[1]["error"] == "confidence 0.4 below rung 1's certified threshold 0.8"
        assert records[1]["label"] is None and "decided_by" not in records[1]
        summary = reply.json()["summary"]
        assert summary["status"] == {"escalated": 1, "ok": 2} and summary["scored"] == 2

        other = api.post("/v1/grade", json={"rubric": "relevance", "cases": cases})
        assert other.status_code == 422
        error = other.json()["error"]
        assert error["type"] == "not_certified" and error["field"] == "rubric"
        assert "was made for rubric faithfulness@1" in error["message"]
        assert str(tmp_path) not in error["message"]  # no server path in a reply
    assert judge.asked == list(SURE)


def test_a_bad_certificate_stops_the_server_at_start(tmp_path: Path) -> None:
    (tmp_path / "cert.json").write_text("[1, 2", "utf-8")
    conf = tmp_path / "service.yaml"
    conf.write_text(yaml.safe_dump({"judges": {"sure": {"certificate": "cert.json"}}}), "utf-8")
    with pytest.raises(UsageError, match="judge .sure.: certificate .*cert.json: not JSON"):
        load_service_config(conf, {}, data_dir=tmp_path / "data")
