"""No web page can drive the tokenless loopback service, or read it by DNS rebinding
(issue 20, item 7; the labelling app's side is in test_label_guard.py).

Before the fix a cross-site POST with no Content-Type (what `fetch(url, {mode: "no-cors"})`
sends, with no preflight) was parsed as JSON and started a job on the default judge, and
any Host was answered, so a rebound name could read every reply.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from judge.web.guard import RequestGuard, host_name
from tests.helpers import case
from tests.test_service_support import ServiceProcess, wait_for_job, write_config

# the service's end-to-end group (a judge serve process per origin): run by .ci/slow
pytestmark = pytest.mark.slow

BODY = json.dumps({"rubric": "faithfulness", "cases": [case()]}).encode()
EVIL = "http://evil.example"


@pytest.fixture(scope="module")
def tokenless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    folder = tmp_path_factory.mktemp("tokenless")
    config = write_config(folder / "service.yaml", data_dir=str(folder / "data"))
    server = ServiceProcess(config).start()
    yield server
    server.stop()


def job_folders(server: ServiceProcess) -> list[Path]:
    jobs = server.config.parent / "data" / "jobs"
    return sorted(p for p in jobs.iterdir() if p.name.startswith("job_"))


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": EVIL, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"},
        {"Origin": EVIL},
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": "null"},
        {"Origin": "http://localhost:1"},  # another local app: same site, other origin
        {"Content-Type": "text/plain;charset=UTF-8"},
        {"Content-Type": "application/x-www-form-urlencoded"},
        {"Content-Type": "multipart/form-data; boundary=x"},
        {},  # no Content-Type at all
    ],
    ids=[
        "no-cors-fetch",
        "origin",
        "fetch-site",
        "null-origin",
        "other-port",
        "text-plain",
        "form",
        "multipart",
        "no-type",
    ],
)
@pytest.mark.parametrize("path", ["/v1/jobs", "/v1/grade"])
def test_a_cross_site_or_untyped_post_is_refused_and_starts_nothing(
    tokenless: ServiceProcess, headers: dict[str, str], path: str
) -> None:
    before = job_folders(tokenless)
    with httpx.Client(base_url=tokenless.base_url, timeout=30) as client:
        response = client.post(path, content=BODY, headers=headers)  # bytes: no type added
    assert response.status_code in (403, 415), response.text
    assert response.json()["error"]["type"] in ("cross_site", "unsupported_media_type")
    assert job_folders(tokenless) == before


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "127.0.0.1.nip.io"])
@pytest.mark.parametrize("method,path", [("GET", "/healthz"), ("GET", "/v1/judges"),
                                         ("POST", "/v1/jobs"), ("GET", "/docs")])  # fmt: skip
def test_a_foreign_host_on_loopback_is_400(
    tokenless: ServiceProcess, host: str, method: str, path: str
) -> None:
    """DNS rebinding: a page's own name pointed at 127.0.0.1 gets no answer to read."""
    before = job_folders(tokenless)
    with httpx.Client(base_url=tokenless.base_url, timeout=30) as client:
        headers = {"Host": host, "Content-Type": "application/json"}
        response = client.request(method, path, content=BODY, headers=headers)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["type"] == "bad_host"
    assert "rules" not in response.text and host not in response.text  # nothing, no echo
    assert job_folders(tokenless) == before


def test_the_service_still_answers_its_own_names_and_same_origin_pages(
    tokenless: ServiceProcess,
) -> None:
    port = tokenless.port
    with httpx.Client(base_url=tokenless.base_url, timeout=30) as client:
        for host in (
            f"127.0.0.1:{port}",
            f"localhost:{port}",
            "localhost",
            f"app.localhost:{port}",
        ):
            assert client.get("/healthz", headers={"Host": host}).status_code == 200, host
        same_origin = {
            "Origin": f"http://127.0.0.1:{port}",
            "Sec-Fetch-Site": "same-origin",
            "Content-Type": "application/json",
        }
        created = client.post("/v1/jobs", content=BODY, headers=same_origin)
        assert created.status_code == 202, created.text
        assert wait_for_job(client, created.json()["id"])["status"] == "done"
        # a client that is not a browser sends neither header
        plain = client.post("/v1/grade", content=BODY, headers={"Content-Type": "application/json"})
        assert plain.status_code == 200, plain.text
        upload = client.post(
            "/v1/jobs?rubric=faithfulness",
            content=json.dumps(case("u1")).encode() + b"\n",
            headers={"Content-Type": "application/x-ndjson"},
        )
        assert upload.status_code == 202, upload.text


def test_allowed_hosts_adds_a_proxy_name() -> None:
    guard = RequestGuard(app=None, allowed_hosts=["Judge.Internal"])  # type: ignore[arg-type]

    def scope(host: str) -> dict[str, object]:
        headers = [(b"host", host.encode())]
        return {"type": "http", "method": "GET", "path": "/", "headers": headers,
                "server": ("127.0.0.1", 8080)}  # fmt: skip

    assert guard.check(scope("judge.internal:443")) is None
    assert guard.check(scope("judge.external"))[0] == 400  # type: ignore[index]
    assert [host_name(h) for h in ("[::1]:80", "LOCALHOST:1", "a.b", "::1")] == [
        "::1",
        "localhost",
        "a.b",
        "::1",
    ]
