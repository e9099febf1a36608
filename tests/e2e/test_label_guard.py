"""The labelling app checks its token before it reads a body, caps bodies, refuses cross-site
requests and rebound Host names, and off loopback wants a strong token (issue 20, items 7
and 8). Before the fix an anonymous caller got a 422 echoing its input, a 300 MiB body took
the server to 1.6 GB, and `--host 0.0.0.0` took a one-character token."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from judge.cli import main
from judge.label.app import BODY_LIMIT
from tests.label_support import CASES, LabelServer

ECHO = "ZZ-ECHO-5b7e"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabelServer]:
    db = tmp_path_factory.mktemp("label") / "l.sqlite"
    started = LabelServer(CASES, "--rubric", "faithfulness", "--db", db).start()
    yield started
    started.stop()


def test_an_anonymous_body_is_401_and_never_parsed(server: LabelServer) -> None:
    with httpx.Client(base_url=server.base, timeout=30) as anonymous:
        for path in ("/api/answer", "/api/undo"):
            body = {"annotator": ECHO * 40, "case_id": [ECHO], "choice": {"x": ECHO}}
            response = anonymous.post(path, json=body)
            assert response.status_code == 401, response.text
            assert ECHO not in response.text
            broken = anonymous.post(
                path, content=b"{" + ECHO.encode(), headers={"Content-Type": "application/json"}
            )
            assert broken.status_code == 401 and ECHO not in broken.text
        assert anonymous.get("/api/state", params={"annotator": ECHO}).status_code == 401
        assert anonymous.get("/").status_code == 401
        assert anonymous.get("/static/label.js").status_code == 200  # public, holds no data


def test_a_body_over_the_limit_is_413_and_not_held(server: LabelServer) -> None:
    big = json.dumps({"annotator": "ann", "case_id": "x", "note": "n" * (2 * BODY_LIMIT)})
    with server.client() as api:
        response = api.post(
            "/api/answer", content=big, headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 413, response.text

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            for _ in range(64):
                yield b" " * (BODY_LIMIT // 8)

        streamed = api.post(
            "/api/answer", content=chunks(), headers={"Content-Type": "application/json"}
        )
        assert streamed.status_code == 413
        # a normal answer still goes through
        state = api.get("/api/state", params={"annotator": "ann"}).json()
        body = {"annotator": "ann", "case_id": state["item"]["case_id"], "choice": None}
        assert api.post("/api/answer", json=body).status_code == 200


def test_cross_site_and_untyped_posts_and_foreign_hosts_are_refused(server: LabelServer) -> None:
    with server.client() as api:
        state = api.get("/api/state", params={"annotator": "bob"}).json()
        body = json.dumps({"annotator": "bob", "case_id": state["item"]["case_id"]})
        for headers, status in (
            ({"Content-Type": "text/plain"}, 415),
            ({}, 415),
            ({"Content-Type": "application/json", "Origin": "http://evil.example"}, 403),
            ({"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403),
            ({"Content-Type": "application/json", "Host": "evil.example"}, 400),
        ):
            response = api.post("/api/answer", content=body, headers=headers)
            assert response.status_code == status, (headers, response.text)
        assert (
            api.get(
                "/", params={"token": server.token}, headers={"Host": "evil.example"}
            ).status_code
            == 400
        )
        after = api.get("/api/state", params={"annotator": "bob"}).json()
        assert after["progress"]["labelled"] == after["progress"]["skipped"] == 0
        # every answer carries the security headers, the refusals included
        refused = api.post("/api/answer", content=body)
        assert refused.headers["x-content-type-options"] == "nosniff"
        assert "frame-ancestors 'none'" in refused.headers["content-security-policy"]


@pytest.mark.parametrize("token", ["x", "fifteen-chars-x"])
def test_label_beyond_loopback_needs_a_strong_token(
    tmp_path: Path, token: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def started(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the server started with a weak token")

    monkeypatch.setattr(uvicorn.Server, "run", started)
    db = tmp_path / "l.sqlite"
    argv = ["label", str(CASES), "--rubric", "faithfulness", "--db", str(db)]
    code = main([*argv, "--host", "0.0.0.0", "--port", "0"], env={"JUDGE_LABEL_TOKEN": token})
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "at least 16 characters" in err and len(err.splitlines()) == 1
    assert not db.exists()  # refused before anything was created
