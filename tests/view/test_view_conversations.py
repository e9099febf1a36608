"""Conversation records in the viewer's API: a record's case carries its transcript, and
the records filter by a tool the agent called (read from the case) and by a call the
trajectory verdict found missing (read from the record), with hostile names as plain
parameters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.view import create_view_app, open_viewer
from tests.view.conversations import conversations, records, write_run
from tests.view.support import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("conversations")
    write_run(root / "agent")
    viewer = open_viewer([root], index_dir=tmp_path_factory.mktemp("index"))
    with TestClient(create_view_app(viewer, token=TOKEN), base_url="http://127.0.0.1") as c:
        yield c
    viewer.engine.close()


def run_id(client: TestClient) -> str:
    (run,) = client.get("/api/runs", headers=AUTH).json()
    return str(run["id"])


def ids(client: TestClient, **params: Any) -> list[str]:
    response = client.get(f"/api/runs/{run_id(client)}/records", params=params, headers=AUTH)
    assert response.status_code == 200, response.text
    return [r["id"] for r in response.json()["records"]]


def called(case: dict[str, Any]) -> set[str]:
    return {
        c["function"]["name"] for m in case.get("messages", []) for c in m.get("tool_calls") or []
    }


@pytest.mark.parametrize("tool", ["get_weather", "search_fares", "book_train", "nope"])
def test_records_filter_by_a_tool_the_agent_called(client: TestClient, tool: str) -> None:
    expected = [c["id"] for c in conversations() if tool in called(c)]
    assert ids(client, tool=tool) == expected


@pytest.mark.parametrize("name", ["book_train", "get_weather", "search_fares"])
def test_records_filter_by_a_missing_call(client: TestClient, name: str) -> None:
    expected = [
        r["id"]
        for r in records()
        if any(m["name"] == name for m in ((r["verdict"] or {}).get("missing") or []))
    ]
    assert ids(client, missing=name) == expected


def test_the_filters_combine_with_the_others(client: TestClient) -> None:
    assert ids(client, tool="get_weather", missing="book_train") == ["trip-1"]
    assert ids(client, tool="get_weather", status="abstained") == []


@pytest.mark.parametrize("hostile", ["x' OR '1'='1", "a\\u0000b", "$.messages[*]", "%"])
def test_a_hostile_name_is_a_parameter_not_sql(client: TestClient, hostile: str) -> None:
    assert ids(client, tool=hostile) == []
    assert ids(client, missing=hostile) == []


def test_an_overlong_name_is_refused_with_a_reason(client: TestClient) -> None:
    response = client.get(
        f"/api/runs/{run_id(client)}/records", params={"tool": "t" * 300}, headers=AUTH
    )
    assert response.status_code == 400
    assert "tool" in response.json()["error"]["message"]


def test_a_record_brings_its_transcript(client: TestClient) -> None:
    response = client.get(f"/api/runs/{run_id(client)}/records/trip-1", headers=AUTH)
    assert response.status_code == 200
    detail = response.json()
    case = detail["case"]
    assert [m["role"] for m in case["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert case["expected_tool_calls"][1]["name"] == "book_train"
    assert detail["record"]["verdict"]["missing"][0]["name"] == "book_train"


@pytest.mark.parametrize("name", ["transcript.js", "transcript.css"])
def test_the_shared_transcript_files_are_served(client: TestClient, name: str) -> None:
    response = client.get(f"/static/{name}")
    assert response.status_code == 200
    assert "textContent" in response.text or name.endswith(".css")


def test_the_label_app_serves_the_same_transcript(tmp_path: Path) -> None:
    from judge.view.app import asset as view_asset  # noqa: F401  (the viewer's own files)
    from judge.web.assets import shared_asset

    assert b"judgeTranscript" in shared_asset("transcript.js")


def test_the_label_page_shows_an_empty_list_of_expected_calls() -> None:
    """`expected_tool_calls: []` says "no call expected": the blind page shows it (the
    agent's calls stand beside an empty list), it is not dropped as if unknown."""
    from judge.label.choices import case_view
    from judge.rubric import load_rubric
    from judge.schemas import Case

    chat = next(c for c in conversations() if c["id"] == "chat-4")
    view = case_view(
        load_rubric("trajectory"), Case.model_validate(chat | {"expected_tool_calls": []})
    )
    assert view["expected_tool_calls"] == []
    assert [m["role"] for m in view["messages"]] == ["user", "assistant"]
