"""`judge watch --certificate` (issue 50): each graded verdict is decided at the
certificate's threshold or escalated; with `--label-dir` every escalated case is queued
for people whatever the label rate, first in every annotator's queue; a certificate made
for another judge is refused before anything is graded.

The rules judge writes no confidence (another part of the issue gives model judges one),
so its `evaluate` is wrapped to plant one per case id."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.engine.rules import RulesJudge
from judge.label.production import production_db, queued
from judge.label.queue import Queues
from judge.label.store import LabelStore
from judge.rubric import load_rubric
from tests.traces.test_watch import Traffic

RUBRIC = load_rubric("faithfulness")
THRESHOLD = 0.6


def planted(case_id: str) -> float:
    return int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:4], "big") / 2**32


@pytest.fixture
def confident(monkeypatch: pytest.MonkeyPatch) -> None:
    real = RulesJudge.evaluate

    async def evaluate(self: RulesJudge, rubric: Any, case: Any) -> Any:
        outcome = await real(self, rubric, case)
        outcome.confidence, outcome.confidence_source = planted(case.id), "verbal"
        return outcome

    monkeypatch.setattr(RulesJudge, "evaluate", evaluate)


def certificate(path: Path, model: str = "rules") -> Path:
    rubric = {"id": RUBRIC.id, "version": RUBRIC.version, "sha256": RUBRIC.sha256}
    rung = {"judge": {"model": model}, "threshold": THRESHOLD, "confidence_source": "verbal"}
    body = {"format": "llm-judge-certificate/1", "agreement": 0.9, "delta": 0.1, "n": 100}
    body |= {"rubric": rubric, "rungs": [rung], "certified": True}
    path.write_text(json.dumps(body), "utf-8")
    return path


def test_escalated_cases_are_queued_for_people_first(tmp_path: Path, confident: None) -> None:
    traffic = Traffic(tmp_path / "traces.jsonl")
    traffic.send(16)
    folder, labels = tmp_path / "watch", tmp_path / "labels"
    argv = ["watch", "--otlp", str(traffic.path), "--rubric", "faithfulness", "-o", str(folder)]
    argv += ["--once", "--label-rate", "0.3", "--label-dir", str(labels)]
    assert main([*argv, "--certificate", str(certificate(tmp_path / "cert.json"))]) == 0
    records = [json.loads(x) for x in (folder / "faithfulness.jsonl").read_text().splitlines()]
    escalated = {r["id"] for r in records if r["status"] == "escalated"}
    assert escalated == {i for i in traffic.ids if planted(i) < THRESHOLD}
    assert 0 < len(escalated) < len(traffic.ids)
    for record in records:
        assert record["certificate"]
        if record["id"] not in escalated:
            assert record["decided_by"] == {"rung": 1, "model": "rules"}
        else:
            assert "certified threshold 0.6" in record["error"] and record["label"] is None
    store = LabelStore(production_db(labels, RUBRIC))
    try:
        held = {case_id for case_id, _ in store.outline()}
        drawn = {i for i in traffic.ids if i not in escalated and queued(0, i, 0.3)}
        assert held == escalated | drawn
        order = Queues(store, 0).order("ana")
        assert set(order[: len(escalated)]) == escalated
    finally:
        store.close()


def test_a_certificate_for_another_judge_is_refused(tmp_path: Path, capsys: Any) -> None:
    traffic = Traffic(tmp_path / "traces.jsonl")
    traffic.send(2)
    folder = tmp_path / "watch"
    cert = certificate(tmp_path / "cert.json", model="gpt-4o")
    argv = ["watch", "--otlp", str(traffic.path), "--rubric", "faithfulness", "-o", str(folder)]
    assert main([*argv, "--once", "--certificate", str(cert)]) == 2
    assert "rung 1 was certified for another judge" in capsys.readouterr().err
    assert not (folder / "faithfulness.jsonl").exists()
