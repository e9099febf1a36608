"""The viewer's drift API on examples/drift: its figures equal `judge drift --json`'s for the
same files (window by count and by week), each window lists its cases, a window with too
few labels says so, and a viewer without labels refuses in one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.cli import main
from judge.view import create_view_app, open_viewer
from tests.helpers import REPO
from tests.view.support import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}
RECORDS = REPO / "examples" / "drift" / "graded.jsonl"
LABELS = REPO / "examples" / "drift" / "labels.csv"
# what judge drift says of its files and windowing, beside the figures compared here
FIGURES = ("n", "labels", "coefficient", "weights", "min_labels", "reference", "alarm", "status")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    viewer = open_viewer([RECORDS], labels=LABELS, index_dir=tmp_path_factory.mktemp("index"))
    with TestClient(create_view_app(viewer, token=TOKEN), base_url="http://127.0.0.1") as c:
        yield c
    viewer.engine.close()


def drift(client: TestClient, status: int = 200, **params: Any) -> dict[str, Any]:
    run = client.get("/api/runs", headers=AUTH).json()[0]["id"]
    response = client.get(f"/api/runs/{run}/drift", params=params, headers=AUTH)
    assert response.status_code == status, response.text
    return response.json()


def command(tmp_path: Path, *flags: str) -> dict[str, Any]:
    out = tmp_path / "drift.json"
    main(["drift", str(RECORDS), "--labels", str(LABELS), *flags, "--json", "-o", str(out)])
    return json.loads(out.read_text())


@pytest.mark.parametrize(
    ("params", "flags"),
    [
        ({"window": 60}, ("--window", "60")),
        ({"by": "week"}, ("--by", "week")),
        ({"by": "week", "reference": "past"}, ("--by", "week", "--reference", "past")),
    ],
)
def test_figures_equal_judge_drift_json(
    client: TestClient, tmp_path: Path, params: dict[str, Any], flags: tuple[str, ...]
) -> None:
    shown, expected = drift(client, **params), command(tmp_path, *flags)
    assert {k: shown[k] for k in FIGURES} == {k: expected[k] for k in FIGURES}
    assert [{k: v for k, v in w.items() if k != "ids"} for w in shown["windows"]] == expected[
        "windows"
    ]
    assert shown["time_source"] == expected["time_source"]
    assert shown["alarm"]["fired"] and shown["status"]["verdict"] == "alarm"


def test_each_window_lists_its_cases_in_file_order(client: TestClient) -> None:
    ids = [json.loads(line)["id"] for line in RECORDS.read_text().splitlines()]
    labelled = {line.split(",")[0] for line in LABELS.read_text().splitlines()[1:]}
    ids = [i for i in ids if i in labelled]
    shown = drift(client, window=50)
    assert [i for w in shown["windows"] for i in w["ids"]] == ids
    for window in shown["windows"]:
        assert set(window["disagreements"]) <= set(window["ids"])


def test_a_window_with_too_few_labels_says_so(client: TestClient) -> None:
    last = drift(client, window=50)["windows"][-1]
    assert last["n"] == 10 and last["enough"] is False and last["alarm"] is False
    assert last["needs"] == "10 labels, needs 30 (20 more)"
    shown = drift(client, window=60, min_labels=100)
    assert shown["status"]["verdict"] == "too_few_labels"
    assert all(not w["enough"] for w in shown["windows"])


def test_without_labels_or_with_bad_choices_one_line(client: TestClient, tmp_path: Path) -> None:
    assert "not both" in drift(client, 400, window=5, by="week")["error"]["message"]
    assert "no such window" in drift(client, 422, reference="9")["error"]["message"]
    viewer = open_viewer([RECORDS], index_dir=tmp_path / "index")
    with TestClient(create_view_app(viewer, token=TOKEN), base_url="http://127.0.0.1") as bare:
        assert "--labels" in drift(bare, 422, window=60)["error"]["message"]
    viewer.engine.close()


def test_the_route_needs_the_token(client: TestClient) -> None:
    run = client.get("/api/runs", headers=AUTH).json()[0]["id"]
    assert client.get(f"/api/runs/{run}/drift").status_code == 401
