"""`judge grade --otel-endpoint`: one `gen_ai.evaluation.result` event per record, received
and decoded by a real OTLP/HTTP receiver; refusals retried and counted; the records file
the same with or without the export."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from judge.cli import main
from judge.schemas import GradedRecord
from judge.traces.otel import EVENT_NAME, EvaluationExporter, logs_endpoint
from tests.traces.otlp_support import (
    REQUESTS,
    OtlpReceiver,
    rag_provider,
    trace_request,
    write_otlp,
)


@pytest.fixture
def cases(tmp_path: Path) -> tuple[Path, list[tuple[str, str]]]:
    provider, exporter = rag_provider()
    ids = [trace_request(provider, r) for r in REQUESTS]
    traces = tmp_path / "traces.jsonl"
    write_otlp(traces, exporter.get_finished_spans())
    out = tmp_path / "cases.jsonl"
    assert main(["traces", "pull", "--otlp", str(traces), "-o", str(out)]) == 0
    return out, ids


def _grade(cases: Path, out: Path, *extra: str) -> int:
    return main(["grade", str(cases), "--rubric", "faithfulness", "-o", str(out), *extra])


def test_one_event_per_record_parented_to_its_span(cases, tmp_path, capsys) -> None:
    path, ids = cases
    out = tmp_path / "graded.jsonl"
    with OtlpReceiver() as receiver:
        assert _grade(path, out, "--otel-endpoint", receiver.url) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(receiver.events) == len(records) == 3
    by_span = {e.span_id: e for e in receiver.events}
    for record, (trace_id, span_id), request in zip(records, ids, REQUESTS, strict=True):
        event = by_span[span_id]
        assert event.event_name == EVENT_NAME
        assert event.trace_id == trace_id
        assert event.attributes["gen_ai.evaluation.name"] == "faithfulness"
        assert event.attributes["gen_ai.evaluation.score.value"] == record["score"]
        assert event.attributes["gen_ai.evaluation.score.label"] == record["label"]
        assert event.attributes["gen_ai.evaluation.explanation"]
        assert event.attributes["gen_ai.response.id"] == f"chatcmpl-{request.tier}"
    assert "otel: 3 gen_ai.evaluation.result events sent" in capsys.readouterr().err


def test_cases_not_from_a_trace_send_unparented_events(tmp_path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"id": "a", "question": "q?", "contexts": ["c"], "answer": "c."}) + "\n"
    )
    with OtlpReceiver() as receiver:
        assert _grade(cases, tmp_path / "g.jsonl", "--otel-endpoint", receiver.url) == 0
    (event,) = receiver.events
    assert (event.trace_id, event.span_id) == ("", "")
    assert "gen_ai.response.id" not in event.attributes


def test_a_refused_batch_is_sent_again_and_counted(cases, tmp_path, capsys) -> None:
    path, _ = cases
    with OtlpReceiver(refuse=1, refuse_status=400) as receiver:
        assert _grade(path, tmp_path / "g.jsonl", "--otel-endpoint", receiver.url) == 0
    assert receiver.requests == 2 and len(receiver.events) == 3
    assert "(1 batches sent again)" in capsys.readouterr().err


def test_an_unreachable_collector_never_loses_or_changes_a_record(
    cases, tmp_path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "1")  # the SDK's own retries, bounded
    path, _ = cases
    plain, exported = tmp_path / "plain.jsonl", tmp_path / "exported.jsonl"
    assert _grade(path, plain) == 0
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    assert _grade(path, exported, "--otel-endpoint", dead) == 0
    assert "3 not delivered (the records file keeps them)" in capsys.readouterr().err
    assert _without_latency(plain) == _without_latency(exported)


def _without_latency(path: Path) -> list[dict]:
    return [
        {k: v for k, v in json.loads(line).items() if k not in ("latency_ms", "graded_at")}
        for line in path.read_text().splitlines()
    ]


def test_exporter_counts_without_sleeping() -> None:
    """Every attempt refused: the batch is tried `attempts` times, then counted failed."""
    pauses: list[float] = []
    record = GradedRecord.model_validate(
        {
            "id": "x",
            "rubric": "faithfulness",
            "rubric_version": 1,
            "rubric_sha256": "0" * 64,
            "judge": {"model": "rules", "output_mode": "rules"},
            "status": "ok",
            "score": 1.0,
            "label": "faithful",
        }
    )
    with OtlpReceiver(refuse=10) as receiver:
        exporter = EvaluationExporter(receiver.url, attempts=3, sleep=pauses.append)
        exporter.send(record)
        exporter.close()
    assert receiver.requests == 3
    assert (exporter.counts.exported, exporter.counts.failed, exporter.counts.retries) == (0, 1, 2)
    assert pauses == [0.5, 1.0]


def test_endpoint_forms() -> None:
    assert logs_endpoint("http://h:4318") == "http://h:4318/v1/logs"
    assert logs_endpoint("http://h:4318/v1/logs/") == "http://h:4318/v1/logs"


def test_bad_endpoint_is_a_usage_error_before_grading(cases, tmp_path, capsys) -> None:
    path, _ = cases
    out = tmp_path / "g.jsonl"
    assert _grade(path, out, "--otel-endpoint", "collector:4318") == 2
    assert "--otel-endpoint must be an http(s) URL" in capsys.readouterr().err
    assert not out.exists()
