"""Issue 20 item 5: a full disk (an injected ENOSPC) under the service's data dir.

A job that meets it ends `failed` with the reason, visible through GET even when the
failure itself cannot be written (before: `running` forever, progress 0, no error); it
finishes by itself once space returns, or on the next start. A submission that meets it
is a 507 saying so, with no `.incoming-*` folder left (before: a bare 500 and the folder).
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.engine import records
from judge.service import _store, _upload
from judge.service._jobs import JobRunner
from judge.service.config import ServiceConfig
from tests.helpers import case
from tests.test_service_support import InProcessService, wait_for_job

pytestmark = pytest.mark.slow  # judge serve jobs on a full disk (.ci/slow runs it)

CASES = 12


class Disk:
    """A disk the test fills and empties: while full, every record written fails."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = False
        self.store_full = False  # the job index and manifests too
        self.monkeypatch = monkeypatch
        write, finish = records.RecordWriter.write, _store.JobStore.finish

        def write_record(writer: records.RecordWriter, record: Any) -> None:
            if self.full:
                raise OSError(errno.ENOSPC, "No space left on device")
            write(writer, record)

        def finish_job(store: _store.JobStore, *args: Any, **kwargs: Any) -> None:
            if self.store_full:
                raise sqlite3.OperationalError("database or disk is full")
            finish(store, *args, **kwargs)

        monkeypatch.setattr(records.RecordWriter, "write", write_record)
        monkeypatch.setattr(_store.JobStore, "finish", finish_job)
        monkeypatch.setattr(JobRunner, "first_retry_s", 0.05)


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Disk:
    return Disk(monkeypatch)


@pytest.fixture
def config(tmp_path: Path) -> ServiceConfig:
    return ServiceConfig(data_dir=tmp_path / "data", use_cache=False)


@pytest.fixture
def service(config: ServiceConfig) -> Iterator[httpx.Client]:
    with InProcessService(config) as running, httpx.Client(base_url=running.base_url) as api:
        yield api


def submit(api: httpx.Client) -> str:
    body = {"rubric": "faithfulness", "cases": [case(f"c{i}") for i in range(CASES)]}
    response = api.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def wait_failed_for_space(api: httpx.Client, job_id: str) -> dict[str, Any]:
    state = wait_for_job(api, job_id, until=("failed", "done"))
    assert state["status"] == "failed", state
    assert "data dir is full (No space left on device)" in state["error"]
    assert "resumes by itself when space returns" in state["error"]
    return state


@pytest.mark.parametrize("store_full", [False, True], ids=["records", "records-and-index"])
def test_a_job_on_a_full_disk_fails_with_the_reason_and_finishes_when_space_returns(
    disk: Disk, service: httpx.Client, store_full: bool
) -> None:
    disk.full, disk.store_full = True, store_full
    job_id = submit(service)
    wait_failed_for_space(service, job_id)
    disk.full = disk.store_full = False
    state = wait_for_job(service, job_id, until=("done",))
    assert state["progress"] == {"done": CASES, "total": CASES} and state["error"] is None
    lines = service.get(f"/v1/jobs/{job_id}/records").text.splitlines()
    assert len(lines) == CASES


@pytest.mark.parametrize("store_full", [False, True], ids=["records", "records-and-index"])
def test_a_job_that_failed_for_space_finishes_on_restart(
    disk: Disk, config: ServiceConfig, store_full: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(JobRunner, "first_retry_s", 3600.0)  # only the restart retries
    disk.full, disk.store_full = True, store_full
    with InProcessService(config) as running, httpx.Client(base_url=running.base_url) as api:
        job_id = submit(api)
        wait_failed_for_space(api, job_id)
    disk.full = disk.store_full = False
    with InProcessService(config) as running, httpx.Client(base_url=running.base_url) as api:
        state = wait_for_job(api, job_id, until=("done",))
        assert state["progress"]["done"] == CASES


def test_submitting_to_a_full_disk_is_a_clear_507_and_leaves_no_folder(
    service: httpx.Client, config: ServiceConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_space(*_args: Any) -> str:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_upload, "_write_lines", no_space)
    body = {"rubric": "faithfulness", "cases": [case("a")]}
    response = service.post("/v1/jobs", json=body)
    assert response.status_code == 507, response.text
    error = response.json()["error"]
    assert error["type"] == "insufficient_storage" and "data dir is full" in error["message"]
    upload = service.post(
        "/v1/jobs?rubric=faithfulness",
        content=b"".join([b'{"id": "u", "question": "q", "contexts": ["c"], "answer": "a"}\n']),
        headers={"Content-Type": "application/x-ndjson"},
    )
    assert upload.status_code == 202  # the upload path does not use _write_lines
    jobs = config.data_dir / "jobs"
    assert not [p for p in jobs.iterdir() if p.name.startswith(".incoming-")]


def test_an_upload_to_a_full_disk_is_a_507(
    service: httpx.Client, config: ServiceConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_space(*_args: Any, **_kwargs: Any) -> str:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_upload.tempfile, "mkdtemp", no_space)
    upload = service.post(
        "/v1/jobs?rubric=faithfulness",
        content=b'{"id": "u", "question": "q", "contexts": ["c"], "answer": "a"}\n',
        headers={"Content-Type": "application/x-ndjson"},
    )
    assert upload.status_code == 507 and "data dir is full" in upload.json()["error"]["message"]
    assert not list((config.data_dir / "jobs").iterdir())
