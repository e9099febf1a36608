"""`GET /metrics` on a real `judge serve`: it counts what was graded, through /v1/grade and
through jobs, and stays behind the token when the service has one."""

from __future__ import annotations

import pytest

from tests.test_service_support import TOKEN, ServiceProcess, wait_for_job, write_config

# the service's end-to-end group (a judge serve process scraped for /metrics): run by .ci/slow
pytestmark = pytest.mark.slow

FAITHFUL = {
    "id": "a",
    "question": "q?",
    "contexts": ["It lasts 14 days."],
    "answer": "It lasts 14 days.",
}
UNFAITHFUL = {**FAITHFUL, "id": "b", "answer": "It lasts 40 days."}


def _metric(text: str, name: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_metrics_count_what_was_graded(tmp_path) -> None:
    config = write_config(tmp_path / "service.yaml", data_dir=str(tmp_path / "data"))
    server = ServiceProcess(config).start(timeout=120)  # a loaded machine starts slowly
    try:
        with server.client(token=None) as api:
            before = api.get("/metrics")
            assert before.status_code == 200
            assert before.headers["content-type"].startswith("text/plain")
            graded = api.post(
                "/v1/grade", json={"rubric": "faithfulness", "cases": [FAITHFUL, UNFAITHFUL]}
            )
            assert graded.status_code == 200
            job = api.post("/v1/jobs", json={"rubric": "faithfulness", "cases": [FAITHFUL]})
            wait_for_job(api, job.json()["id"])
            text = api.get("/metrics").text
    finally:
        server.stop()
    assert _metric(text, 'judge_cases_graded_total{rubric="faithfulness",status="ok"}') == 3.0
    assert _metric(text, 'judge_pass_rate{rubric="faithfulness"}') == 2 / 3
    assert _metric(text, 'judge_latency_seconds_count{rubric="faithfulness"}') == 3.0
    assert _metric(text, "judge_queue_depth") == 0.0


def test_metrics_need_the_token_when_there_is_one(tmp_path) -> None:
    from fastapi.testclient import TestClient

    from judge.service import create_app, load_service_config

    env = {"JUDGE_SERVICE_TOKEN": TOKEN}
    config = load_service_config(
        None, env, data_dir=tmp_path / "data", cache_dir=None, database=None
    )
    with TestClient(create_app(config)) as api:
        assert api.get("/metrics").status_code == 401
        headers = {"Authorization": f"Bearer {TOKEN}"}
        assert api.get("/metrics", headers=headers).status_code == 200


def test_serve_sends_one_event_per_record(tmp_path) -> None:
    """`otel_endpoint` (or `judge serve --otel-endpoint`): the service's records reach a real
    OTLP/HTTP receiver, all of them by the time the server has stopped."""
    from fastapi.testclient import TestClient

    from judge.service import create_app, load_service_config
    from tests.traces.otlp_support import OtlpReceiver

    trace = {"trace_id": "ab" * 16, "span_id": "cd" * 8}
    with OtlpReceiver() as receiver:
        config = load_service_config(
            None, {}, data_dir=tmp_path / "data", cache_dir=None, otel_endpoint=receiver.url
        )
        with TestClient(create_app(config)) as api:
            body = {
                "rubric": "faithfulness",
                "cases": [{**FAITHFUL, "metadata": trace}, UNFAITHFUL],
            }
            assert api.post("/v1/grade", json=body).status_code == 200
    events = {e.attributes["judge.record.id"]: e for e in receiver.events}
    assert set(events) == {"a", "b"}
    assert (events["a"].trace_id, events["a"].span_id) == (trace["trace_id"], trace["span_id"])
    assert events["b"].attributes["gen_ai.evaluation.score.label"] == "unfaithful"
