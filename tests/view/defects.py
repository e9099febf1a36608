"""Helpers of the viewer's issue-45 tests: hand-made records, a viewer served over them,
and a bound on anything that could hang."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.view import create_view_app, open_viewer
from judge.view.viewer import Viewer
from tests.helpers import ends
from tests.view.support import TOKEN, write_jsonl

AUTH = {"Authorization": f"Bearer {TOKEN}"}
BOUND_S = 120  # a hang is a failure, not a slow pass: far above any honest start-up


def record(
    case_id: str,
    *,
    rubric: str = "faithfulness",
    score: float | None = 1.0,
    status: str = "ok",
    label: str | None = "faithful",
) -> dict[str, Any]:
    return {
        "id": case_id, "rubric": rubric, "rubric_version": 1, "rubric_sha256": "0" * 64,
        "judge": {"model": "rules"}, "status": status, "verdict": None, "score": score,
        "label": label, "error": None, "raw": None, "cached": False,
        "usage": {"prompt_tokens": 1, "completion_tokens": 1}, "latency_ms": 1.0,
    }  # fmt: skip


def run_file(path: Path, n: int, **fields: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_jsonl(path, [record(f"case-{i:03d}", **fields) for i in range(n)])


def bounded(work: Callable[[], Any]) -> Any:
    """`work()` in a thread, failed if it has not returned within BOUND_S."""
    return ends(work, BOUND_S)


def serve(viewer: Viewer) -> TestClient:
    return TestClient(create_view_app(viewer, token=TOKEN), base_url="http://127.0.0.1")


def listed(client: TestClient) -> dict[str, dict[str, Any]]:
    response = client.get("/api/runs", headers=AUTH)
    assert response.status_code == 200, response.text
    return {Path(r["path"]).name: r for r in response.json()}


def one_line_error(response: Any) -> str:
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    message = response.json()["error"]["message"]
    assert "\n" not in message and "Traceback" not in message
    return str(message)


@pytest.fixture
def viewer_of(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    opened: list[Viewer] = []

    def make(*paths: Path, **options: Any) -> TestClient:
        viewer = bounded(lambda: open_viewer(list(paths), index_dir=tmp_path / "idx", **options))
        opened.append(viewer)
        return serve(viewer)

    yield make
    for viewer in opened:
        viewer.engine.close()
