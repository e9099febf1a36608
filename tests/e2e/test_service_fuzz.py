"""Fuzz the service from its own OpenAPI schema (schemathesis): no 5xx, and every response
matches the schema (status code, content type, headers, body).

Schemathesis is driven through its Python API here, one Hypothesis run per operation
(`operation.as_strategy()` under `@given`), not through its pytest plugin: the plugin's
lazy `from_fixture` loader reaches into pytest internals (`Function._nodeid`) that
pytest 9.2 no longer has, so the same test now runs on every pytest the dev extra allows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.test_service_support import TOKEN, ServiceProcess, write_config

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
EXAMPLES_PER_OPERATION = 30
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,  # the same examples on every run and machine
    database=None,  # nothing written into the repository
)


@schemathesis.serializer("application/x-ndjson")
def _jsonl(ctx: Any, value: Any) -> bytes:
    """A JSONL upload as generated: a string body sent as it is."""
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else b""


@pytest.fixture(scope="module")
def fuzzed_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    folder: Path = tmp_path_factory.mktemp("fuzz")
    config = write_config(
        folder / "service.yaml",
        token=TOKEN,
        data_dir=str(folder / "data"),
        cache_dir=str(folder / "cache"),
        limits={"request_timeout_s": 20},
    )
    server = ServiceProcess(config).start()
    yield server
    server.stop()


def operations(base_url: str) -> list[Any]:
    """Every operation in the served schema; a part that does not load fails the test."""
    schema = schemathesis.openapi.from_url(base_url + "/openapi.json")
    return [result.ok() for result in schema.get_all_operations()]


def fuzz(operation: Any) -> None:
    """One Hypothesis run over generated requests for `operation`, each sent and checked."""

    @FUZZ_SETTINGS
    @given(case=operation.as_strategy())
    def run(case: Any) -> None:
        case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"}, checks=CHECKS)

    try:
        run()
    except BaseException as exc:
        exc.add_note(f"operation: {operation.label}")
        raise


@pytest.mark.slow
def test_openapi_fuzz(fuzzed_service: ServiceProcess) -> None:
    found = operations(fuzzed_service.base_url)
    labels = {operation.label for operation in found}
    assert {"POST /v1/grade", "POST /v1/jobs", "GET /v1/jobs/{job_id}"} <= labels, labels
    for operation in found:
        fuzz(operation)


# ---- issue 20: the records file a resumed job reads ---------------------------------------

RESUME_EXAMPLES = 40


def _records_of_a_finished_job(folder: Path) -> bytes:
    """The records.jsonl a job of four cases ends with (the rules judge)."""
    import asyncio

    from judge.service._store import JobStore
    from tests.e2e.test_service_store import make_job, run_jobs
    from tests.helpers import case

    store = JobStore(folder)
    try:
        job = make_job(store, [json.dumps(case(f"c{i}")) for i in range(4)], total=4)
        asyncio.run(run_jobs(store, job))
        return store.records_path(job).read_bytes()
    finally:
        store.close()


@pytest.fixture(scope="module")
def finished_records(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return _records_of_a_finished_job(tmp_path_factory.mktemp("finished"))


def test_fuzz_the_records_file_a_resumed_job_reads(finished_records: bytes) -> None:
    """A job resumed over a records file an earlier run left, damaged (torn, junk, a field
    of the wrong type, no final newline, out of order): it always ends `done` with every
    record or `failed` with a reason, never stuck or crashed."""
    import asyncio
    import tempfile

    from hypothesis import strategies as st

    from judge.service._store import JobStore
    from tests.e2e.test_service_store import make_job, run_jobs
    from tests.helpers import case

    edits = st.sampled_from(["none", "torn", "junk", "score", "status", "nonewline", "reverse"])

    @settings(FUZZ_SETTINGS, max_examples=RESUME_EXAMPLES)
    @given(edit=edits, at=st.integers(0, 3), cut=st.integers(1, 400), junk=st.binary(max_size=9))
    def run(edit: str, at: int, cut: int, junk: bytes) -> None:
        lines = finished_records.splitlines(keepends=True)
        if edit in ("score", "status"):
            record = json.loads(lines[at])
            record[edit] = "high" if edit == "score" else 7
            lines[at] = json.dumps(record).encode() + b"\n"
        elif edit == "reverse":
            lines.reverse()
        text = b"".join(lines)
        if edit == "torn":
            text = text[: min(cut, len(text) - 1)]
        elif edit == "junk":
            text += junk + b"\n"
        elif edit == "nonewline":
            text = text.rstrip(b"\n")
        with tempfile.TemporaryDirectory(prefix="judge-resume-") as name:
            store = JobStore(Path(name))
            try:
                job = make_job(store, [json.dumps(case(f"c{i}")) for i in range(4)], total=4)
                store.records_path(job).write_bytes(text)
                asyncio.run(run_jobs(store, job))
                ended = store.get(job.id)
                assert ended is not None and ended.status in ("done", "failed"), ended
                if ended.status == "failed":
                    assert ended.error and "internal error" not in ended.error, ended.error
                else:
                    assert len(store.records_path(job).read_bytes().splitlines()) == 4
            finally:
                store.close()

    run()
