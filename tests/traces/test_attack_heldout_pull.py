"""Held-out attacks, continued: agent traces with thousands of tool spans or calls and tool
spans whose request never came (the conversation path), lone surrogates and infinite
integers in span JSON, Phoenix ids no case can take and a clock stepped back under a
Phoenix watch, passwords typed without percent-encoding, and `traces push` records that
are no file or answers that store nothing. Each ends in bounded time with one line."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.traces.conversation import cases_of_traces
from judge.traces.mapping import TraceMapping
from judge.traces.spans import Span
from tests.traces.phoenix_fake import Answer, FakePhoenix, json_answer
from tests.traces.test_attack_heldout import _ends, _fifo, _one_error, _watch, _write, _zero_link

TRACE = "cd" * 16


def _agent_trace(tools: int, *, model_between: bool = False) -> list[Span]:
    """An AGENT root, a model call, then `tools` tool spans (a model call after each when
    `model_between`), none of their calls recorded by the model: each is made up."""
    kind = "openinference.span.kind"
    user = {"llm.input_messages.0.message.role": "user"}
    user["llm.input_messages.0.message.content"] = "Check every warehouse."
    root = Span(TRACE, "0" * 15 + "1", None, "agent", 1, {kind: "AGENT", "input.value": "q"})
    spans = [root, Span(TRACE, "0" * 15 + "2", root.span_id, "llm", 2, {kind: "LLM", **user})]
    for n in range(tools):
        tool = {kind: "TOOL", "tool.name": f"stock_{n % 7}", "output.value": f"{n} left"}
        spans.append(Span(TRACE, f"{n + 16:016x}", root.span_id, "tool", 10 + 2 * n, tool))
        if model_between:
            again = {kind: "LLM", **user, "llm.output_messages.0.message.role": "assistant"}
            spans.append(
                Span(TRACE, f"{n + 16:08x}{'f' * 8}", root.span_id, "llm", 11 + 2 * n, again)
            )
    return spans


def test_thousands_of_tool_spans_make_one_whole_conversation() -> None:
    """Each made-up call rescanned the transcript (quadratic): 9,000 tool spans took seconds,
    100,000 would take most of an hour."""
    found = _ends(
        lambda: cases_of_traces(_agent_trace(4_000, model_between=True), shape="conversations")
    )
    (case,) = found.cases
    assert sum(m.role == "tool" for m in case.messages) == 4_000


def test_more_calls_than_a_case_holds_is_refused_in_one_line() -> None:
    """Past the messages a case may hold the trace was still read whole, then dropped as
    'no valid messages' after minutes; now it is refused at once, and said."""
    found = _ends(lambda: cases_of_traces(_agent_trace(30_000), shape="conversations"))
    assert found.cases == [] and found.missing == []
    (line,) = found.broken
    assert "30001 model and tool calls" in line and "refused" in line


def _graded(tmp_path: Path, count: int) -> Path:
    path, folder = tmp_path / "collector.out", tmp_path / "graded"
    _write(path, range(count))
    assert _watch(path, folder) == 0
    return folder / "faithfulness.jsonl"


@pytest.mark.parametrize("data", [[None, None, None], [{}, {}, {}], [1, 2, 3]])
def test_entries_that_are_no_stored_annotation_are_not_counted(data, tmp_path, capsys) -> None:
    """A 200 whose `data` lists three things that are not annotations (no ids): nothing
    is reported written, and the three graded records are not called 'not graded'."""
    records = _graded(tmp_path, 3)
    capsys.readouterr()

    def route(method: str, path: str, query: Any, body: bytes) -> Answer:
        return json_answer({"data": data})

    with FakePhoenix(route) as fake:
        argv = ["traces", "push", str(records), "--phoenix", fake.url, "--project", "p"]
        main(argv)
    out = capsys.readouterr().out
    assert "0 span annotations written" in out
    assert "not graded" not in out and "3 sent that Phoenix did not say it stored" in out


def _surrogate_line() -> str:
    """A request whose question, document and slice hold lone surrogates, escaped as JSON
    allows (`"\\udc80"`): valid JSON, but no UTF-8 file can hold the text as decoded."""

    def kv(key: str, text: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": text}}

    root, trace = "5" * 16, "6" * 32
    messages = json.dumps([{"role": "user", "content": "rates \udfff?"}])
    spans = [
        {
            "traceId": trace,
            "spanId": root,
            "name": "rag",
            "attributes": [
                kv("openinference.span.kind", "CHAIN"),
                kv("llm.input_messages", messages),
                kv("output.value", "fine \ud800"),
                kv("app.region", "\udbff"),
            ],
        },
        {
            "traceId": trace,
            "spanId": "7" * 16,
            "parentSpanId": root,
            "name": "fetch",
            "attributes": [
                kv("openinference.span.kind", "RETRIEVER"),
                kv("retrieval.documents.0.document.content", "rates \udc80 rise"),
            ],
        },
    ]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n"


def test_lone_surrogates_in_a_pull_become_replacement_characters(tmp_path, capsys) -> None:
    """Writing the cases file was a traceback (surrogates not allowed)."""
    path, output = tmp_path / "spans.otlp", tmp_path / "cases.jsonl"
    path.write_text(_surrogate_line())
    argv = ["traces", "pull", "--otlp", str(path), "-o", str(output)]
    assert main([*argv, "--slice-attr", "app.region"]) == 0
    assert "Traceback" not in capsys.readouterr().err
    (case,) = [json.loads(line) for line in output.read_bytes().decode("utf-8").splitlines()]
    assert case["contexts"] == ["rates \ufffd rise"] and case["slices"] == ["\ufffd"]


def test_lone_surrogates_do_not_end_a_watch(tmp_path, capsys) -> None:
    path, folder = tmp_path / "collector.out", tmp_path / "watched"
    path.write_text(_surrogate_line())
    assert _watch(path, folder, "--slice-attr", "app.region") == 0
    assert "Traceback" not in capsys.readouterr().err
    assert (folder / "faithfulness.jsonl").read_bytes().decode("utf-8").count("\n") == 1


def test_lone_surrogates_from_phoenix_are_replaced(tmp_path, capsys) -> None:
    span = {
        "name": "rag",
        "context": {"trace_id": "8" * 32, "span_id": "9" * 16},
        "span_kind": "CHAIN",
        "start_time": "2026-12-01T10:00:00+00:00",
        "attributes": {"input.value": "why \ud800?", "output.value": "because \udfff"},
    }
    body = json.dumps({"data": [span], "next_cursor": None}).encode()
    output = tmp_path / "cases.jsonl"
    with FakePhoenix(lambda *_: Answer(200, body)) as fake:
        argv = ["traces", "pull", "--phoenix", fake.url, "--project", "p", "-o", str(output)]
        assert main(argv) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert json.loads(output.read_bytes())["question"] == "why \ufffd?"


@pytest.mark.parametrize("span_id", ["e" * 513, ""], ids=["513-chars", "empty"])
def test_a_phoenix_span_id_no_case_can_take_is_skipped_and_said(span_id, tmp_path, capsys) -> None:
    """A span id past the 512 characters a case id may have was a ValidationError
    traceback; an empty one vanished without a word."""
    span = {
        "name": "rag",
        "context": {"trace_id": "8" * 32, "span_id": span_id},
        "span_kind": "CHAIN",
        "attributes": {"input.value": "why?", "output.value": "because"},
    }
    good = {**span, "context": {"trace_id": "9" * 32, "span_id": "a" * 16}}
    body = json.dumps({"data": [span, good], "next_cursor": None}).encode()
    output = tmp_path / "cases.jsonl"
    with FakePhoenix(lambda *_: Answer(200, body)) as fake:
        argv = ["traces", "pull", "--phoenix", fake.url, "--project", "p", "-o", str(output)]
        assert main(argv) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert "an id is empty or over 128 characters" in captured.err + captured.out
    assert [json.loads(line)["id"] for line in output.read_text().splitlines()] == ["a" * 16]


def test_tool_spans_whose_parent_is_not_in_the_trace_are_no_conversations() -> None:
    """Each tool span whose parent never came was a case of its own: a made-up call and
    its result, no user message, graded (and paid for) as a conversation."""
    spans = _agent_trace(2)
    kind = "openinference.span.kind"
    for n in range(3):
        tool = {kind: "TOOL", "tool.name": "refund", "output.value": "done"}
        spans.append(Span(TRACE, f"{n + 900:016x}", "f" * 16, "tool", 500 + n, tool))
    found = cases_of_traces(spans, shape="conversations")
    assert [case.id for case in found.cases] == ["0" * 15 + "1"]
    (line,) = found.broken
    assert "3 tool spans whose parent is not in the trace" in line


@pytest.mark.parametrize(
    "password", ["p@ssw0rd-9", "pa/ssw0rd-9", "pa?ssw0rd-9", "pa ssw0rd-9", "p%40ssw0rd-9"]
)
def test_no_piece_of_a_password_is_printed(password, tmp_path, capsys) -> None:
    """The user information was hidden up to its first `@` only (`http://***@ssw0rd-9@h`),
    not at all with a `/`, `?` or space in it, and httpx's 'Invalid port' traceback quoted
    the password's start."""
    url = f"http://reader:{password}@127.0.0.1:9/"
    argv = ["traces", "pull", "--phoenix", url, "--project", "p", "-o", str(tmp_path / "c")]
    assert main(argv) in (1, 2)
    endpoint = ("--otel-endpoint", url)
    path = tmp_path / "collector.out"
    _write(path, range(1))
    assert _watch(path, tmp_path / "watched", *endpoint) == 0
    captured = capsys.readouterr()
    said = captured.out + captured.err
    assert "Traceback" not in said
    assert "ssw0rd" not in said
    assert "http://***@127.0.0.1:9/" in said


