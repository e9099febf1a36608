"""Fuzz the service from its own OpenAPI schema (schemathesis): no 5xx, and every response
matches the schema (status code, content type, headers, body).

Schemathesis is driven through its Python API here, one Hypothesis run per operation
(`operation.as_strategy()` under `@given`), not through its pytest plugin: the plugin's
lazy `from_fixture` loader reaches into pytest internals (`Function._nodeid`) that
pytest 9.2 no longer has, so the same test now runs on every pytest the dev extra allows.
"""

from __future__ import annotations

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
