"""Against a real Phoenix (`.ci/phoenix` starts one; its URL in $JUDGE_TEST_PHOENIX_URL): a
small RAG app, the openai SDK instrumented with OpenInference against the project's
loopback test server, sends its traces; the cases pulled back are exactly what the app
sent, and the verdicts pushed show as span annotations Phoenix returns."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from judge.cli import main
from judge.testing import FakeOpenAIServer, Reply
from judge.traces.phoenix import PhoenixClient
from tests.traces.otlp_support import REQUESTS, Request

pytestmark = pytest.mark.phoenix


@pytest.fixture(scope="module")
def phoenix() -> str:
    url = os.environ.get("JUDGE_TEST_PHOENIX_URL")
    if not url:
        pytest.fail("set JUDGE_TEST_PHOENIX_URL (run .ci/phoenix)")
    return url


class RagApp:
    """Retrieves (a RETRIEVER span), asks the model through the instrumented openai SDK (an
    LLM span made by OpenInference), answers (a CHAIN root holding question and answer)."""

    def __init__(self, phoenix: str, project: str, server: FakeOpenAIServer) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        self.server = server
        self.provider = TracerProvider(
            resource=Resource.create({"openinference.project.name": project})
        )
        exporter = OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces")
        self.provider.add_span_processor(SimpleSpanProcessor(exporter))
        self.instrumentor = OpenAIInstrumentor()
        self.instrumentor.instrument(tracer_provider=self.provider)
        self.client = openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0)
        self.tracer = self.provider.get_tracer("rag-app")

    def ask_model(self, request: Request) -> str:
        self.server.script(Reply(content=request.answer))
        reply = self.client.chat.completions.create(
            model="rag-model",
            messages=[
                {"role": "system", "content": "Answer from: " + " ".join(request.documents)},
                {"role": "user", "content": request.question},
            ],
        )
        return str(reply.choices[0].message.content)

    def answer(self, request: Request) -> tuple[str, str]:
        """(trace id, root span id) of one answered request."""
        with self.tracer.start_as_current_span("rag") as root:
            root.set_attribute("openinference.span.kind", "CHAIN")
            root.set_attribute("input.value", request.question)
            with self.tracer.start_as_current_span("retrieve") as retriever:
                retriever.set_attribute("openinference.span.kind", "RETRIEVER")
                for n, text in enumerate(request.documents):
                    retriever.set_attribute(f"retrieval.documents.{n}.document.content", text)
            root.set_attribute("output.value", self.ask_model(request))
            context = root.get_span_context()
        return f"{context.trace_id:032x}", f"{context.span_id:016x}"

    def close(self) -> None:
        self.instrumentor.uninstrument()
        self.provider.shutdown()


@pytest.fixture
def app(phoenix: str) -> Iterator[tuple[RagApp, str]]:
    project = f"rag-{uuid.uuid4().hex[:8]}"
    with FakeOpenAIServer() as server:
        rag = RagApp(phoenix, project, server)
        try:
            yield rag, project
        finally:
            rag.close()


def _wait_for_roots(phoenix: str, project: str, count: int) -> None:
    """Phoenix stores what it is sent asynchronously: wait until it holds the roots."""
    deadline = time.monotonic() + 60
    with PhoenixClient(phoenix) as client:
        while time.monotonic() < deadline:
            try:
                roots = [s for s in client.spans(project) if s.parent_id is None]
            except Exception:
                roots = []
            if len(roots) >= count:
                return
            time.sleep(0.2)
    raise AssertionError(f"Phoenix did not store {count} root spans of {project}")


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_pull_grade_push_and_read_back(app, phoenix, tmp_path) -> None:
    rag, project = app
    sent = [rag.answer(request) for request in REQUESTS]
    _wait_for_roots(phoenix, project, len(sent))
    cases, graded = tmp_path / "cases.jsonl", tmp_path / "graded.jsonl"
    where = ["--phoenix", phoenix, "--project", project]
    assert main(["traces", "pull", *where, "--rubric", "faithfulness", "-o", str(cases)]) == 0
    pulled = {c["id"]: c for c in _lines(cases)}
    assert set(pulled) == {span_id for _, span_id in sent}
    for (trace_id, span_id), request in zip(sent, REQUESTS, strict=True):
        case = pulled[span_id]
        assert case["question"] == request.question
        assert case["contexts"] == list(request.documents)
        assert case["answer"] == request.answer
        assert case["metadata"]["trace_id"] == trace_id

    assert main(["grade", str(cases), "--rubric", "faithfulness", "-o", str(graded)]) == 0
    assert main(["traces", "push", str(graded), *where]) == 0
    records = {r["id"]: r for r in _lines(graded)}
    with PhoenixClient(phoenix) as client:
        annotations = client.annotations(project, list(records))
    assert {a["span_id"] for a in annotations} == set(records)
    for annotation in annotations:
        record = records[annotation["span_id"]]
        assert annotation["name"] == "faithfulness"
        assert annotation["result"]["score"] == record["score"]
        assert annotation["result"]["label"] == record["label"]
        assert annotation["result"]["explanation"]
    # pushed again: upserted on name, span and identifier, not duplicated
    assert main(["traces", "push", str(graded), *where]) == 0
    with PhoenixClient(phoenix) as client:
        assert len(client.annotations(project, list(records))) == len(records)


def test_an_instrumented_llm_call_alone_is_a_case(app, phoenix, tmp_path) -> None:
    """No chain around it: the LLM span OpenInference made is the root; its question is the
    last user message and its answer the model's reply. No retriever: no contexts, so a
    rubric that needs them names the trace instead of guessing."""
    rag, project = app
    with rag.tracer.start_as_current_span("outside"):  # a non-LLM parent is not the request
        pass
    answer = rag.ask_model(REQUESTS[1])
    _wait_for_roots(phoenix, project, 2)
    out = tmp_path / "cases.jsonl"
    where = ["--phoenix", phoenix, "--project", project]
    assert main(["traces", "pull", *where, "-o", str(out)]) == 0
    (case,) = _lines(out)
    assert (case["question"], case["answer"]) == (REQUESTS[1].question, answer)
    assert main(["traces", "pull", *where, "--rubric", "faithfulness", "-o", str(out)]) == 0
    assert _lines(out) == []


def test_watch_pushes_verdicts_as_it_grades(app, phoenix, tmp_path) -> None:
    rag, project = app
    sent = [rag.answer(request) for request in REQUESTS]
    _wait_for_roots(phoenix, project, len(sent))
    folder = tmp_path / "watch"
    argv = ["watch", "--phoenix", phoenix, "--project", project, "--rubric", "faithfulness"]
    argv += ["-o", str(folder), "--once", "--settle-seconds", "0", "--push"]
    assert main(argv) == 0
    records = _lines(folder / "faithfulness.jsonl")
    assert sorted(r["id"] for r in records) == sorted(span for _, span in sent)
    with PhoenixClient(phoenix) as client:
        annotations = client.annotations(project, [r["id"] for r in records])
    assert len(annotations) == len(records)
    assert main(argv) == 0  # nothing new: nothing graded twice
    assert len(_lines(folder / "faithfulness.jsonl")) == len(records)