def test_a_phoenix_watch_reads_on_after_the_clock_steps_back(tmp_path) -> None:
    """A checkpoint saved while the clock was ahead (stepped forward, then back) said
    `since` a day on: every poll waited for the clock to get there, and every request
    started meanwhile was never read."""
    from judge.traces.phoenix import PhoenixClient
    from judge.traces.sources import PhoenixSource

    now = datetime(2026, 12, 5, 9, 0, 0, tzinfo=UTC)
    span = {
        "name": "rag",
        "context": {"trace_id": "4" * 32, "span_id": "3" * 16},
        "span_kind": "CHAIN",
        "start_time": "2026-12-05T08:59:50+00:00",  # after the step back
        "attributes": {"input.value": "why?", "output.value": "because"},
    }
    body = json.dumps({"data": [span], "next_cursor": None}).encode()
    with FakePhoenix(lambda *_: Answer(200, body)) as fake, PhoenixClient(fake.url) as client:
        source = PhoenixSource(client, "p", TraceMapping(), ("question",), settle=30)
        first = source.poll({"since": "2026-12-06T09:00:00+00:00"}, now)
        assert any("clock is behind" in line for line in first.skipped)
        later = source.poll(first.position, now + timedelta(seconds=25))
    assert [case.id for case, _ in later.cases] == ["3" * 16]


