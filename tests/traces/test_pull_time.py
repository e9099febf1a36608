"""Issue 51, item 1: `judge traces pull` writes each case's trace start as its `time` (ISO
8601, UTC, to the microsecond), for conversations and question/answer cases alike, so the
records of its cases carry `case_time` for `judge drift --by`."""

from __future__ import annotations

import json
from pathlib import Path

from judge.cli import main
from judge.traces.mapping import iso_of_ns
from tests.traces.agent_support import trace_openinference
from tests.traces.otlp_support import REQUESTS, rag_provider, trace_request, write_otlp


def test_pulled_cases_carry_their_root_span_start_as_time(tmp_path: Path) -> None:
    provider, exporter = rag_provider()
    _, rag = trace_request(provider, REQUESTS[0])
    _, agent = trace_openinference(provider)
    spans = exporter.get_finished_spans()
    starts = {format(s.context.span_id, "016x"): s.start_time for s in spans}
    path = tmp_path / "traces.otlp.jsonl"
    write_otlp(path, spans)
    out = tmp_path / "cases.jsonl"
    assert main(["traces", "pull", "--otlp", str(path), "-o", str(out)], env={}) == 0
    cases = {c["id"]: c for c in map(json.loads, out.read_text("utf-8").splitlines())}
    assert set(cases) == {rag, agent}
    for case_id, case in cases.items():
        assert case["time"] == iso_of_ns(starts[case_id]) and case["time"].endswith("Z")


def test_a_nanosecond_start_is_read_to_the_microsecond_without_rounding() -> None:
    assert iso_of_ns(1_700_000_000_999_999_999) == "2023-11-14T22:13:20.999999Z"
    assert iso_of_ns(1_700_000_000_000_000_000) == "2023-11-14T22:13:20Z"
