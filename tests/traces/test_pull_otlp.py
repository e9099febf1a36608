"""`judge traces pull --otlp`: traces made with the OpenTelemetry SDK, written in the
Collector's file-exporter form, become cases with exactly what the app sent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from judge.cli import main
from judge.errors import InputError, UsageError
from judge.traces.mapping import TraceMapping, cases_from_spans
from judge.traces.spans import read_otlp_file
from tests.traces.otlp_support import (
    REQUESTS,
    Request,
    otlp_json_line,
    rag_provider,
    trace_genai_request,
    trace_request,
    write_otlp,
)


@pytest.fixture
def traced(tmp_path: Path) -> tuple[Path, list[tuple[str, str]]]:
    """An OTLP JSON file of three RAG requests, one line each (as a batch processor
    flushing after each would write), and their (trace id, root span id)."""
    provider, exporter = rag_provider()
    path = tmp_path / "traces.jsonl"
    ids = []
    for request in REQUESTS:
        ids.append(trace_request(provider, request))
        write_otlp(path, exporter.get_finished_spans())
        exporter.clear()
    return path, ids


def _cases(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_pull_gives_what_the_app_sent(traced, tmp_path, capsys) -> None:
    path, ids = traced
    out = tmp_path / "cases.jsonl"
    assert main(["traces", "pull", "--otlp", str(path), "-o", str(out)]) == 0
    cases = _cases(out)
    assert [c["id"] for c in cases] == [span for _, span in ids]
    for case, request, (trace_id, span_id) in zip(cases, REQUESTS, ids, strict=True):
        assert case["question"] == request.question
        assert case["contexts"] == list(request.documents)
        assert case["answer"] == request.answer
        assert case["retrieved_ids"] == [f"doc-{n}" for n in range(len(request.documents))]
        assert case["metadata"] == {
            "trace_id": trace_id,
            "span_id": span_id,
            "response_id": f"chatcmpl-{request.tier}",
        }
    assert "3 cases" in capsys.readouterr().out


def test_slices_come_from_named_attributes(traced, tmp_path) -> None:
    path, _ = traced
    out = tmp_path / "cases.jsonl"
    argv = ["traces", "pull", "--otlp", str(path), "--slice-attr", "user.tier", "-o", str(out)]
    assert main(argv) == 0
    assert [c["slices"] for c in _cases(out)] == [[r.tier] for r in REQUESTS]


def test_genai_conventions_and_base64_ids(tmp_path) -> None:
    """A chat span in the OTel GenAI conventions alone (JSON messages), its ids written in
    protobuf's JSON mapping (base64) rather than hex: both are read."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    provider, exporter = rag_provider()
    trace_id, span_id = trace_genai_request(provider, REQUESTS[0])
    path = tmp_path / "genai.jsonl"
    path.write_text(json.dumps(MessageToDict(encode_spans(exporter.get_finished_spans()))) + "\n")
    spans = [s for _, batch in read_otlp_file(path) for s in batch]
    extraction = cases_from_spans(spans)
    (case,) = extraction.cases
    assert (case.id, case.metadata["trace_id"]) == (span_id, trace_id)
    assert (case.question, case.answer) == (REQUESTS[0].question, REQUESTS[0].answer)
    assert case.metadata["response_id"] == "chatcmpl-genai"


def test_a_trace_lacking_a_needed_field_is_named_not_guessed(tmp_path, capsys) -> None:
    """Faithfulness needs contexts: the GenAI chat span has none; it is counted and named,
    and the complete request still becomes a case."""
    provider, exporter = rag_provider()
    _, good = trace_request(provider, REQUESTS[0])
    trace_id, lacking = trace_genai_request(provider, REQUESTS[1])
    path = tmp_path / "traces.jsonl"
    write_otlp(path, exporter.get_finished_spans())
    out = tmp_path / "cases.jsonl"
    argv = ["traces", "pull", "--otlp", str(path), "--rubric", "faithfulness", "-o", str(out)]
    assert main(argv) == 0
    assert [c["id"] for c in _cases(out)] == [good]
    err = capsys.readouterr().err
    assert "1 answered requests skipped" in err
    assert f"trace {trace_id} span {lacking}: no contexts" in err


def test_no_answer_is_missing_without_a_rubric(tmp_path) -> None:
    provider, exporter = rag_provider()
    trace_request(provider, Request("Is it open?", ("It is open.",), ""))
    spans = [s for _, b in _read(tmp_path, exporter.get_finished_spans()) for s in b]
    extraction = cases_from_spans(spans)
    assert extraction.cases == []
    assert [m.fields for m in extraction.missing] == [("answer",)]


def _read(tmp_path: Path, spans) -> list:
    path = tmp_path / "t.jsonl"
    write_otlp(path, spans, mode="w")
    return list(read_otlp_file(path))


def test_mapping_overridden_in_the_project_config(tmp_path) -> None:
    """[tool.judge.traces] (here judge.toml) moves the question and the answer to other
    attributes: the app's own names."""
    provider, exporter = rag_provider()
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("ask") as span:
        span.set_attribute("openinference.span.kind", "CHAIN")
        span.set_attribute("app.query", "What is the SLA?")
        span.set_attribute("app.reply", "99.9% a month.")
    (tmp_path / "judge.toml").write_text(
        '[traces]\nquestion = "app.query"\nanswer = ["app.reply"]\n'
    )
    (tmp_path / ".git").mkdir()
    write_otlp(tmp_path / "t.jsonl", exporter.get_finished_spans())
    result = subprocess.run(
        [sys.executable, "-m", "judge.cli", "traces", "pull", "--otlp", "t.jsonl", "-o", "c.jsonl"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    (case,) = _cases(tmp_path / "c.jsonl")
    assert (case["question"], case["answer"]) == ("What is the SLA?", "99.9% a month.")


def test_unknown_mapping_key_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="questions: unknown key"):
        TraceMapping.from_table({"questions": "x"}, "judge.toml traces")


def test_bad_line_names_the_file_and_line(traced, tmp_path, capsys) -> None:
    path, _ = traced
    with path.open("a") as out:
        out.write('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x"}]}]}]}\n')
    assert main(["traces", "pull", "--otlp", str(path), "-o", str(tmp_path / "c.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4: not OTLP JSON (missing 'traceId')" in err
    assert not (tmp_path / "c.jsonl").exists()


def test_not_json_is_an_input_error(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("{not json\n")
    with pytest.raises(InputError, match=r"t.jsonl:1: not JSON"):
        list(read_otlp_file(path))


def test_a_torn_last_line_waits_for_its_end(tmp_path) -> None:
    """The exporter is still writing the last line: it is left for the next read."""
    provider, exporter = rag_provider()
    trace_request(provider, REQUESTS[0])
    line = otlp_json_line(exporter.get_finished_spans())
    path = tmp_path / "t.jsonl"
    path.write_text(line + "\n" + line[:40])
    read = list(read_otlp_file(path))
    assert len(read) == 1 and read[0][0] == len(line) + 1
