"""Everything `judge serve` writes that holds case text is private (issue 55): after a job
is graded and its viewer opened (runs, its records, one record), no folder or file
under the data directory or the cache can be read by another user, whatever the umask."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from judge.service import create_app, load_service_config
from tests.helpers import case
from tests.test_service_support import TOKEN, wait_for_job

BEARER = {"Authorization": f"Bearer {TOKEN}"}


def _open_to_others(root: Path) -> list[str]:
    found = []
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if not path.is_symlink() and mode & 0o077:
            found.append(f"{path.relative_to(root.parent)} {mode:o}")
    return found


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_no_folder_or_file_the_service_writes_is_open_to_others(tmp_path, umask) -> None:
    data, cache = tmp_path / "data", tmp_path / "cache"
    config = tmp_path / "service.yaml"
    config.write_text(
        json.dumps({"data_dir": str(data), "cache_dir": str(cache), "token": TOKEN}), "utf-8"
    )
    before = os.umask(umask)
    try:
        app = create_app(load_service_config(config, {}))
        with TestClient(app, base_url="http://127.0.0.1:8080", headers=BEARER) as client:
            cases = [case("trial-1"), case("trial-2", answer="The trial lasts 40 days.")]
            response = client.post("/v1/jobs", json={"rubric": "faithfulness", "cases": cases})
            assert response.status_code == 202, response.text
            job_id = response.json()["id"]
            assert wait_for_job(client, job_id)["status"] == "done"  # type: ignore[arg-type]
            assert client.get("/api/runs").status_code == 200
            assert client.get(f"/api/runs/{job_id}/records").status_code == 200
            assert client.get(f"/api/runs/{job_id}/records/trial-1").status_code == 200
    finally:
        os.umask(before)
    assert (data / "view").is_dir()  # the viewer's index and records copies were made
    open_ones = _open_to_others(data)
    assert open_ones == [], open_ones
    if cache.exists():
        assert _open_to_others(cache) == []
