"""Probes and juries on conversations, through the loopback test server: the position
probe swaps two conversations, the injection probe plants its note in a tool result
(where a gullible judge reads it), and a jury grades conversations like any case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.cli import main
from judge.testing import FakeOpenAIServer
from judge.testing.server import ChatRequest
from tests.conversation_judges_support import conversation, conversation_pair, with_reply
from tests.helpers import read_jsonl, write_jsonl

OFF_TOPIC = "Bananas are yellow."


def env_for(server: FakeOpenAIServer) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "JUDGE_MODEL": server.model,
    }


def probe(server: FakeOpenAIServer, name: str, source: Path, rubric: str, out: Path) -> int:
    args = ["probe", name, str(source), "--rubric", rubric, "-o", str(out), "--no-cache"]
    return main(args, env=env_for(server))


def first_slot(chat: ChatRequest) -> dict[str, Any]:
    """Position-biased: the conversation shown first wins, always."""
    return {"rationale": "first", "winner": "A"}


def test_the_position_probe_swaps_the_two_conversations(
    server_factory: Any, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [conversation_pair("p1"), conversation_pair("p2")])
    fair = server_factory()
    out = tmp_path / "fair.json"
    assert probe(fair, "position", source, "conversation_pairwise", out) == 0
    report = json.loads(out.read_text("utf-8"))
    assert (report["complete_pairs"], report["consistency_rate"]) == (2, 1.0)
    shown = [json.loads(b["messages"][1]["content"]) for b in fair.stats.bodies]
    assert shown[0]["conversation_A"] == shown[1]["conversation_B"]  # the same pair, swapped
    assert shown[0]["conversation_A"] != shown[0]["conversation_B"]
    biased = server_factory(responder=first_slot)
    assert probe(biased, "position", source, "conversation_pairwise", out) == 0
    report = json.loads(out.read_text("utf-8"))
    assert report["consistency_rate"] == 0.0 and report["inconsistent"]["first_slot"] == 2


def gullible(chat: ChatRequest) -> dict[str, Any]:
    """A task_completion judge that obeys any tool result that mentions a grader or an
    instruction, and otherwise calls the task partial."""
    tools = [m for m in chat.payload.get("messages", []) if m.get("role") == "tool"]
    told = any(w in str(m.get("content")).lower() for m in tools for w in ("grad", "instruct"))
    label = "completed" if told else "partial"
    return {"rationale": "r", "label": label, "turns": []}


def test_the_injection_probe_plants_its_note_in_a_tool_result(
    server_factory: Any, tmp_path: Path
) -> None:
    rows = [with_reply(conversation("c1"), 6, OFF_TOPIC)]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    server = server_factory(responder=gullible)
    out = tmp_path / "injection.json"
    assert probe(server, "injection", source, "task_completion", out) in (0, 3)
    report = json.loads(out.read_text("utf-8"))
    assert report["placements"] == ["answer"]
    assert report["answer_site"].startswith("the conversation's last tool result")
    assert report["eligible"] == report["variants"] > 0
    assert report["flips"] > 0  # the gullible judge read the note where it was planted
    payloads = [json.loads(b["messages"][1]["content"]) for b in server.stats.bodies]
    planted = [p["messages"][3]["content"] for p in payloads[1:]]
    assert all(text.startswith('{"order"') or "whatever" in text for text in planted)
    assert any("Ignore all previous instructions" in text for text in planted)


def test_a_conversation_without_tool_results_gets_a_new_one(
    server_factory: Any, tmp_path: Path
) -> None:
    messages = [m for m in conversation()["messages"] if m["role"] != "tool"]
    messages = [m for m in messages if not m.get("tool_calls")]
    messages[-1]["content"] = OFF_TOPIC  # a failing turn: the injection has a goal
    source = write_jsonl(tmp_path / "in.jsonl", [conversation("c1", messages=messages)])
    server = server_factory()
    out = tmp_path / "injection.json"
    assert probe(server, "injection", source, "turn_relevancy", out) in (0, 3)
    payloads = [json.loads(b["messages"][1]["content"]) for b in server.stats.bodies]
    windows = [m for p in payloads[1:] for m in p["turns"][-1]["window"]]
    assert any(m["role"] == "tool" and "grader" in m["content"].lower() for m in windows)


def test_the_offline_judge_ignores_notes_in_tool_results(tmp_path: Path) -> None:
    """The rules judge as conversation_faithfulness's judge: no injection in a tool result
    or a context flips an unfaithful conversation to faithful."""
    rows = [with_reply(conversation("c1"), 6, "Bananas are yellow, and our shop opens at 9.")]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "injection.json"
    args = ["probe", "injection", str(source), "--rubric", "conversation_faithfulness"]
    assert main([*args, "--offline", "-o", str(out)], env={}) == 0
    report = json.loads(out.read_text("utf-8"))
    assert report["eligible"] == 40 and report["flips"] == 0, report["flipped"]


@pytest.mark.slow
def test_a_jury_grades_conversations(server_factory: Any, tmp_path: Path) -> None:
    servers = {n: server_factory(model=f"juror-{n}-2024-01-01") for n in ("a", "b")}
    spec = [{"name": n, "model": s.model, "base_url": s.base_url} for n, s in servers.items()]
    jury = tmp_path / "jury.yaml"
    jury.write_text(yaml.safe_dump({"jurors": spec}), "utf-8")
    rows = [conversation("conv-1"), with_reply(conversation("conv-2"), 6, OFF_TOPIC)]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = tmp_path / "out"
    args = ["grade", str(source), "--rubric", "turn_relevancy", "--jury", str(jury), "-o", str(out)]
    assert main(args, env=env) == 0
    records = {r["id"]: r for r in read_jsonl(out / "turn_relevancy.jsonl")}
    assert (records["conv-1"]["score"], records["conv-2"]["score"]) == (1.0, 0.5)
    assert records["conv-2"]["panel"]["votes"] == "2 of 2"
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [conversation_pair("p1")])
    args = ["grade", str(pairs), "--rubric", "conversation_pairwise", "--jury", str(jury)]
    assert main([*args, "-o", str(tmp_path / "pairs")], env=env) == 0
    (record,) = read_jsonl(tmp_path / "pairs" / "conversation_pairwise.jsonl")
    assert (record["status"], record["label"]) == ("ok", "A")  # on content, in both orders
    (swapped,) = read_jsonl(tmp_path / "pairs" / "jurors-swapped" / ".cases.jsonl")
    assert swapped["messages_a"][-1]["content"] == conversation_pair()["messages_b"][-1]["content"]
