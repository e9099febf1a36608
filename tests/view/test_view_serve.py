"""`judge serve` shows its jobs at `/` in the viewer (issue 32, point 6): the job list as
the runs list, each done job's records, searchable; behind the service's token (the page
takes `?token=`, every API call needs the bearer), the Host guard with the service's
allowed hosts; the service's own routes unchanged."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.service import create_app, load_service_config
from tests.helpers import case
from tests.test_service_support import TOKEN, wait_for_job

BEARER = {"Authorization": f"Bearer {TOKEN}"}
CASES = [
    case("trial-1"),
    case("trial-2", answer="The free trial lasts 40 days. Refunds are instant."),
    case("trial-3", question="¿Cuánto dura la prueba gratuita?"),
]


def service(tmp_path: Path, **config: Any) -> TestClient:
    path = tmp_path / "service.yaml"
    path.write_text(json.dumps({"data_dir": str(tmp_path / "data"), **config}), "utf-8")
    app = create_app(load_service_config(path, {}))
    return TestClient(app, base_url="http://127.0.0.1:8080")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str]]:
    folder = tmp_path_factory.mktemp("serve-view")
    with service(folder, token=TOKEN, allowed_hosts=["judge.internal"]) as client:
        response = client.post(
            "/v1/jobs", json={"rubric": "faithfulness", "cases": CASES}, headers=BEARER
        )
        assert response.status_code == 202, response.text
        job_id = response.json()["id"]
        client.headers.update(BEARER)
        assert wait_for_job(client, job_id)["status"] == "done"  # type: ignore[arg-type]
        client.headers.pop("Authorization")
        yield client, job_id


def test_the_page_is_at_slash_behind_the_token(served: tuple[TestClient, str]) -> None:
    client, _ = served
    assert client.get("/").status_code == 401
    assert client.get("/?token=wrong").status_code == 401
    page = client.get(f"/?token={TOKEN}")
    assert page.status_code == 200 and "/static/view.js" in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert client.get("/static/view.js").status_code == 200  # no data in it: public


def test_the_api_needs_the_bearer_and_a_host_of_this_server(
    served: tuple[TestClient, str],
) -> None:
    client, job_id = served
    for path in ("/api/runs", f"/api/runs/{job_id}/records", f"/api/runs/{job_id}/records/trial-1"):
        response = client.get(path)
        assert response.status_code == 401, path
        assert "trial" not in response.text
        assert client.get(path, params={"token": TOKEN}).status_code == 401, path  # page only
    # a rebound name on loopback gets nothing, token or not; the service's proxy name passes
    assert client.get("/api/runs", headers={**BEARER, "Host": "evil.example"}).status_code == 400
    assert (
        client.get("/", params={"token": TOKEN}, headers={"Host": "evil.example"}).status_code
        == 400
    )
    assert client.get("/api/runs", headers={**BEARER, "Host": "judge.internal"}).status_code == 200
    response = client.post(
        "/api/label",
        json={"run": job_id, "ids": ["trial-1"]},
        headers={**BEARER, "Origin": "http://evil.example"},
    )
    assert response.status_code == 403


def test_done_jobs_are_the_runs_and_their_records_are_searchable(
    served: tuple[TestClient, str],
) -> None:
    client, job_id = served
    runs = client.get("/api/runs", headers=BEARER).json()
    assert [r["id"] for r in runs] == [job_id]
    assert runs[0]["n"] == len(CASES) and runs[0]["rubric"] == "faithfulness"
    records = client.get(f"/api/runs/{job_id}/records", headers=BEARER).json()
    assert [r["id"] for r in records["records"]] == [c["id"] for c in CASES]
    # the job's cases are joined: a search finds the question's words, a case page shows it
    found = client.get(f"/api/runs/{job_id}/records", params={"q": "GRATUITA"}, headers=BEARER)
    assert [r["id"] for r in found.json()["records"]] == ["trial-3"]
    one = client.get(f"/api/runs/{job_id}/records/trial-3", headers=BEARER).json()
    assert one["case"]["question"] == CASES[2]["question"]
    assert one["record"]["id"] == "trial-3"


def test_a_job_done_after_the_first_look_is_listed_too(served: tuple[TestClient, str]) -> None:
    client, first = served
    client.get("/api/runs", headers=BEARER)
    response = client.post(
        "/v1/jobs", json={"rubric": "faithfulness", "cases": [case("later")]}, headers=BEARER
    )
    job_id = response.json()["id"]
    client.headers.update(BEARER)
    try:
        assert wait_for_job(client, job_id)["status"] == "done"  # type: ignore[arg-type]
        page = client.get(f"/api/runs/{job_id}/records").json()
        assert [r["id"] for r in page["records"]] == ["later"]
        assert {r["id"] for r in client.get("/api/runs").json()} == {first, job_id}
    finally:
        client.headers.pop("Authorization")


def test_the_service_routes_are_unchanged(served: tuple[TestClient, str]) -> None:
    client, _ = served
    assert client.get("/healthz").status_code == 200
    assert client.get("/v1/jobs").status_code == 401
    missing = client.get("/v1/nothing-here", headers=BEARER)
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found"
    assert client.get("/docs").status_code == 200


def test_without_a_token_the_page_is_as_open_as_the_api_on_loopback(tmp_path: Path) -> None:
    with service(tmp_path) as client:
        assert client.get("/").status_code == 200
        assert client.get("/api/runs").json() == []
        assert client.get("/api/runs", headers={"Host": "evil.example"}).status_code == 400
