"""The panel's record of one case, from its jurors' records: status, label, score, the
representative verdict, usage, and every vote with its judge."""

from __future__ import annotations

from typing import Any

import pytest

from judge.jury.config import Jury
from judge.jury.records import panel_record
from judge.rubric import load_rubric
from judge.schemas import GradedRecord, JudgeInfo, Usage
from tests.helpers import REPO

RUBRICS = REPO / "examples" / "rubrics"
JURY = Jury.model_validate({"jurors": [{"name": n, "model": f"m-{n}"} for n in "abc"]})


def record(juror: str, status: str, score: int | None = None, **fields: Any) -> GradedRecord:
    rubric = load_rubric("tone", RUBRICS)
    scored = status == "ok" and score is not None
    return GradedRecord(
        id="t1",
        rubric=rubric.id,
        rubric_version=rubric.version,
        rubric_sha256=rubric.sha256,
        judge=JudgeInfo(model=f"m-{juror}", output_mode="json_schema"),
        judge_id=f"id-{juror}",
        status=status,  # type: ignore[arg-type]
        verdict={"rationale": juror, "score": score} if scored else None,
        score=(score - 1) / 4 if scored and score else None,
        label=str(score) if scored else None,
        usage=Usage(prompt_tokens=100, completion_tokens=10),
        latency_ms=5.0,
        **fields,
    )


def test_a_score_kind_takes_the_mean_and_the_verdict_nearest_it() -> None:
    rubric = load_rubric("tone", RUBRICS)
    records = [record("a", "ok", 2), record("b", "ok", 4), record("c", "ok", 5)]
    result = panel_record(rubric, JURY, records, {"jury": "x"})
    assert result.status == "ok" and result.score == pytest.approx((0.25 + 0.75 + 1.0) / 3)
    assert result.label is None and result.panel["outcome"] == "no_majority"
    assert result.panel["verdict_from"] == "b" and result.verdict == records[1].verdict
    assert result.usage == Usage(prompt_tokens=300, completion_tokens=30)
    assert [v["judge"]["model"] for v in result.panel["jurors"]] == ["m-a", "m-b", "m-c"]


def test_a_panel_mostly_abstaining_abstains_and_a_short_one_fails() -> None:
    rubric = load_rubric("tone", RUBRICS)
    abstaining = [record("a", "abstained"), record("b", "abstained"), record("c", "ok", 5)]
    result = panel_record(rubric, JURY, abstaining, {"jury": "x"})
    assert (result.status, result.score, result.panel["outcome"]) == (
        "abstained",
        None,
        "abstained",
    )
    failing = [
        record("a", "api_error", error="HTTP 500"),
        record("b", "api_error", error="x"),
        record("c", "ok", 5),
    ]
    short = panel_record(rubric, JURY, failing, {"jury": "x"})
    assert (short.status, short.score, short.panel["votes"]) == ("api_error", None, "1 of 3")
    assert short.error is not None and "a api_error: HTTP 500" in short.error


def test_a_panel_record_says_when_it_was_decided_and_keeps_the_case_time() -> None:
    """Issue 51, item 1: a jury's record carries graded_at and its case's time too."""
    rubric = load_rubric("tone", RUBRICS)
    when = "2026-03-02T10:00:00Z"
    records = [record(j, "ok", 4, case_time=when) for j in "abc"]
    result = panel_record(rubric, JURY, records, {"jury": "x"})
    assert result.graded_at is not None and result.graded_at.endswith("Z")
    assert result.case_time == when
