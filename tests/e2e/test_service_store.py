"""The job store keeps its promises: private files, a job index that is rebuilt from the job
folders rather than lost, a corrupt index refused in one line, and a job that ends `done`
only with every record (issue 16, items 10, 13 and 14)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from judge.errors import UsageError
from judge.rubric import file_sha256, load_rubric
from judge.service._jobs import JobRunner
from judge.service._judges import JudgePool
from judge.service._store import Job, JobStore, new_job_id, read_manifest, write_manifest
from judge.service.config import ServiceConfig
from tests.helpers import case
from tests.test_service_support import REPO, ServiceProcess, wait_for_job, write_config

# the service's end-to-end group (judge serve processes killed and restarted over their stores): run by .ci/slow
pytestmark = pytest.mark.slow


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def service_config(folder: Path) -> Path:
    return write_config(
        folder / "service.yaml", data_dir=str(folder / "data"), cache_dir=str(folder / "cache")
    )


def submit_jobs(api: httpx.Client) -> list[str]:
    """Two finished jobs: a JSON one with an Idempotency-Key, and a JSONL upload."""
    body = {"rubric": "faithfulness", "cases": [case(f"j{i}") for i in range(5)]}
    first = api.post("/v1/jobs", json=body, headers={"Idempotency-Key": "nightly-7"})
    upload = "".join(json.dumps(case(f"u{i}")) + "\n" for i in range(3))
    second = api.post(
        "/v1/jobs?rubric=relevance",
        content=upload,
        headers={"Content-Type": "application/x-ndjson"},
    )
    ids = [first.json()["id"], second.json()["id"]]
    for job_id in ids:
        assert wait_for_job(api, job_id)["status"] == "done"
    return ids


# ---- item 10: private files ------------------------------------------------------------


def test_the_job_store_is_private(tmp_path: Path, umask_022: None) -> None:
    store = JobStore(tmp_path / "data")
    try:
        data = tmp_path / "data"
        assert mode(data) == mode(data / "jobs") == 0o700
        for name in ("jobs.sqlite3", "jobs.sqlite3-wal", "jobs.sqlite3-shm", "service.lock"):
            assert mode(data / name) == 0o600, name
    finally:
        store.close()


def test_an_existing_folder_is_left_alone_and_old_files_are_tightened(
    tmp_path: Path, umask_022: None
) -> None:
    data = tmp_path / "operator-data"
    data.mkdir(mode=0o755)
    (data / "jobs.sqlite3").touch(mode=0o644)  # written by an earlier version
    JobStore(data).close()
    assert mode(data) == 0o755  # not ours to chmod
    assert mode(data / "jobs") == 0o700 and mode(data / "jobs.sqlite3") == 0o600


# ---- item 13: a job is done only with every record --------------------------------------


def make_job(store: JobStore, lines: list[str], total: int) -> Job:
    job_id = new_job_id()
    folder = store.folder(job_id)
    folder.mkdir()
    (folder / "cases.jsonl").write_text("".join(line + "\n" for line in lines), "utf-8")
    rubric = load_rubric("faithfulness")
    job = Job(
        *(job_id, "queued", rubric.ref, rubric.sha256, "rules", "cases.jsonl", total, 0),
        *(None, None, None, None, 1.0, 1.0),
        input_sha256=file_sha256(folder / "cases.jsonl"),
    )
    write_manifest(folder, job)
    assert store.create(job) is not None
    return job


async def run_jobs(store: JobStore, *jobs: Job) -> None:
    pool = JudgePool(ServiceConfig(data_dir=store.data_dir))
    runner = JobRunner(store, pool, running_jobs=2, redact=str)
    for job in jobs:
        runner.start(job.id)
    await runner.join()
    await pool.aclose()


async def test_a_job_missing_records_ends_failed_not_done(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    try:
        lines = [json.dumps(case(f"c{i}")) for i in range(3)]
        short = make_job(store, lines, total=4)  # the input holds one case fewer than counted
        whole = make_job(store, lines, total=3)
        await run_jobs(store, short, whole)
        failed = store.get(short.id)
        assert failed is not None and failed.status == "failed"
        assert failed.error is not None and "only 3 of the 4" in failed.error
        assert failed.done == 3
        done = store.get(whole.id)
        assert done is not None and done.status == "done" and done.done == 3
    finally:
        store.close()


async def test_a_changed_stored_input_fails_the_job(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    try:
        lines = [json.dumps(case(f"c{i}")) for i in range(4)]
        job = make_job(store, lines, total=4)
        stored = store.input_path(job)
        garbled = stored.read_text("utf-8").replace('"id": "c1"', '"id": c1')
        stored.write_text(garbled, "utf-8")
        await run_jobs(store, job)
        failed = store.get(job.id)
        assert failed is not None and failed.status == "failed"
        assert failed.error is not None and "changed since it was submitted" in failed.error
        manifest = read_manifest(store.folder(job.id))
        assert manifest is not None and manifest.status == "failed"  # the end state is on disk
    finally:
        store.close()


def test_a_done_job_without_its_records_is_a_json_500(tmp_path: Path) -> None:
    service = ServiceProcess(service_config(tmp_path)).start()
    try:
        with service.client(token=None) as api:
            job_id = submit_jobs(api)[0]
            (tmp_path / "data" / "jobs" / job_id / "records.jsonl").unlink()
            response = api.get(f"/v1/jobs/{job_id}/records")
            assert response.status_code == 500, response.text
            assert response.headers["content-type"].startswith("application/json")
            assert response.json()["error"]["type"] == "records_missing"
            assert api.get(f"/v1/jobs/{job_id}").status_code == 200  # the connection lives
    finally:
        service.stop()


# ---- item 14: the job index is rebuilt, or refused, never silently lost ---------------


def empty_index(data: Path) -> None:
    (data / "jobs.sqlite3").write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        Path(f"{data / 'jobs.sqlite3'}{suffix}").unlink(missing_ok=True)


def delete_index(data: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{data / 'jobs.sqlite3'}{suffix}").unlink(missing_ok=True)


def garble_wal(data: Path) -> None:
    wal = Path(f"{data / 'jobs.sqlite3'}-wal")
    assert wal.stat().st_size > 0, "the kill should leave the index in its WAL"
    wal.write_bytes(bytes(range(256)) * (wal.stat().st_size // 256 + 1))


@pytest.mark.parametrize("damage", [empty_index, delete_index, garble_wal])
def test_jobs_outlive_their_index(tmp_path: Path, damage: object) -> None:
    service = ServiceProcess(service_config(tmp_path)).start()
    with service.client(token=None) as api:
        ids = submit_jobs(api)
        before = [api.get(f"/v1/jobs/{job_id}").json() for job_id in ids]
        records = [api.get(f"/v1/jobs/{job_id}/records").text for job_id in ids]
    if damage is garble_wal:
        service.kill()  # no checkpoint: the index lives only in its WAL
    else:
        service.stop()
    damage(tmp_path / "data")  # type: ignore[operator]
    orphan = tmp_path / "data" / "jobs" / ".incoming-abc123"
    orphan.mkdir()
    (orphan / "cases.jsonl").write_text("half an upload", "utf-8")

    service.start()
    try:
        with service.client(token=None) as api:
            after = [api.get(f"/v1/jobs/{job_id}").json() for job_id in ids]
            assert [(s["status"], s["progress"]) for s in after] == [
                (s["status"], s["progress"]) for s in before
            ]
            assert [a["summary"] for a in after] == [b["summary"] for b in before]
            assert [api.get(f"/v1/jobs/{i}/records").text for i in ids] == records
            retry = api.post(
                "/v1/jobs",
                json={"rubric": "faithfulness", "cases": [case(f"j{i}") for i in range(5)]},
                headers={"Idempotency-Key": "nightly-7"},
            )
            assert retry.json()["id"] == ids[0]  # the key survived too
    finally:
        service.stop()
    assert not orphan.exists()
    assert "rebuilt 2 job(s)" in service.log_text()


def test_a_corrupt_index_is_one_line_and_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    JobStore(data).close()
    delete_index(data)
    (data / "jobs.sqlite3").write_bytes(b"this is not a database, it was overwritten" * 100)
    command = [sys.executable, "-m", "judge.cli", "serve", "--port", "0", "--data-dir", str(data)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "jobs.sqlite3" in lines[0] and "Traceback" not in done.stderr
    with pytest.raises(UsageError, match="unreadable"):
        JobStore(data)


def test_a_cancelled_job_stays_cancelled_through_a_rebuild(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    job = make_job(store, [json.dumps(case())], total=1)
    store.set_status(job.id, "cancelled")
    store.close()
    delete_index(tmp_path)
    rebuilt = JobStore(tmp_path)
    try:
        found = rebuilt.get(job.id)
        assert found is not None and found.status == "cancelled"
        assert rebuilt.unfinished() == []  # so it is not run again
    finally:
        rebuilt.close()


def test_a_folder_without_a_manifest_is_left_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    legacy = tmp_path / "jobs" / new_job_id()
    legacy.mkdir(parents=True)
    store = JobStore(tmp_path)
    store.close()
    assert legacy.exists() and "no readable job.json" in caplog.text
    shutil.rmtree(legacy)
