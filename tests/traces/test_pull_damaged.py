"""`judge traces pull --otlp` on damaged traces: parent links that loop, a span id seen
twice, a batch exported twice, lines no parser should be handed whole. Each ends, with
no traceback: the trace is skipped and counted, or the file refused in one line (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.traces.mapping import cases_from_spans
from judge.traces.spans import Span
from tests.helpers import ends as _ends
from tests.traces.otlp_support import REQUESTS, rag_provider, trace_request, write_otlp


def _span(span_id: str, parent: str | None, trace: str = "t1", kind: str = "CHAIN") -> Span:
    attributes = {"openinference.span.kind": kind, "input.value": "q?", "output.value": "a."}
    return Span(trace, span_id, parent, "s", attributes=attributes)


@pytest.mark.parametrize("length", [2, 5])
def test_a_parent_cycle_is_skipped_and_named(length: int) -> None:
    """A CHAIN span under a chain of RETRIEVER spans that leads back to it."""
    ids = [f"c{n}" for n in range(length)]
    spans = [_span(ids[0], ids[-1], kind="TOOL")]
    spans += [_span(ids[n], ids[n - 1], kind="TOOL") for n in range(1, length)]
    spans.append(_span("ok", None, trace="t2"))
    extraction = _ends(lambda: cases_from_spans(spans))
    assert [c.id for c in extraction.cases] == ["ok"]
    assert extraction.broken == [f"trace t1: span {ids[0]}'s parent links loop"]


def test_a_span_id_seen_twice_once_as_its_own_child_is_read_once() -> None:
    """The root, then the same id again as its own child: one case, memory flat."""
    spans = [_span("r9", None), _span("k1", "r9", kind="TOOL"), _span("r9", "r9")]
    extraction = _ends(lambda: cases_from_spans(spans))
    assert [c.id for c in extraction.cases] == ["r9"]


def test_its_own_parent_first_is_a_loop() -> None:
    extraction = _ends(lambda: cases_from_spans([_span("s7", "s7"), _span("s7", None)]))
    assert extraction.cases == [] and len(extraction.broken) == 1


def _traced(tmp_path: Path) -> Path:
    provider, exporter = rag_provider()
    path = tmp_path / "traces.jsonl"
    for request in REQUESTS[:2]:
        trace_request(provider, request)
        write_otlp(path, exporter.get_finished_spans())
        exporter.clear()
    return path


def test_a_batch_pulled_twice_gives_one_case_per_span(tmp_path) -> None:
    """The collector wrote the same two requests twice (a retried export): two cases, and
    `judge grade` takes the file."""
    path = _traced(tmp_path)
    path.write_text(path.read_text() * 2)
    out = tmp_path / "cases.jsonl"
    assert main(["traces", "pull", "--otlp", str(path), "-o", str(out)]) == 0
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert len(ids) == 2 == len(set(ids))
    graded = tmp_path / "graded.jsonl"
    argv = ["grade", str(out), "--rubric", "faithfulness", "--offline", "-o", str(graded)]
    assert main(argv) == 0


def _line(spans: list[dict[str, Any]]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})


def _otlp_span(**attributes: Any) -> dict[str, Any]:
    return {
        "traceId": "ab" * 16,
        "spanId": "cd" * 8,
        "name": "chat",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
    }


BAD_LINES = {
    "deep": b'{"resourceSpans": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "not-utf8": b'{"resourceSpans": [], "x": "\xff\xfe"}',
    "digits": b'{"resourceSpans": [], "n": ' + b"9" * 4500 + b"}",
    "int-digits": _line([{**_otlp_span(), "startTimeUnixNano": "1" * 5000}]).encode(),
}


@pytest.mark.parametrize("name", sorted(BAD_LINES))
def test_a_line_no_parser_takes_is_one_line_exit_2(name: str, tmp_path, capsys) -> None:
    path = _traced(tmp_path)
    with path.open("ab") as out:
        out.write(BAD_LINES[name] + b"\n")
    assert main(["traces", "pull", "--otlp", str(path), "-o", str(tmp_path / "c.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}:3: not" in err[0], err


def test_deeply_nested_genai_messages_are_not_a_question(tmp_path) -> None:
    """gen_ai.input.messages holding 3000 levels of lists: not parsed as messages (the
    text is kept as it came, as for any value that is not a message list); no traceback,
    every request pulled."""
    deep = "[" * 3000 + "]" * 3000
    span = _otlp_span(**{"gen_ai.operation.name": "chat", "gen_ai.input.messages": deep})
    span["attributes"].append({"key": "gen_ai.completion", "value": {"stringValue": "ok"}})
    path = _traced(tmp_path)
    with path.open("a") as out:
        out.write(_line([span]) + "\n")
    out_path = tmp_path / "c.jsonl"
    assert main(["traces", "pull", "--otlp", str(path), "-o", str(out_path)]) == 0
    cases = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert len(cases) == 3 and {c["id"]: c for c in cases}["cd" * 8]["question"] == deep
