"""Issue 51, item 6, through the viewer's JSON API: the records list gives each computed
verdict's reason (missing and unexpected calls, the schema error) and the case's goal; a
trajectory verdict says how its calls were paired; the RAG two-by-two is offered only for a
run whose group gives both signals; no field's text reaches the page as markup."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.cli import main
from judge.view import create_view_app, open_viewer
from tests.view.support import TOKEN, make_runs, read_jsonl, write_jsonl

AUTH = {"Authorization": f"Bearer {TOKEN}"}
EXAMPLES = Path(__file__).parents[2] / "examples" / "conversations.jsonl"
HOSTILE = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("agents")
    make_runs(root / "rag-and-more")
    agent = root / "agent"
    agent.mkdir()
    cases = read_jsonl(EXAMPLES)
    cases[0]["goal"] = HOSTILE + " refund order A-17"
    write_jsonl(agent / "cases.jsonl", cases)
    for rubric in ("trajectory", "tool_arguments"):
        argv = ["grade", str(agent / "cases.jsonl"), "--rubric", rubric, "--offline"]
        assert main([*argv, "-o", str(agent / f"{rubric}.jsonl")]) == 0
    viewer = open_viewer([root], index_dir=tmp_path_factory.mktemp("index"))
    with TestClient(create_view_app(viewer, token=TOKEN), base_url="http://127.0.0.1") as c:
        yield c
    viewer.engine.close()


def _runs(client: TestClient) -> dict[str, dict[str, Any]]:
    runs = client.get("/api/runs", headers=AUTH).json()
    return {f"{Path(r['path']).parent.name}/{r['rubric']}": r for r in runs}


def _page(client: TestClient, key: str) -> dict[str, Any]:
    run = _runs(client)[key]
    response = client.get(f"/api/runs/{run['id']}/records", params={"limit": 50}, headers=AUTH)
    assert response.status_code == 200
    return response.json()


def test_the_records_list_gives_each_trajectory_reason_and_goal(client) -> None:
    page = _page(client, "agent/trajectory")
    cases = {c["id"]: c for c in read_jsonl(EXAMPLES)}
    assert page["goals"]["refund-001"] == HOSTILE + " refund order A-17"  # data, as is
    assert all(
        page["goals"][i] == c["goal"]
        for i, c in cases.items()
        if c.get("goal") and i != "refund-001"
    )
    reasons = page["reasons"]
    for text in page["records"]:
        verdict = text["verdict"] or {}
        reason = reasons.get(text["id"], "")
        for call in verdict.get("missing") or []:
            assert "missing: " in reason and f"{call['name']}(" in reason
        for call in verdict.get("unexpected") or []:
            assert call["name"] in reason and "unexpected: " in reason
        if text["status"] == "abstained":
            assert reason == text["error"]
    assert reasons["refund-002"].startswith("missing: lookup_order(")
    assert reasons["account-001"].startswith("unexpected: send_email(")


def test_the_records_list_names_the_call_that_broke_its_schema(client) -> None:
    page = _page(client, "agent/tool_arguments")
    records = {r["id"]: r for r in page["records"]}
    broken = [i for i, r in records.items() if (r["verdict"] or {}).get("invalid")]
    assert broken, "the examples hold a call that breaks its schema"
    for case_id in broken:
        first = records[case_id]["verdict"]["invalid"][0]
        reason = page["reasons"][case_id]
        assert reason.startswith(f"call {first['index']} {first['name']}: ")
        assert first["errors"][0][:40] in reason


def test_the_calls_are_paired_as_the_verdict_matched_them(client) -> None:
    page = _page(client, "agent/trajectory")
    cases = {c["id"]: c for c in read_jsonl(EXAMPLES)}
    for record in page["records"]:
        if record["status"] != "ok":
            continue
        verdict, case = record["verdict"], cases[record["id"]]
        made = [c["function"] for m in case["messages"] for c in m.get("tool_calls") or []]
        expected = case["expected_tool_calls"]
        assert len(verdict["paired"]) == verdict["paired_calls"]
        for a, e in verdict["paired"]:
            assert made[a]["name"] == expected[e]["name"]
        unpaired = [
            made[i]["name"] for i in range(len(made)) if i not in {a for a, _ in verdict["paired"]}
        ]
        assert sorted(unpaired) == sorted(c["name"] for c in verdict["unexpected"])


def test_the_rag_two_by_two_is_offered_only_where_it_applies(client) -> None:
    runs = _runs(client)
    assert runs["rag/retrieval"]["rag"] and runs["rag/faithfulness"]["rag"]
    assert not runs["agent/trajectory"]["rag"] and not runs["agent/tool_arguments"]["rag"]
    assert not runs["base/faithfulness"]["rag"]  # a faithfulness run alone: one signal


def test_no_field_reaches_the_page_as_markup(client) -> None:
    html = client.get("/", headers=AUTH).text
    assert HOSTILE not in html
    script = client.get("/static/view.js", headers=AUTH).text
    assert "innerHTML" not in script  # every text goes in through text nodes
    transcript = client.get("/static/transcript.js", headers=AUTH).text
    assert "innerHTML" not in transcript
    raw = client.get(f"/api/runs/{_runs(client)['agent/trajectory']['id']}/records", headers=AUTH)
    assert raw.headers["content-type"].startswith("application/json")
    assert json.loads(raw.text)["goals"]["refund-001"].startswith("<script>")  # JSON, not HTML