@pytest.mark.parametrize("make", [_fifo, _zero_link, Path.mkdir], ids=["fifo", "dev-zero", "dir"])
def test_push_of_records_that_are_no_regular_file_is_one_line(make, tmp_path, capsys) -> None:
    """Records that were a FIFO were waited on forever, /dev/zero read until memory ran out,
    a folder a traceback."""
    records = tmp_path / "graded.jsonl"
    make(records)
    argv = ["traces", "push", str(records), "--phoenix", "http://127.0.0.1:9", "--project", "p"]
    assert _ends(lambda: main(argv)) == 2
    assert "not a regular file" in _one_error(capsys)


def _infinite_line(where: str) -> str:
    span: dict[str, Any] = {
        "traceId": "ab" * 16,
        "spanId": "0" * 15 + "1",
        "name": "rag",
        "attributes": [
            {"key": "openinference.span.kind", "value": {"stringValue": "CHAIN"}},
            {"key": "input.value", "value": {"stringValue": "q"}},
            {"key": "output.value", "value": {"stringValue": "a"}},
        ],
    }
    if where == "start":
        span["startTimeUnixNano"] = float("inf")
    else:
        span["attributes"].append({"key": "tokens", "value": {"intValue": 1e400}})
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n"


@pytest.mark.parametrize("where", ["start", "int-value"])
def test_an_infinite_integer_is_one_line_in_a_pull_and_skipped_in_a_watch(
    where, tmp_path, capsys
) -> None:
    """JSON's Infinity (or 1e400) where an integer goes was an OverflowError traceback."""
    path = tmp_path / "spans.otlp"
    path.write_text(_infinite_line(where))
    assert main(["traces", "pull", "--otlp", str(path), "-o", str(tmp_path / "c")]) == 2
    assert "not OTLP JSON" in _one_error(capsys)
    assert _watch(path, tmp_path / "watched") == 0
    captured = capsys.readouterr()
    assert "skipped a line" in captured.out + captured.err and "Traceback" not in captured.err


