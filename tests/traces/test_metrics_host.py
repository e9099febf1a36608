"""`judge watch --metrics-port`: /metrics behind judge.web's Host check, so a page that
DNS rebinding points at 127.0.0.1 cannot read it; Prometheus scraping 127.0.0.1 or
localhost still can."""

from __future__ import annotations

import http.client

import pytest

from judge.engine.metrics import GradingMetrics
from judge.traces.metrics_http import serve_metrics


def _get(port: int, host: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/metrics", headers={"Host": host})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def port() -> int:
    server = serve_metrics(GradingMetrics().registry, 0)
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("host", ["attacker.example", "metrics.corp.example:9464", "10.0.0.7"])
def test_a_foreign_host_is_refused(port, host) -> None:
    status, body = _get(port, host)
    assert status == 400 and b"bad_host" in body and b"judge_" not in body


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}"])
def test_loopback_names_are_served(port, host) -> None:
    status, body = _get(port, host.format(port=port))
    assert status == 200 and b"judge_" in body
