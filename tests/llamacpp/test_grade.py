"""Grading against a real llama.cpp server (issue 37 point 1): every built-in rubric kind
and user rubrics, structured output, the cache, and a generation that outlasts --timeout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.llamacpp.support import (
    MODEL,
    REPO,
    STATUSES,
    check_records,
    grade_args,
    judge,
    read_jsonl,
    sent,
    server_url,
    short_cases,
    write_jsonl,
)

pytestmark = pytest.mark.llamacpp


def test_three_relevance_cases_grade_with_json_schema(relevance_run: dict[str, Any]) -> None:
    done = relevance_run["done"]
    assert done.returncode in (0, 1), done.stderr  # 1: the model's own parse errors
    records = read_jsonl(relevance_run["out"])
    check_records(records, ["c0", "c1", "c2"], "relevance")
    assert sent(done.stderr) >= 3


def test_verdicts_carry_a_confidence_from_logprobs(relevance_run: dict[str, Any]) -> None:
    """Issue 50: llama.cpp's server gives `logprobs` with `top_logprobs`; each scored
    verdict carries the probability of its score among the scale's, from them."""
    done = relevance_run["done"]
    assert "gives no logprobs" not in done.stderr, done.stderr
    records = read_jsonl(relevance_run["out"])
    scored = [r for r in records if r["status"] == "ok"]
    assert scored, "the model parsed no verdict"
    for record in scored:
        assert record["confidence_source"] == "logprobs", record
        assert 0.0 < record["confidence"] <= 1.0


def test_a_rerun_sends_no_request(relevance_run: dict[str, Any], cache: Path) -> None:
    folder: Path = relevance_run["folder"]
    again = folder / "again.jsonl"
    done = judge("grade", str(relevance_run["source"]), "--rubric", "relevance",
                 "-o", str(again), *grade_args(cache, max_tokens=128))  # fmt: skip
    first = {r["id"]: r for r in read_jsonl(relevance_run["out"])}
    # failures are not cached: a case the tiny model cut off (a repetition loop that hits
    # --max-tokens) is asked again; every verdict comes from the cache: 0 requests when
    # all three parsed
    failed = [r for r in first.values() if r["status"] in ("parse_error", "api_error")]
    assert sent(done.stderr) == len(failed), done.stderr
    for record in read_jsonl(again):
        old = first[record["id"]]
        if old["status"] in ("ok", "abstained"):
            assert record["cached"] is True and record["verdict"] == old["verdict"]


RAG_CASE = {
    "id": "h01",
    "question": "When are invoices sent?",
    "contexts": ["Invoices are sent on the first business day of each month.",
                 "Annual plans are billed once a year."],
    "retrieved_ids": ["bill-01", "bill-04"],
    "relevant_ids": ["bill-01"],
    "reference": "On the first business day of every month.",
    "answer": "Invoices are sent on the first business day of each month [1].",
}  # fmt: skip
PAIR = {
    "id": "p1",
    "question": "How long is the return window?",
    "contexts": ["Returns are accepted within 30 days."],
    "answer_a": "30 days.",
    "answer_b": "60 days.",
}
BUILT_IN = ["faithfulness", "relevance", "context_relevance", "correctness", "citations",
            "rag-benchmark"]  # fmt: skip
USER = ["tone", "policy"]  # kinds scale and labels: examples/rubrics


@pytest.mark.parametrize("rubric", [*BUILT_IN, "pairwise", *USER])
def test_every_kind_grades_on_the_real_server(rubric: str, tmp_path: Path, cache: Path) -> None:
    case = PAIR if rubric == "pairwise" else RAG_CASE
    source = write_jsonl(tmp_path / "cases.jsonl", [case])
    out = tmp_path / "out.jsonl"
    extra = ["--rubrics-dir", str(REPO / "examples" / "rubrics")] if rubric in USER else []
    done = judge("grade", str(source), "--rubric", rubric, "-o", str(out), *extra,
                 *grade_args(cache, max_tokens=160))  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    (record,) = read_jsonl(out)
    check_records([record], [case["id"]], rubric)
    assert sent(done.stderr) <= 2  # one request, and at most one repair


def test_retrieval_needs_no_request(tmp_path: Path, cache: Path) -> None:
    source = write_jsonl(tmp_path / "cases.jsonl", [RAG_CASE])
    out = tmp_path / "out.jsonl"
    done = judge("grade", str(source), "--rubric", "retrieval", "-o", str(out),
                 *grade_args(cache))  # fmt: skip
    assert done.returncode == 0, done.stderr
    (record,) = read_jsonl(out)
    assert record["status"] == "ok" and record["usage"]["prompt_tokens"] == 0


def test_a_generation_longer_than_the_timeout_finishes_or_fails_named(
    tmp_path: Path,
) -> None:
    """--timeout 1 against a CPU model: each case either finishes (its reply streamed
    after the first timeout) or fails after at most two requests, naming --timeout.
    Before issue 37: six requests a case, each thrown away, and an error that never
    named --timeout."""
    cases = short_cases(2, contexts=["Refunds take 5 business days. " * 12])
    source = write_jsonl(tmp_path / "cases.jsonl", cases)
    out = tmp_path / "out.jsonl"
    done = judge("grade", str(source), "--rubric", "faithfulness", "-o", str(out),
                 "--model", MODEL, "--base-url", server_url(), "--max-tokens", "200",
                 "--timeout", "1", "--no-cache", "--concurrency", "1",
                 "--max-error-rate", "1")  # fmt: skip
    records = read_jsonl(out)
    assert [r["id"] for r in records] == ["c0", "c1"], done.stderr
    assert sent(done.stderr) <= 2 * len(cases), done.stderr
    for record in records:
        assert record["status"] in STATUSES | {"api_error"}
        if record["status"] == "api_error":
            assert "--timeout 1" in record["error"], record["error"]


def test_no_pinning_warning_for_a_local_model(relevance_run: dict[str, Any]) -> None:
    assert "not pinned" not in relevance_run["done"].stderr


def test_the_records_name_the_local_model(relevance_run: dict[str, Any]) -> None:
    for record in read_jsonl(relevance_run["out"]):
        assert record["judge"]["model"] == MODEL
        assert json.dumps(record).count("sk-") == 0