def test_a_model_call_of_more_tool_calls_than_a_case_holds_is_refused_at_once() -> None:
    """20,000 calls in one GenAI output message and 5,000 tool spans of another name: each
    tool span scanned every open call (minutes at larger sizes), then the case was dropped
    as 'no valid messages'; now it is refused before matching, saying why."""
    kind = "openinference.span.kind"
    root = Span(TRACE, "0" * 15 + "1", None, "agent", 1, {kind: "AGENT", "input.value": "q"})
    calls = [{"type": "tool_call", "id": f"c{n}", "name": "scan"} for n in range(20_000)]
    model = {
        kind: "LLM",
        "gen_ai.input.messages": json.dumps([{"role": "user", "content": "Scan all."}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": calls}]),
    }
    spans = [root, Span(TRACE, "0" * 15 + "2", root.span_id, "llm", 2, model)]
    tool = {kind: "TOOL", "tool.name": "other", "output.value": "r"}
    spans += [Span(TRACE, f"{n + 99:016x}", root.span_id, "t", 3 + n, tool) for n in range(5_000)]
    found = _ends(lambda: cases_of_traces(spans, shape="conversations"))
    assert found.cases == []
    (missing,) = found.missing
    assert "over 10000 tool calls" in str(missing)


def test_a_trace_of_thousands_of_requests_is_read_in_linear_time() -> None:
    """One trace id shared by 30,000 requests (a batch job traced as one trace): each
    request re-indexed the whole trace, so 8,000 took 45 s and 30,000 most of an hour."""
    kind = "openinference.span.kind"
    spans = []
    for n in range(30_000):
        request = {kind: "CHAIN", "input.value": f"q{n}", "output.value": "a"}
        spans.append(Span(TRACE, f"{n + 1:016x}", None, "rag", n, request))
        found = {kind: "RETRIEVER", "retrieval.documents.0.document.content": "d"}
        spans.append(Span(TRACE, f"{n + 10**6:016x}", f"{n + 1:016x}", "fetch", n, found))
    extraction = _ends(lambda: cases_of_traces(spans, shape="answers"))
    assert len(extraction.cases) == 30_000
    assert extraction.cases[-1].contexts == ["d"]


def test_requests_under_a_deep_chain_are_found_in_linear_time() -> None:
    """30,000 model calls under a chain of 30,000 spans of no request kind: each walked the
    whole chain up (4,000 took 3 s; 30,000 minutes); the walk is now remembered."""
    kind = "openinference.span.kind"
    spans = [
        Span(TRACE, f"{n + 1:016x}", f"{n:016x}" if n else None, "step", n, {kind: "RETRIEVER"})
        for n in range(30_000)
    ]
    call = {kind: "LLM", "input.value": "q", "output.value": "a"}
    spans += [
        Span(TRACE, f"{n + 10**6:016x}", f"{30_000:016x}", "llm", n, call) for n in range(30_000)
    ]
    extraction = _ends(lambda: cases_of_traces(spans, shape="answers"))
    assert len(extraction.cases) == 30_000
