"""Issue 51, item 1: every record carries when it was graded (`graded_at`, UTC ISO 8601) and
the case's own `time` (`case_time`); a cache hit is stamped afresh, and neither time enters
the cache key. A case's `time` must be ISO 8601."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from judge.engine.cache import VerdictCache, cache_key
from judge.engine.grader import Grader
from judge.engine.outcome import Outcome
from judge.kinds.relevance import RelevanceVerdict
from judge.rubric import Rubric, load_rubric
from judge.schemas import Case, JudgeInfo, parse_iso_time

INFO = JudgeInfo(model="scripted", output_mode="json_schema")


class CountingJudge:
    """A cacheable backend that answers every case with the same verdict and counts asks."""

    name = "counting"

    def __init__(self) -> None:
        self.asked = 0

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        self.asked += 1
        verdict = RelevanceVerdict.model_validate(
            {"rationale": "fine", "abstained": False, "score": 4}
        )
        return Outcome("ok", INFO, verdict=verdict)

    def cache_identity(self) -> dict[str, Any] | None:
        return {"model": "scripted"}

    async def aclose(self) -> None:
        return None


def a_case(time: str | None = None) -> Case:
    return Case(id="c1", question="How long is the trial?", answer="14 days.", time=time)


def test_a_record_says_when_it_was_graded_and_when_its_case_happened(tmp_path: Path) -> None:
    grader = Grader(CountingJudge(), load_rubric("relevance"))
    before = datetime.now(UTC)
    record = asyncio.run(grader.grade_case(a_case("2026-03-02T14:05:00+01:00")))
    stamped = parse_iso_time(record.graded_at or "")
    assert record.graded_at is not None and record.graded_at.endswith("Z")
    assert stamped is not None and before.replace(microsecond=0) <= stamped
    assert record.case_time == "2026-03-02T14:05:00+01:00"
    assert asyncio.run(grader.grade_case(a_case())).case_time is None


def test_a_cache_hit_is_stamped_afresh_and_time_is_not_in_the_key(tmp_path: Path) -> None:
    rubric = load_rubric("relevance")
    backend = CountingJudge()
    grader = Grader(backend, rubric, cache=VerdictCache(tmp_path / "cache"))
    first = asyncio.run(grader.grade_case(a_case("2026-03-02T10:00:00Z")))
    again = asyncio.run(grader.grade_case(a_case("2026-03-09T10:00:00Z")))
    assert backend.asked == 1 and again.cached  # another time is the same question
    assert again.case_time == "2026-03-09T10:00:00Z"  # this case's time, not the cached one
    assert again.graded_at is not None and again.graded_at >= (first.graded_at or "")
    identity = {"model": "scripted"}
    assert cache_key(rubric, identity, a_case("2026-01-01")) == cache_key(
        rubric, identity, a_case()
    )


def test_the_cache_keeps_no_time(tmp_path: Path) -> None:
    """What the cache stores has no graded_at or case_time: a hit can only be stamped now."""
    cache = VerdictCache(tmp_path / "cache")
    grader = Grader(CountingJudge(), load_rubric("relevance"), cache=cache)
    case = a_case("2026-03-02T10:00:00Z")
    asyncio.run(grader.grade_case(case))
    key = cache_key(grader.rubric, {"model": "scripted"}, case)
    entry = cache.get(key)
    assert entry is not None and "graded_at" not in entry and "case_time" not in entry


@pytest.mark.parametrize(
    "good", ["2026-03-02", "2026-03-02T14:05:00Z", "2026-03-02T14:05:00.123456+05:30"]
)
def test_a_case_time_is_iso_8601(good: str) -> None:
    assert a_case(good).time == good


@pytest.mark.parametrize("bad", ["yesterday", "02/03/2026", "", 1740000000])
def test_a_case_time_that_is_not_iso_8601_is_refused(bad: object) -> None:
    with pytest.raises(ValidationError, match="not an ISO 8601 date or time"):
        Case(id="c1", answer="x", time=bad)


def test_a_file_with_a_bad_time_is_refused_naming_line_and_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judge.cli import main

    cases = tmp_path / "cases.jsonl"
    good = {"id": "q1", "question": "How long?", "contexts": ["14 days."], "answer": "14 days."}
    rows = [{**good, "time": "2026-03-02T10:00:00Z"}, {**good, "id": "q2", "time": "yesterday"}]
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "graded.jsonl"
    assert main(["grade", str(cases), "--rubric", "faithfulness", "-o", str(out)], env={}) == 2
    assert "cases.jsonl:2 (id 'q2'): time: not an iso 8601 date or time" in capsys.readouterr().err
    assert not out.exists()
