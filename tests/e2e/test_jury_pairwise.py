"""A pairwise rubric in a jury through the loopback test server: every juror judges each
pair in both orders; a juror whose two orders disagree (a position-biased one) votes
`tie`, marked inconsistent, and the panel's vote is on content, whatever order the
answers came in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.cli import main
from judge.testing.server import ChatRequest
from tests.helpers import read_jsonl

# a jury end to end against juror servers (.ci/slow runs it)
pytestmark = pytest.mark.slow

N = 12


def prefers_good(chat: ChatRequest) -> dict[str, Any]:
    """Picks the answer that says `good`, wherever it is shown."""
    first = "good" in str(chat.payload.get("answer_A"))
    return {"rationale": "content", "winner": "A" if first else "B"}


def first_slot(chat: ChatRequest) -> dict[str, Any]:
    """Position-biased: the answer shown first, always."""
    return {"rationale": "first", "winner": "A"}


def test_each_juror_votes_its_two_orders_resolution(tmp_path: Path, server_factory: Any) -> None:
    servers = {
        "a": server_factory(responder=prefers_good, model="juror-a-2024-01-01"),
        "b": server_factory(responder=prefers_good, model="juror-b-2024-01-01"),
        "c": server_factory(responder=first_slot, model="juror-c-2024-01-01"),
    }
    cases = tmp_path / "pairs.jsonl"
    with cases.open("w", encoding="utf-8") as handle:
        for i in range(N):  # the good answer is answer_a in even cases, answer_b in odd ones
            good, bad = f"a good answer {i}", f"a poor answer {i}"
            pair = (good, bad) if i % 2 == 0 else (bad, good)
            row = {"id": f"p{i}", "question": f"question {i}?", "answer_a": pair[0]}
            handle.write(json.dumps({**row, "answer_b": pair[1]}) + "\n")
    spec = [{"name": n, "model": s.model, "base_url": s.base_url} for n, s in servers.items()]
    jury = tmp_path / "jury.yaml"
    jury.write_text(yaml.safe_dump({"jurors": spec}), "utf-8")
    out = tmp_path / "out"
    args = ["grade", str(cases), "--rubric", "pairwise", "--jury", str(jury), "-o", str(out)]
    args += ["--summary", str(out / "summary.json")]
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert main(args, env=env) == 0
    for server in servers.values():  # both orders of every pair, once each
        assert server.stats.requests == 2 * N

    records = read_jsonl(out / "pairwise.jsonl")
    assert [r["id"] for r in records] == [f"p{i}" for i in range(N)]
    for i, record in enumerate(records):
        winner = "A" if i % 2 == 0 else "B"  # on content: A is the case's answer_a
        assert (record["status"], record["label"]) == ("ok", winner)
        votes = {v["juror"]: v for v in record["panel"]["jurors"]}
        assert votes["a"]["label"] == votes["b"]["label"] == winner
        assert votes["a"]["inconsistent"] is votes["b"]["inconsistent"] is False
        assert votes["c"]["label"] == "tie" and votes["c"]["inconsistent"] is True
        assert votes["c"]["orders"] == {"ab": "A", "ba": "A"}
        assert record["panel"]["outcome"] == "majority" and record["panel"]["votes"] == "3 of 3"
    for name in servers:  # each order is a single judge's file
        assert len(read_jsonl(out / "jurors" / f"{name}.jsonl")) == N
        assert len(read_jsonl(out / "jurors-swapped" / f"{name}.jsonl")) == N
    cost = json.loads((out / "summary.json").read_text("utf-8"))["jury"]["cost"]
    assert {n: j["requests"] for n, j in cost["jurors"].items()} == {n: 2 * N for n in servers}

    for server in servers.values():
        server.reset_stats()
    assert main(args, env=env) == 0
    assert sum(s.stats.requests for s in servers.values()) == 0
    assert read_jsonl(out / "pairwise.jsonl") == records
