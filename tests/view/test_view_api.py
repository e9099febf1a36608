"""The viewer's JSON API on runs it has never seen: totals, facets, searches and sorts equal
what the records files say (expectations computed here, from the files); compare's
regressed and improved equal the cases whose `ok` scores fell and rose; a foreign Host or
a request without the token gets nothing; run ids survive a restart; an index is rebuilt
when its records file changes."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.view import create_view_app, open_viewer
from tests.view.support import TOKEN, Runs, make_runs, read_jsonl, write_jsonl

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return make_runs(tmp_path_factory.mktemp("view") / "runs")


@pytest.fixture(scope="module")
def client(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    viewer = open_viewer(
        [runs.root],
        labels=runs.labels,
        index_dir=tmp_path_factory.mktemp("index"),
        label_dir=tmp_path_factory.mktemp("label-sets"),
    )
    with TestClient(create_view_app(viewer, token=TOKEN), base_url="http://127.0.0.1") as c:
        yield c
    viewer.engine.close()


def run_id(client: TestClient, path: Path) -> str:
    found = [
        r["id"] for r in client.get("/api/runs", headers=AUTH).json() if r["path"] == str(path)
    ]
    assert len(found) == 1, found
    return found[0]


def records(client: TestClient, run: str, **params: Any) -> dict[str, Any]:
    response = client.get(f"/api/runs/{run}/records", params=params, headers=AUTH)
    assert response.status_code == 200, response.text
    return response.json()


def every_page(client: TestClient, run: str, **params: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while True:
        page = records(client, run, offset=len(out), limit=7, **params)
        out += page["records"]
        if not page["records"]:
            return out


def test_runs_list_each_records_file_with_its_counts(client: TestClient, runs: Runs) -> None:
    listed = {r["path"]: r for r in client.get("/api/runs", headers=AUTH).json()}
    expected = [
        runs.base,
        runs.candidate,
        runs.rag / "faithfulness.jsonl",
        runs.rag / "retrieval.jsonl",
    ]
    assert set(listed) == {str(p) for p in expected}
    for path in expected:
        rows = read_jsonl(path)
        entry = listed[str(path)]
        assert entry["n"] == len(rows)
        assert entry["status_counts"] == dict(Counter(r["status"] for r in rows))
        assert (entry["rubric"], entry["rubric_version"]) == (
            rows[0]["rubric"],
            rows[0]["rubric_version"],
        )
        scores = [r["score"] for r in rows if r["status"] == "ok"]
        assert entry["headline"]["value"] == pytest.approx(sum(scores) / len(scores))
        low, high = entry["headline"]["ci95"]
        assert low < entry["headline"]["value"] < high


def test_totals_facets_and_pages_equal_the_file(client: TestClient, runs: Runs) -> None:
    run = run_id(client, runs.candidate)
    rows = read_jsonl(runs.candidate)
    page = records(client, run)
    assert page["total"] == len(rows)
    assert page["facets"]["status"] == dict(Counter(r["status"] for r in rows))
    assert page["facets"]["label"] == dict(
        Counter(str(r["label"]) if r["label"] else "null" for r in rows)
    )
    assert page["facets"]["slice"] == dict(Counter(s for r in rows for s in r["slices"]))
    assert every_page(client, run) == rows  # whole records, in file order


@pytest.mark.parametrize(
    "params",
    [
        {"status": "ok"},
        {"status": "parse_error,abstained"},
        {"slice": "billing"},
        {"label": "unfaithful"},
        {"min_score": 0.5},
        {"max_score": 0.4, "slice": "returns"},
        {"label": "faithful", "slice": "shipping", "min_score": 1},
    ],
)
def test_filters_and_their_facets_follow_the_file(
    client: TestClient, runs: Runs, params: dict[str, Any]
) -> None:
    run = run_id(client, runs.candidate)
    rows = [r for r in read_jsonl(runs.candidate) if keeps(r, params)]
    page = records(client, run, limit=500, **params)
    assert page["total"] == len(rows)
    assert [r["id"] for r in page["records"]] == [r["id"] for r in rows]
    assert page["facets"]["status"] == dict(Counter(r["status"] for r in rows))
    assert page["facets"]["slice"] == dict(Counter(s for r in rows for s in r["slices"]))


def keeps(record: dict[str, Any], params: dict[str, Any]) -> bool:
    score = record["score"]
    return (
        ("status" not in params or record["status"] in params["status"].split(","))
        and ("slice" not in params or params["slice"] in record["slices"])
        and ("label" not in params or record["label"] == params["label"])
        and ("min_score" not in params or (score is not None and score >= params["min_score"]))
        and ("max_score" not in params or (score is not None and score <= params["max_score"]))
    )


@pytest.mark.parametrize("text", ["refund", "REFUND", "warranty", "returns-00", "zzz-nowhere"])
def test_search_finds_the_text_in_id_question_answer_claims_and_rationale(
    client: TestClient, runs: Runs, text: str
) -> None:
    run = run_id(client, runs.candidate)
    cases = {c["id"]: c for c in read_jsonl(runs.candidate.parent / "cases.jsonl")}
    needle = text.lower()

    def haystack(record: dict[str, Any]) -> str:
        case = cases[record["id"]]
        claims = [c["claim"] for c in (record["verdict"] or {}).get("claims", [])]
        parts = [record["id"], case["question"], case["answer"], *claims, record["error"] or ""]
        return " ".join(parts).lower()

    expected = [r["id"] for r in read_jsonl(runs.candidate) if needle in haystack(r)]
    page = records(client, run, q=text, limit=500)
    assert [r["id"] for r in page["records"]] == expected
    assert page["total"] == len(expected)


@pytest.mark.parametrize(
    ("sort", "order"),
    [("score", "asc"), ("score", "desc"), ("id", "asc"), ("id", "desc"), ("status", "asc")],
)
def test_sorts_equal_sorting_the_file(
    client: TestClient, runs: Runs, sort: str, order: str
) -> None:
    run = run_id(client, runs.candidate)
    rows = read_jsonl(runs.candidate)
    present = [r for r in rows if r[sort] is not None]
    missing = [r for r in rows if r[sort] is None]  # nulls last, in file order
    position = {r["id"]: i for i, r in enumerate(rows)}
    ordered = sorted(present, key=lambda r: position[r["id"]])
    ordered.sort(key=lambda r: r[sort], reverse=order == "desc")
    if order == "desc":  # equal keys keep file order
        groups: dict[Any, list[dict[str, Any]]] = {}
        for r in ordered:
            groups.setdefault(r[sort], []).append(r)
        ordered = [
            r for key in groups for r in sorted(groups[key], key=lambda r: position[r["id"]])
        ]
    got = every_page(client, run, sort=sort, order=order)
    assert [r["id"] for r in got] == [r["id"] for r in ordered + missing]


def test_one_record_with_its_case_and_the_people_labels(client: TestClient, runs: Runs) -> None:
    run = run_id(client, runs.base)
    rows = read_jsonl(runs.base)
    labelled = {
        r[0]: r for r in (line.split(",", 3) for line in runs.labels.read_text().splitlines()[1:])
    }
    case_id = next(iter(labelled))
    detail = client.get(f"/api/runs/{run}/records/{case_id}", headers=AUTH).json()
    assert detail["record"] == next(r for r in rows if r["id"] == case_id)
    assert detail["case"] == next(c for c in read_jsonl(runs.cases) if c["id"] == case_id)
    assert detail["human"] == [
        {"label": labelled[case_id][1], "annotator": "ana", "note": f"note on {case_id}"}
    ]
    assert client.get(f"/api/runs/{run}/records/no-such-case", headers=AUTH).status_code == 404


def test_human_agreement_and_the_confusion_matrix_follow_the_labels(
    client: TestClient, runs: Runs
) -> None:
    run = run_id(client, runs.base)
    judged = {r["id"]: r["label"] or r["status"] for r in read_jsonl(runs.base)}
    people = {
        line.split(",")[0]: line.split(",")[1] for line in runs.labels.read_text().splitlines()[1:]
    }
    agree = [i for i in judged if i in people and people[i] == judged[i]]
    disagree = [i for i in judged if i in people and people[i] != judged[i]]
    assert disagree and agree
    assert [r["id"] for r in records(client, run, human="agree", limit=500)["records"]] == agree
    assert [
        r["id"] for r in records(client, run, human="disagree", limit=500)["records"]
    ] == disagree
    matrix = client.get(f"/api/runs/{run}/confusion", headers=AUTH).json()
    for i, human in enumerate(matrix["labels"]):
        for j, judge in enumerate(matrix["labels"]):
            cell = [k for k in people if people[k] == human and judged.get(k) == judge]
            assert matrix["matrix"][i][j] == len(cell)
            if cell:
                page = records(client, run, human_label=human, label=judge, limit=500)
                assert sorted(r["id"] for r in page["records"]) == sorted(cell)


def test_compare_lists_the_cases_whose_ok_scores_fell_and_rose(
    client: TestClient, runs: Runs
) -> None:
    base, candidate = run_id(client, runs.base), run_id(client, runs.candidate)
    response = client.get(
        "/api/compare", params={"base": base, "candidate": candidate}, headers=AUTH
    )
    assert response.status_code == 200, response.text
    result = response.json()
    a = {r["id"]: r for r in read_jsonl(runs.base)}
    b = {r["id"]: r for r in read_jsonl(runs.candidate)}
    both_ok = [i for i in a if a[i]["status"] == "ok" and b[i]["status"] == "ok"]
    fell = [i for i in both_ok if b[i]["score"] < a[i]["score"]]
    rose = [i for i in both_ok if b[i]["score"] > a[i]["score"]]
    assert fell and rose
    assert result["regressed"] == fell
    assert result["improved"] == rose
    assert [n["id"] for n in result["not_ok"]] == [i for i in a if i not in both_ok]
    # the metrics are judge compare's
    score = next(m for m in result["metrics"] if m["name"] == "faithfulness.score")
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    assert score["diff"] == pytest.approx(mean([b[i]["score"] - a[i]["score"] for i in both_ok]))
    assert (score["wins"], score["losses"]) == (len(rose), len(fell))
    assert score["ci95"][0] <= score["diff"] <= score["ci95"][1]
    assert 0 <= score["p"] <= 1


def test_rag_two_by_two_of_a_pass(client: TestClient, runs: Runs) -> None:
    run = run_id(client, runs.rag / "faithfulness.jsonl")
    result = client.get(f"/api/runs/{run}/rag", headers=AUTH).json()
    cells = result["diagnosis"]["cells"]
    assert sum(c["count"] for c in cells.values()) == result["diagnosis"]["classified"]
    assert all(len(c["ids"]) == c["count"] for c in cells.values())


def test_label_these_makes_a_label_set_judge_label_resumes(client: TestClient, runs: Runs) -> None:
    run = run_id(client, runs.base)
    ids = [r["id"] for r in read_jsonl(runs.base)[:3]]
    response = client.post("/api/label", json={"run": run, "ids": ids}, headers=AUTH)
    assert response.status_code == 200, response.text
    made = response.json()
    assert made["count"] == 3
    assert [c["id"] for c in read_jsonl(Path(made["cases"]))] == ids
    from judge.label.store import LabelStore

    store = LabelStore(Path(made["db"]))
    try:
        assert [item.case_id for item in store.items()] == ids
    finally:
        store.close()


@pytest.mark.parametrize(
    "path", ["/", "/api/runs", "/api/runs/x/records", "/api/compare?base=a&candidate=b"]
)
def test_without_the_token_nothing(client: TestClient, path: str) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token-wrong"}):
        response = client.get(path, headers=headers)
        assert response.status_code == 401
        assert "records" not in response.text and "faithfulness" not in response.text


@pytest.mark.parametrize("host", ["evil.example", "attacker.test:80"])
def test_a_foreign_host_gets_nothing(client: TestClient, host: str) -> None:
    response = client.get("/api/runs", headers={**AUTH, "Host": host})
    assert response.status_code in (400, 403, 421)
    assert "faithfulness" not in response.text


def test_a_cross_site_write_is_refused(client: TestClient, runs: Runs) -> None:
    run = run_id(client, runs.base)
    response = client.post(
        "/api/label",
        json={"run": run, "ids": ["returns-001"]},
        headers={**AUTH, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
    )
    assert response.status_code == 403


def test_run_ids_survive_a_restart_and_a_move(runs: Runs, tmp_path: Path) -> None:
    first = open_viewer([runs.root], index_dir=tmp_path / "i1")
    again = open_viewer([runs.root], index_dir=tmp_path / "i2")
    assert sorted(first.catalog.runs) == sorted(again.catalog.runs)
    moved = tmp_path / "elsewhere" / runs.root.name
    moved.parent.mkdir()
    os.symlink(runs.root, moved)
    relocated = open_viewer([moved], index_dir=tmp_path / "i3")
    assert sorted(relocated.catalog.runs) == sorted(first.catalog.runs)
    for viewer in (first, again, relocated):
        viewer.engine.close()


def test_the_index_is_rebuilt_when_the_records_file_changes(tmp_path: Path, runs: Runs) -> None:
    path = tmp_path / "graded.jsonl"
    rows = read_jsonl(runs.base)
    write_jsonl(path, rows[:10])
    viewer = open_viewer([path], index_dir=tmp_path / "index")
    (run,) = viewer.catalog.runs
    client = TestClient(create_view_app(viewer, token=TOKEN), base_url="http://127.0.0.1")
    assert records(client, run)["total"] == 10
    write_jsonl(path, rows[:20])
    assert records(client, run)["total"] == 20
    viewer.engine.close()


def test_bad_paths_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from judge.cli import main

    not_records = tmp_path / "notes.jsonl"
    not_records.write_text(json.dumps({"hello": 1}) + "\n")
    for path in (tmp_path / "missing.jsonl", not_records, tmp_path):
        assert main(["view", str(path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(path) in err[0], err


def test_the_mean_scores_interval_stays_on_the_scores_scale() -> None:
    # Two scores, 0 and 1: Student's t reads [-3.9, 4.6], far off a 0..1 scale.
    from judge.view.query import _t_interval

    low, high = _t_interval(0.5, 0.5**0.5, 2)
    assert (low, high) == (0.0, 1.0)
    low, high = _t_interval(0.9, 0.05, 40)  # well inside: untouched
    assert 0.88 < low < 0.9 < high < 0.92
