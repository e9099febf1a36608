"""The PostgreSQL job store keeps the replicas' promises (issue 27): no two replicas hold one
chunk, a lost lease's late write is discarded, the same Idempotency-Key at once makes one
job, the schema is versioned and a newer one refused in one line, and a service on it
grades as the SQLite one does. Needs PostgreSQL: `-m postgres` (.ci/postgres)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from judge.errors import UsageError
from judge.service._store import Job, new_job_id
from judge.service.config import JudgeSpec, Replicas, ServiceConfig
from judge.service.stores.postgres import SCHEMA_VERSION, Claim, PostgresStore
from judge.testing import FakeOpenAIServer
from tests.helpers import case
from tests.postgres_support import postgres_url
from tests.test_service_support import REPO, InProcessService, wait_for_job

pytestmark = pytest.mark.postgres
__all__ = ["postgres_url"]  # the fixture, imported for its name


def open_store(url: str, folder: Path, chunk_cases: int = 3) -> PostgresStore:
    return PostgresStore(url, folder, chunk_cases=chunk_cases)


def admit(store: PostgresStore, n: int, *, key: str | None = None) -> Job | None:
    """A queued job of `n` cases, staged and admitted as the upload route does."""
    folder = Path(store.jobs_dir) / f".incoming-{new_job_id()}"
    folder.mkdir()
    lines = (json.dumps(case(f"c{i:03d}", answer=f"answer {i}")) + "\n" for i in range(n))
    (folder / "cases.jsonl").write_text("".join(lines), "utf-8")
    now = time.time()
    job = Job(
        id=new_job_id(),
        status="queued",
        rubric="faithfulness@1",
        rubric_sha256="0" * 64,
        judge="rules",
        input_name="cases.jsonl",
        total=n,
        done=0,
        summary=None,
        error=None,
        idempotency_key=key,
        request_sha256="r" * 64,
        created_at=now,
        updated_at=now,
    )
    return store.admit(job, folder)


def records_of(claim: Claim) -> list[str]:
    return [json.dumps({"id": json.loads(row)["id"]}) for row in claim.rows]


def count(url: str, sql: str) -> int:
    with psycopg.connect(url) as db:
        row = db.execute(sql).fetchone()
    assert row is not None
    return int(row[0])


def test_the_schema_is_created_once_and_versioned(postgres_url: str, tmp_path: Path) -> None:
    open_store(postgres_url, tmp_path / "a").close()
    open_store(postgres_url, tmp_path / "b").close()  # a second server: nothing to migrate
    assert count(postgres_url, "SELECT count(*) FROM schema_version") == SCHEMA_VERSION
    assert count(postgres_url, "SELECT max(version) FROM schema_version") == SCHEMA_VERSION


def test_a_database_of_a_newer_schema_is_refused_in_one_line(
    postgres_url: str, tmp_path: Path
) -> None:
    open_store(postgres_url, tmp_path / "a").close()
    with psycopg.connect(postgres_url) as db:
        db.execute("INSERT INTO schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(UsageError, match="newer than this judge's") as caught:
        open_store(postgres_url, tmp_path / "b")
    assert "\n" not in str(caught.value)
    served = subprocess.run(
        [sys.executable, "-m", "judge.cli", "serve", "--port", "0"]
        + ["--database", postgres_url, "--data-dir", str(tmp_path / "c")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.returncode == 2, served.stderr
    lines = served.stderr.strip().splitlines()
    assert len(lines) == 1 and "newer than this judge's" in lines[0], served.stderr


def test_an_unreachable_database_is_one_line_without_its_password(tmp_path: Path) -> None:
    url = "postgresql://judge:hunter2-secret@127.0.0.1:1/nowhere?connect_timeout=2"
    served = subprocess.run(
        [sys.executable, "-m", "judge.cli", "serve", "--port", "0"]
        + ["--database", url, "--data-dir", str(tmp_path / "c")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.returncode == 2, served.stderr
    assert len(served.stderr.strip().splitlines()) == 1, served.stderr
    assert "hunter2" not in served.stderr and "127.0.0.1:1/nowhere" in served.stderr


def test_replicas_claiming_at_once_never_share_a_chunk(postgres_url: str, tmp_path: Path) -> None:
    store = open_store(postgres_url, tmp_path / "a")
    try:
        job = admit(store, 10)  # chunks of 3: [0,3) [3,6) [6,9) [9,10)
        assert job is not None
        claims: list[Claim | None] = []
        start = threading.Barrier(8)

        def claim(n: int) -> None:
            start.wait()
            claims.append(store.claim(f"replica-{n}", 30.0))

        threads = [threading.Thread(target=claim, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        held = sorted(c.chunk for c in claims if c is not None)
        assert held == [0, 1, 2, 3]
        assert sorted((c.first, c.stop) for c in claims if c is not None) == [
            (0, 3),
            (3, 6),
            (6, 9),
            (9, 10),
        ]
        current = store.get(job.id)
        assert current is not None and current.status == "running"
    finally:
        store.close()


def test_a_lost_lease_discards_the_late_write(postgres_url: str, tmp_path: Path) -> None:
    store = open_store(postgres_url, tmp_path / "a")
    try:
        job = admit(store, 3)
        assert job is not None
        first = store.claim("replica-a", 30.0)
        assert first is not None and store.claim("replica-b", 30.0) is None  # held
        assert store.renew(first, "replica-a", 30.0) is True  # renewed while it grades
        with psycopg.connect(postgres_url) as db:  # replica-a stalls past its lease
            db.execute("UPDATE chunks SET lease_until = clock_timestamp() - interval '1 second'")
        second = store.claim("replica-b", 30.0)
        assert second is not None and second.chunk == first.chunk
        assert store.renew(first, "replica-a", 30.0) is False  # a learns it lost the chunk
        assert store.commit(first, "replica-a", records_of(first), {}) is False
        assert store.commit(second, "replica-b", records_of(second), {"graded": 3}) is True
        assert store.commit(second, "replica-b", records_of(second), {}) is False  # once
        assert count(postgres_url, "SELECT count(*) FROM records") == 3
        current = store.get(job.id)
        assert current is not None and current.done == 3
        pages = b"".join(store.open_records(current)).decode().splitlines()
        assert [json.loads(line)["id"] for line in pages] == ["c000", "c001", "c002"]
    finally:
        store.close()


def test_an_expired_lease_nobody_took_still_commits(postgres_url: str, tmp_path: Path) -> None:
    store = open_store(postgres_url, tmp_path / "a")
    try:
        assert admit(store, 2) is not None
        claim = store.claim("replica-a", 30.0)
        assert claim is not None
        with psycopg.connect(postgres_url) as db:
            db.execute("UPDATE chunks SET lease_until = clock_timestamp() - interval '1 second'")
        assert store.commit(claim, "replica-a", records_of(claim), {}) is True
        assert store.claim("replica-b", 30.0) is None  # done: nothing left to take
    finally:
        store.close()


def test_the_same_key_at_once_makes_one_job(postgres_url: str, tmp_path: Path) -> None:
    stores = [open_store(postgres_url, tmp_path / name) for name in ("a", "b")]
    try:
        made: list[Job | None] = []
        start = threading.Barrier(2)

        def submit(store: PostgresStore) -> None:
            start.wait()
            made.append(admit(store, 50, key="nightly-42"))

        threads = [threading.Thread(target=submit, args=(s,)) for s in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(job is None for job in made) == [False, True]
        assert count(postgres_url, "SELECT count(*) FROM jobs") == 1
        assert count(postgres_url, "SELECT count(*) FROM job_cases") == 50
        assert list((tmp_path / "a" / "incoming").iterdir()) == []  # staged files gone
    finally:
        for store in stores:
            store.close()


def test_listing_pages_and_filters_as_the_sqlite_store_does(
    postgres_url: str, tmp_path: Path
) -> None:
    """Newest first, `before` as a cursor and a status filter: the same listing from both
    stores (they share one query, judge/service/_sql.py)."""
    from judge.service._store import JobStore

    pg = open_store(postgres_url, tmp_path / "pg")
    lite = JobStore(tmp_path / "lite")
    try:
        jobs = [admit(pg, 2) for _ in range(6)]
        assert all(job is not None for job in jobs)
        for job in jobs:  # the same jobs in SQLite
            folder = lite.jobs_dir / f".incoming-{job.id}"
            folder.mkdir()
            (folder / "cases.jsonl").write_text(
                "".join(json.dumps(case(f"c{i:03d}")) + "\n" for i in range(2)), "utf-8"
            )
            assert lite.admit(job, folder) is not None
        pg.set_status(jobs[1].id, "cancelled")
        lite.set_status(jobs[1].id, "cancelled")

        def pages(store: Any, **options: Any) -> list[list[str]]:
            seen, before = [], None
            while page := store.listing(limit=2, before=before, **options):
                seen.append([job.id for job in page])
                before = page[-1]
            return seen

        assert pages(pg, status=None) == pages(lite, status=None)
        assert sum(len(page) for page in pages(pg, status=None)) == 6
        assert pages(pg, status="cancelled") == pages(lite, status="cancelled") == [[jobs[1].id]]
    finally:
        pg.close()
        lite.close()


def _service_config(tmp_path: Path, **extra: Any) -> ServiceConfig:
    settings: dict[str, Any] = {"use_cache": False, **extra}
    return ServiceConfig(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", **settings)


def _grade_upload(config: ServiceConfig, body: str, **headers: str) -> tuple[dict[str, Any], str]:
    with InProcessService(config) as service, httpx.Client(base_url=service.base_url) as api:
        created = api.post(
            "/v1/jobs?rubric=faithfulness",
            content=body,
            headers={"Content-Type": "application/x-ndjson", **headers},
        )
        assert created.status_code == 202, created.text
        state = wait_for_job(api, created.json()["id"])
        records = api.get(f"/v1/jobs/{state['id']}/records")
        assert records.status_code == 200, records.text
        return state, records.text


def _stable(text: str) -> list[dict[str, Any]]:
    drop = {"latency_ms", "graded_at", "created_at"}
    return [
        {k: v for k, v in json.loads(line).items() if k not in drop} for line in text.splitlines()
    ]


def test_a_service_on_postgres_grades_as_the_sqlite_one(postgres_url: str, tmp_path: Path) -> None:
    body = "".join(
        json.dumps(case(f"u{i:02d}", answer=f"The free trial lasts {i} days.")) + "\n"
        for i in range(11)
    )
    replicas = Replicas(chunk_cases=4, lease_s=5, poll_s=0.05)
    on_pg, pg_records = _grade_upload(
        _service_config(tmp_path / "pg", database=postgres_url, replicas=replicas), body
    )
    on_sqlite, sqlite_records = _grade_upload(_service_config(tmp_path / "sqlite"), body)
    assert on_pg["status"] == on_sqlite["status"] == "done"
    assert on_pg["progress"] == on_sqlite["progress"] == {"done": 11, "total": 11}
    assert _stable(pg_records) == _stable(sqlite_records)
    pg_summary = {k: v for k, v in on_pg["summary"].items() if k != "run"}
    sqlite_summary = {k: v for k, v in on_sqlite["summary"].items() if k != "run"}
    assert pg_summary == sqlite_summary
    assert on_pg["summary"]["run"]["graded"] == on_sqlite["summary"]["run"]["graded"] == 11


def test_replicas_share_the_verdict_cache(
    postgres_url: str, tmp_path: Path, server_factory: Callable[..., FakeOpenAIServer]
) -> None:
    judge = server_factory()
    judges = {"fake": JudgeSpec(model="judge-test-2024-01-01", base_url=judge.base_url)}
    body = {"rubric": "faithfulness", "cases": [case("shared-1")]}
    records = []
    for name in ("a", "b"):  # two replicas, each its own data and cache folders
        config = _service_config(
            tmp_path / name, database=postgres_url, judges=judges, use_cache=True
        )
        with InProcessService(config) as service, httpx.Client(base_url=service.base_url) as api:
            graded = api.post("/v1/grade", json=body)
            assert graded.status_code == 200, graded.text
            records.append(graded.json()["records"][0])
    assert judge.stats.requests == 1  # the second replica's verdict came from the database
    assert [r["cached"] for r in records] == [False, True]
    assert records[0]["verdict"] == records[1]["verdict"]
    assert count(postgres_url, "SELECT count(*) FROM verdicts") == 1


def test_a_cancelled_job_stops_its_replicas_at_their_next_renewal(
    postgres_url: str, tmp_path: Path
) -> None:
    store = open_store(postgres_url, tmp_path / "a")
    try:
        job = admit(store, 6)
        assert job is not None
        claim = store.claim("replica-a", 30.0)
        assert claim is not None
        store.set_status(job.id, "cancelled")
        assert store.renew(claim, "replica-a", 30.0) is False
        assert store.claim("replica-b", 30.0) is None  # a cancelled job's chunks are not taken
        current = store.get(job.id)
        assert current is not None and current.status == "cancelled"
    finally:
        store.close()


def _labelled_job(config: ServiceConfig, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """A JSON job with human labels of half its cases, then /v1/calibrate on its records."""
    with InProcessService(config) as service, httpx.Client(base_url=service.base_url) as api:
        first = api.post("/v1/jobs", json={"rubric": "faithfulness", "cases": cases})
        job_id = wait_for_job(api, first.json()["id"])["id"]
        records = [json.loads(x) for x in api.get(f"/v1/jobs/{job_id}/records").text.splitlines()]
        humans = [{"id": r["id"], "label": r["label"]} for r in records[::2] if r["status"] == "ok"]
        body = {"rubric": "faithfulness", "cases": cases, "human_labels": humans}
        second = api.post("/v1/jobs", json=body)
        assert second.status_code == 202, second.text
        state = wait_for_job(api, second.json()["id"])
        calibrated = api.post(
            "/v1/calibrate", json={"judge_job": job_id, "human_labels": humans, "n_bootstrap": 50}
        )
        assert calibrated.status_code == 200, calibrated.text
        return {"state": state, "calibration": calibrated.json()}


def test_human_labels_and_calibration_on_postgres_match_sqlite(
    postgres_url: str, tmp_path: Path
) -> None:
    lines = (REPO / "examples" / "cases.jsonl").read_text("utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    replicas = Replicas(chunk_cases=5, lease_s=5, poll_s=0.05)
    pg_config = _service_config(tmp_path / "pg", database=postgres_url, replicas=replicas)
    on_pg = _labelled_job(pg_config, cases)
    on_sqlite = _labelled_job(_service_config(tmp_path / "sqlite"), cases)
    assert on_pg["state"]["status"] == on_sqlite["state"]["status"] == "done"
    pg_summary = {k: v for k, v in on_pg["state"]["summary"].items() if k != "run"}
    sqlite_summary = {k: v for k, v in on_sqlite["state"]["summary"].items() if k != "run"}
    assert "ppi" in json.dumps(pg_summary)
    assert pg_summary == sqlite_summary
    assert on_pg["calibration"] == on_sqlite["calibration"]
