"""Fuzz the service from its own OpenAPI schema (schemathesis): no 5xx, and every response
matches the schema (status code, content type, headers, body)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
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


@pytest.fixture(scope="module")
def api_schema(fuzzed_service: ServiceProcess) -> Any:
    return schemathesis.openapi.from_url(fuzzed_service.base_url + "/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_openapi_fuzz(case: Any, fuzzed_service: ServiceProcess) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"}, checks=CHECKS)
