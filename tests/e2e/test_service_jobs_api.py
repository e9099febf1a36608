"""The job API says what it does (issue 20, items 12 and 15): jobs can be listed, DELETE on a
finished job is an honest 409, a cache folder that cannot be used is refused at start, and
a job folder's manifest cannot point the service at a file outside the folder."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from judge.cli import main as cli_main
from judge.errors import UsageError
from judge.rubric import load_rubric
from judge.service import create_app
from judge.service._store import Job, JobStore, new_job_id, write_manifest
from judge.service.config import load_service_config
from tests.e2e.test_service_store import run_jobs
from tests.helpers import case
from tests.test_service_support import ServiceProcess, wait_for_job, write_config

# the service's end-to-end group (a judge serve process and its job store): run by .ci/slow
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    folder = tmp_path_factory.mktemp("jobs-api")
    config = write_config(folder / "service.yaml", data_dir=str(folder / "data"))
    server = ServiceProcess(config).start()
    with server.client(token=None) as client:
        yield client
    server.stop()


def submit(api: httpx.Client, name: str, rubric: str = "faithfulness") -> str:
    body = {"rubric": rubric, "cases": [case(name)]}
    response = api.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def test_delete_on_a_finished_job_is_409_and_changes_nothing(api: httpx.Client) -> None:
    """Before the fix: 200, the job's state, and nothing changed."""
    job_id = submit(api, "finished")
    assert wait_for_job(api, job_id)["status"] == "done"
    records = api.get(f"/v1/jobs/{job_id}/records").text
    response = api.delete(f"/v1/jobs/{job_id}")
    assert response.status_code == 409, response.text
    error = response.json()["error"]
    assert error["type"] == "job_finished" and "is done" in error["message"]
    assert api.get(f"/v1/jobs/{job_id}").json()["status"] == "done"
    assert api.get(f"/v1/jobs/{job_id}/records").text == records


def test_jobs_are_listed_newest_first_a_page_at_a_time(api: httpx.Client) -> None:
    """Before the fix GET /v1/jobs was 405."""
    ids = [submit(api, f"listed-{i}", rubric) for i, rubric in enumerate(["relevance"] * 3)]
    for job_id in ids:
        wait_for_job(api, job_id)
    listed = api.get("/v1/jobs")
    assert listed.status_code == 200, listed.text
    jobs = listed.json()["jobs"]
    newest_first = [job["id"] for job in jobs if job["id"] in ids]
    assert newest_first == ids[::-1]
    assert all(set(job) >= {"id", "status", "rubric", "progress"} for job in jobs)

    first = api.get("/v1/jobs", params={"limit": 2}).json()
    assert len(first["jobs"]) == 2 and first["next"] == first["jobs"][-1]["id"]
    second = api.get("/v1/jobs", params={"limit": 2, "before": first["next"]}).json()
    seen = [j["id"] for j in first["jobs"]] + [j["id"] for j in second["jobs"]]
    assert len(seen) == len(set(seen))  # pages never overlap
    everything = api.get("/v1/jobs", params={"limit": 500}).json()
    assert everything["next"] is None

    done = api.get("/v1/jobs", params={"status": "done", "limit": 500}).json()["jobs"]
    assert done and {j["status"] for j in done} == {"done"}
    assert api.get("/v1/jobs", params={"status": "sleeping"}).status_code == 422
    assert api.get("/v1/jobs", params={"limit": 0}).status_code == 422
    unknown = api.get("/v1/jobs", params={"before": "job_nope"})
    assert unknown.status_code == 422 and unknown.json()["error"]["field"] == "before"


def model_judge_config(folder: Path, cache: Path) -> Path:
    judges = {"m": {"model": "judge-test-2024-01-01", "base_url": "http://127.0.0.1:9/v1"}}
    return write_config(
        folder / "service.yaml", judges=judges, data_dir=str(folder / "d"), cache_dir=str(cache)
    )


def corrupt_cache(folder: Path) -> Path:
    cache = folder / "cache"
    cache.mkdir()
    (cache / "cache.db").write_bytes(b"not an SQLite database" * 200)
    return cache


def test_a_corrupt_cache_is_refused_at_start_not_a_500_per_request(tmp_path: Path) -> None:
    """Before the fix every model-judge /v1/grade answered a bare 500."""
    cache = corrupt_cache(tmp_path)
    config = load_service_config(model_judge_config(tmp_path, cache), {})
    with pytest.raises(UsageError, match=f"cannot use the cache folder {cache}"):
        create_app(config)


def test_serve_with_a_corrupt_cache_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def started(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the server started on a cache it cannot use")

    monkeypatch.setattr(uvicorn.Server, "run", started)
    config = model_judge_config(tmp_path, corrupt_cache(tmp_path))
    assert cli_main(["serve", "--config", str(config), "--port", "0"], env={}) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot use the cache folder" in err[0], err


async def test_a_manifest_naming_a_file_outside_its_folder_is_not_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before the fix a job.json with `"input_name": "../../outside.jsonl"` was put back
    into the index at start, and its job graded (and served) the file outside the folder."""
    outside = tmp_path / "outside.jsonl"
    outside.write_text(json.dumps(case("SECRET-ROW")) + "\n", "utf-8")
    data = tmp_path / "data"
    JobStore(data).close()  # creates the layout
    folder = data / "jobs" / new_job_id()
    folder.mkdir()
    rubric = load_rubric("faithfulness")
    job = Job(
        *(folder.name, "queued", rubric.ref, rubric.sha256, "rules", "../../outside.jsonl", 1),
        *(0, None, None, None, None, 1.0, 1.0),
    )
    write_manifest(folder, job)
    store = JobStore(data)
    try:
        assert store.get(folder.name) is None
        assert "input" in caplog.text and folder.name in caplog.text
        # an index row that names such a file (written by hand) fails its job instead
        row = dataclasses.replace(job, id=new_job_id())
        (data / "jobs" / row.id).mkdir()
        assert store.create(row) is not None
        await run_jobs(store, row)
        failed = store.get(row.id)
        assert failed is not None and failed.status == "failed", failed
        assert not (data / "jobs" / row.id / "records.jsonl").exists()
    finally:
        store.close()


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_docs_pages_load_nothing_from_outside(api: httpx.Client, page: str) -> None:
    """Before the fix /docs loaded an unpinned Swagger UI from a CDN (blank offline)."""
    html = api.get(page)
    assert html.status_code == 200 and "text/html" in html.headers["content-type"]
    sources = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html.text)
    sources += re.findall(r"""url:\s*['"]([^'"]+)['"]""", html.text)
    assert sources, html.text
    for source in sources:
        assert source.startswith("/"), f"{page} loads {source} from outside"
        if source.endswith((".js", ".css")):
            asset = api.get(source)
            assert asset.status_code == 200 and len(asset.content) > 10_000, source
    assert "cdn" not in html.text.lower() and "https://" not in html.text
