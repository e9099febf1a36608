"""Conversation kinds end to end, with the loopback test server as the model judge:
records that keep every turn's verdict, a bad reply repaired, the cache keyed by the whole
transcript, resume, `judge compare` naming the conversation that regressed and
`judge calibrate` against human labels keyed by id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score

from judge.cli import main
from judge.testing import FakeOpenAIServer, Reply
from tests.conversation_judges_support import conversation, with_reply, with_tool_result
from tests.helpers import read_jsonl, write_jsonl

OFF_TOPIC = "Bananas are yellow."


def env_for(server: FakeOpenAIServer) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "JUDGE_MODEL": "judge-test-2024-01-01",
    }


def grade(server: FakeOpenAIServer, source: Path, out: Path, rubric: str, *extra: str) -> int:
    args = ["grade", str(source), "--rubric", rubric, "-o", str(out), *extra]
    return main(args, env=env_for(server))


def conversations() -> list[dict[str, Any]]:
    return [conversation("conv-1"), with_reply(conversation("conv-2"), 6, OFF_TOPIC)]


@pytest.mark.parametrize("rubric", ["turn_relevancy", "knowledge_retention", "role_adherence"])
def test_every_turn_verdict_is_kept_and_the_score_is_the_share_passing(
    openai_server: FakeOpenAIServer, tmp_path: Path, rubric: str
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", conversations())
    out = tmp_path / "out.jsonl"
    assert grade(openai_server, source, out, rubric, "--no-cache") == 0
    records = {r["id"]: r for r in read_jsonl(out)}
    assert openai_server.stats_dict()["requests"] == 2  # one request a conversation
    for record in records.values():
        assert record["status"] == "ok"
        assert [t["turn"] for t in record["verdict"]["turns"]] == [4, 6]
        passed = [t["verdict"] == "pass" for t in record["verdict"]["turns"]]
        assert record["score"] == sum(passed) / 2
    if rubric == "turn_relevancy":  # the off-topic reply fails its turn
        assert (records["conv-1"]["score"], records["conv-2"]["score"]) == (1.0, 0.5)
        assert records["conv-2"]["label"] == "fail"


def test_a_reply_that_skips_a_turn_is_repaired_or_kept_as_a_parse_error(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [conversation("conv-1")])
    skipped = {"turns": [{"turn": 4, "verdict": "pass", "reason": "ok"}]}
    openai_server.script(Reply(verdict=skipped), Reply(verdict=skipped))
    out = tmp_path / "out.jsonl"
    grade(openai_server, source, out, "turn_relevancy", "--no-cache")
    (record,) = read_jsonl(out)
    assert record["status"] == "parse_error" and record["score"] is None
    assert "missing [6]" in record["error"] and record["raw"]
    openai_server.script(Reply(verdict=skipped))  # the repair answers every listed turn
    assert (
        grade(openai_server, source, tmp_path / "again.jsonl", "turn_relevancy", "--no-cache") == 0
    )
    (repaired,) = read_jsonl(tmp_path / "again.jsonl")
    assert repaired["status"] == "ok" and len(repaired["verdict"]["turns"]) == 2


def test_task_completion_end_to_end(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    rows = [conversation("done"), with_reply(conversation("half"), 6, OFF_TOPIC)]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    assert grade(openai_server, source, out, "task_completion", "--no-cache") == 0
    records = {r["id"]: r for r in read_jsonl(out)}
    assert (records["done"]["label"], records["done"]["score"]) == ("completed", 1.0)
    assert (records["half"]["label"], records["half"]["score"]) == ("partial", 0.5)
    assert records["done"]["verdict"]["turns"] == [6]


def test_the_cache_is_keyed_by_the_whole_transcript(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", conversations())
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert grade(openai_server, source, tmp_path / "a.jsonl", "task_completion", *cache) == 0
    assert grade(openai_server, source, tmp_path / "b.jsonl", "task_completion", *cache) == 0
    assert openai_server.stats_dict()["requests"] == 2
    assert all(r["cached"] for r in read_jsonl(tmp_path / "b.jsonl"))
    changed = [with_tool_result(conversations()[0], '{"status": "lost"}'), conversations()[1]]
    source = write_jsonl(tmp_path / "changed.jsonl", changed)
    assert grade(openai_server, source, tmp_path / "c.jsonl", "task_completion", *cache) == 0
    assert openai_server.stats_dict()["requests"] == 3  # one tool result: one miss
    assert [r["cached"] for r in read_jsonl(tmp_path / "c.jsonl")] == [False, True]


def test_a_run_resumes_without_asking_again(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", conversations())
    out = tmp_path / "out.jsonl"
    assert grade(openai_server, source, out, "turn_relevancy", "--no-cache") == 0
    first = out.read_text("utf-8").split("\n")[0]
    out.write_text(first + "\n", "utf-8")  # as if killed after the first conversation
    assert grade(openai_server, source, out, "turn_relevancy", "--no-cache") == 0
    assert openai_server.stats_dict()["requests"] == 3
    assert [r["id"] for r in read_jsonl(out)] == ["conv-1", "conv-2"]


def test_compare_names_the_conversation_that_regressed(
    openai_server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = write_jsonl(tmp_path / "a.jsonl", [conversation("conv-1"), conversation("conv-2")])
    after = write_jsonl(tmp_path / "b.jsonl", conversations())
    assert grade(openai_server, before, tmp_path / "A.jsonl", "turn_relevancy", "--no-cache") == 0
    assert grade(openai_server, after, tmp_path / "B.jsonl", "turn_relevancy", "--no-cache") == 0
    capsys.readouterr()
    out = tmp_path / "compare.json"
    args = ["compare", str(tmp_path / "A.jsonl"), str(tmp_path / "B.jsonl"), "--json", str(out)]
    assert main(args, env={}) == 0
    result = json.loads(out.read_text("utf-8"))
    regressed = result["comparisons"][0]["regressed"]["turn_relevancy"]
    assert [(c["id"], c["a"], c["b"]) for c in regressed] == [("conv-2", 1.0, 0.5)]
    assert "- turn_relevancy (1): conv-2 (1.000 -> 0.500)" in capsys.readouterr().out


def test_calibrate_against_human_labels_keyed_by_id(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    rows = [
        with_reply(conversation(f"c{i}"), 6, OFF_TOPIC) if i % 3 == 0 else conversation(f"c{i}")
        for i in range(9)
    ]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    assert grade(openai_server, source, out, "turn_relevancy", "--no-cache") == 0
    human = [{"id": f"c{i}", "label": "fail" if i in (0, 3, 4) else "pass"} for i in range(9)]
    labels = write_jsonl(tmp_path / "human.jsonl", list(reversed(human)))
    report = tmp_path / "report"
    assert main(["calibrate", str(out), str(labels), "-o", str(report)], env={}) == 0
    result = json.loads((report / "calibration.json").read_text("utf-8"))
    assert result["n"] == 9
    assert (result["unmatched"]["judge_only"], result["unmatched"]["human_only"]) == (0, 0)
    # rows human, columns judge: c4 (human fail, judge pass) and c6 (the other way) differ
    confusion = result["confusion_matrix"]
    matrix = dict(zip(confusion["labels"], confusion["matrix"], strict=True))
    assert matrix["fail"] == [2, 1] and matrix["pass"] == [1, 5]
    by_id = {r["id"]: r["label"] for r in read_jsonl(out)}
    ids = [h["id"] for h in human]
    expected = cohen_kappa_score([h["label"] for h in human], [by_id[i] for i in ids])
    assert result["kappa"] == pytest.approx(expected, abs=1e-12)
