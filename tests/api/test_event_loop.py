"""The sync API inside a running event loop (a notebook cell, an async web app): it grades
in a worker thread with its own loop, returns the same record as outside a loop, and leaves
no coroutine unawaited."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path

import pytest

from judge import Judge
from tests.helpers import REPO

CASE = {
    "id": "1",
    "question": "How long is the trial?",
    "contexts": ["The free trial lasts 14 days."],
    "answer": "The trial lasts 40 days.",
}


def test_grade_outside_a_loop_is_the_reference() -> None:
    assert Judge().grade(CASE).status == "ok"


async def test_grade_inside_a_running_loop_returns_the_same_record() -> None:
    expected = await Judge().agrade(CASE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would raise
        record = Judge().grade(CASE)
    assert record.model_dump(exclude={"graded_at", "latency_ms"}) == expected.model_dump(
        exclude={"graded_at", "latency_ms"}
    )


async def test_grade_many_inside_a_running_loop() -> None:
    cases = [{**CASE, "id": str(i)} for i in range(3)]
    records = Judge().grade_many(cases)
    assert [r.id for r in records] == ["0", "1", "2"]


async def test_grade_file_inside_a_running_loop(tmp_path: Path) -> None:
    summary = Judge().grade_file(REPO / "examples/cases.jsonl", tmp_path / "graded.jsonl")
    assert summary["cases"] == sum(1 for _ in (REPO / "examples/cases.jsonl").open())


async def test_an_error_inside_the_worker_reaches_the_caller() -> None:
    with pytest.raises(Exception, match="no-such-rubric"):
        Judge().grade(CASE, rubric="no-such-rubric")


def test_a_loop_in_another_thread_is_left_alone() -> None:
    """The worker runs on a loop of its own: the caller's running loop is not re-entered."""

    async def main() -> tuple[str, bool]:
        caller = asyncio.get_running_loop()
        record = Judge().grade(CASE)
        return record.status, caller.is_running()

    assert asyncio.run(main()) == ("ok", True)
