"""Batch files: custom ids, request files within the limits, and result lines to records."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from judge.batch.format import (
    ENDPOINT,
    RequestFiles,
    case_id_of,
    custom_id_for,
    read_result,
)
from judge.batch.replay import ResultIndex, export_requests, import_results
from judge.config import JudgeConfig
from judge.rubric import load_rubric
from judge.schemas import Case
from tests.helpers import FAITHFUL_VERDICT, case, write_jsonl

MODEL = "judge-test-2024-01-01"
CONFIG = JudgeConfig(model=MODEL, base_url="http://127.0.0.1:9/v1", use_cache=False)


def ok_line(custom_id: str, verdict: Any, **choice: Any) -> dict[str, Any]:
    content = verdict if isinstance(verdict, str) else json.dumps(verdict)
    message = {"role": "assistant", "content": content, "refusal": choice.pop("refusal", None)}
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": MODEL,
        "system_fingerprint": "fp_b",
        "choices": [
            {"index": 0, "message": message, "finish_reason": choice.get("finish", "stop")}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    response = {"status_code": 200, "request_id": "req_1", "body": body}
    return {"id": "batch_req_1", "custom_id": custom_id, "response": response, "error": None}


def failed_line(custom_id: str, status: int = 500, message: str = "boom") -> dict[str, Any]:
    body = {"error": {"message": message, "type": "server_error", "code": "server_error"}}
    response = {"status_code": status, "request_id": "req_2", "body": body}
    return {"id": "batch_req_2", "custom_id": custom_id, "response": response, "error": None}


def vllm_error_line(custom_id: str) -> dict[str, Any]:
    response = {"status_code": 400, "request_id": "vllm-batch-1", "body": None}
    return {"id": "vllm-1", "custom_id": custom_id, "response": response, "error": "bad prompt"}


@pytest.mark.parametrize("case_id", ["refund-014", "a b", "x#y", "100%", "ünï/κ", "a\nb", "#"])
def test_custom_ids_round_trip_and_keep_the_order_suffix_apart(case_id):
    plain = custom_id_for(case_id)
    assert "#" not in plain and "\n" not in plain and " " not in plain
    assert case_id_of(plain) == (case_id, None)
    assert case_id_of(custom_id_for(case_id, "ba")) == (case_id, "ba")
    assert custom_id_for("refund-014") == "refund-014"  # plain ids stay readable


def test_request_files_split_at_the_request_and_byte_limits(tmp_path):
    lines = [json.dumps({"n": i}).encode() + b"\n" for i in range(7)]
    with RequestFiles(tmp_path / "r.jsonl", max_requests=3) as files:
        for line in lines:
            files.write(line)
    assert files.counts == [3, 3, 1]
    assert [p.name for p in files.paths] == ["r.jsonl", "r.2.jsonl", "r.3.jsonl"]
    assert b"".join(p.read_bytes() for p in files.paths) == b"".join(lines)
    size = len(lines[0])
    with RequestFiles(tmp_path / "b.jsonl", max_bytes=2 * size) as by_size:
        for line in lines:
            by_size.write(line)
    assert all(p.stat().st_size <= 2 * size for p in by_size.paths)
    assert by_size.total == 7


async def test_export_writes_the_online_request_body_for_each_case(tmp_path):
    rubric = load_rubric("faithfulness")
    source = write_jsonl(tmp_path / "in.jsonl", [case("a"), case("b b", answer="Other.")])
    report = await export_requests(rubric, CONFIG, source, tmp_path / "req.jsonl")
    rows = [json.loads(line) for line in report.paths[0].read_text("utf-8").splitlines()]
    assert [r["custom_id"] for r in rows] == ["a", "b%20b"]
    assert {r["method"] for r in rows} == {"POST"} and {r["url"] for r in rows} == {ENDPOINT}
    body = rows[0]["body"]
    assert body["model"] == MODEL and body["seed"] == 42 and body["temperature"] == 0.0
    assert body["response_format"]["type"] == "json_schema"  # auto = structured, no step-down
    assert body["messages"] == rubric.render(Case(**case("a")), output_mode="json_schema")


def test_result_lines_of_both_formats(tmp_path):
    ok = read_result(ok_line("a", FAITHFUL_VERDICT), "json_schema")
    assert ok.completion is not None and ok.completion.system_fingerprint == "fp_b"
    failed = read_result(failed_line("b", 429, "Rate limit"), "json_schema")
    assert failed.completion is None and "HTTP 429" in (failed.error or "")
    assert "Rate limit" in (failed.error or "")
    vllm = read_result(vllm_error_line("c"), "json_schema")
    assert "HTTP 400" in (vllm.error or "") and "bad prompt" in (vllm.error or "")
    expired = {"id": "x", "custom_id": "d", "response": None}
    expired["error"] = {"code": "batch_expired", "message": "not run in time"}
    assert "batch_expired" in (read_result(expired, "json_schema").error or "")


def test_index_prefers_a_success_over_a_failure_for_the_same_id(tmp_path):
    errors = write_jsonl(tmp_path / "err.jsonl", [failed_line("a")])
    outputs = write_jsonl(tmp_path / "out.jsonl", [ok_line("a", FAITHFUL_VERDICT)])
    (tmp_path / "out.jsonl").open("a").write("not json\n")
    index = ResultIndex([errors, outputs])
    assert index.duplicates == 1 and len(index.unreadable) == 1
    assert (index.take("a") or {})["response"]["status_code"] == 200
    index.close()


async def test_import_gives_every_case_a_record_and_reports_what_does_not_fit(tmp_path):
    rubric = load_rubric("faithfulness")
    ids = ["ok", "malformed", "failed", "vllm", "missing", "truncated", "abstains"]
    source = write_jsonl(tmp_path / "in.jsonl", [case(i) for i in ids])
    lines = [
        ok_line("unknown-id", FAITHFUL_VERDICT),
        ok_line("abstains", {"claims": []}),
        ok_line("truncated", '{"claims": [', finish="length"),
        vllm_error_line("vllm"),
        failed_line("failed", 500, "The server had an error"),
        ok_line("malformed", '{"claims": "nope"'),
        ok_line("ok", FAITHFUL_VERDICT),
    ]
    results = write_jsonl(tmp_path / "results.jsonl", lines)
    out = tmp_path / "out.jsonl"
    report = await import_results(rubric, CONFIG, source, [results], out)
    records = {r["id"]: r for r in map(json.loads, out.read_text("utf-8").splitlines())}
    assert list(records) == ids  # input order, one each, none dropped
    status = {i: r["status"] for i, r in records.items()}
    assert status == {
        "ok": "ok",
        "malformed": "parse_error",
        "failed": "api_error",
        "vllm": "api_error",
        "missing": "api_error",
        "truncated": "parse_error",
        "abstains": "abstained",
    }
    assert records["ok"]["score"] == 1.0 and records["ok"]["label"] == "faithful"
    assert records["ok"]["judge"]["system_fingerprint"] == "fp_b"
    assert records["malformed"]["raw"] == '{"claims": "nope"'  # no repair round-trip in batch
    assert "HTTP 500" in records["failed"]["error"]
    assert "no result line" in records["missing"]["error"]
    assert "'missing'" in records["missing"]["error"]
    assert report.unknown == ["unknown-id"]
    warnings = " ".join(report.warnings())
    assert "'unknown-id'" in warnings and "match no case" in warnings
    assert "3 case(s) failed or have no result line" in warnings


@pytest.mark.slow
async def test_export_memory_does_not_grow_with_the_number_of_cases(tmp_path):
    rubric = load_rubric("faithfulness")
    peaks = []
    for count in (1_000, 5_000):
        source = tmp_path / f"in{count}.jsonl"
        with source.open("w") as handle:
            for i in range(count):
                handle.write(json.dumps(case(f"c{i}")) + "\n")
        tracemalloc.start()
        await export_requests(rubric, CONFIG, source, tmp_path / f"req{count}.jsonl")
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    # a request line is ~2 KB (10 MB for these 5,000): holding lines or cases would cost that much per case; what
    # grows is input validation's duplicate-id check (a few bytes of hash per case)
    per_case = (peaks[1] - peaks[0]) / 4_000
    assert per_case < 64, per_case
    assert peaks[1] < 4 * 1024 * 1024


def test_results_file_that_does_not_exist_is_a_usage_error(tmp_path):
    from judge.errors import UsageError

    with pytest.raises(UsageError, match="does not exist"):
        ResultIndex([Path(tmp_path / "nope.jsonl")])
