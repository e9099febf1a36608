"""Issue 54 item 2: `judge.iter_grade` / `Judge.iter_grade` stream records as they are graded.

Before, the Python API's only way to grade many cases was `grade_many`, which holds every
record in a list (919 MB for 100,000 conversations). The stream yields the same records in
the same order from a path, a DataFrame or any iterable (a generator included), and never
reads more than a bounded window of cases ahead of the caller, however many there are: the
memory bound, checked here without timing (the 100,000-conversation figure is
benchmarks/trajectory.md's).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import judge
from judge import Judge, JudgeConfig
from judge.errors import InputError

VOLATILE = {"latency_ms", "graded_at"}  # when each record was made


def faithfulness_case(n: int) -> dict[str, Any]:
    return {
        "id": f"c{n}",
        "question": "How long is the refund window?",
        "contexts": ["Refunds are accepted within 30 days of purchase."],
        "answer": f"Refunds are accepted within {30 if n % 3 else 40} days.",
        "slices": ["even" if n % 2 == 0 else "odd"],
    }


def conversation(n: int) -> dict[str, Any]:
    call = {"name": "refund", "arguments": {"order": n}}
    messages = [
        {"role": "user", "content": "refund please"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "refund", "arguments": json.dumps({"order": n})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"ok": True, "items": [[n]]})},
        {"role": "assistant", "content": "Done."},
    ]
    expected = [call] if n % 4 else [{"name": "refund", "arguments": {"order": -1}}]
    return {"id": f"t{n}", "messages": messages, "expected_tool_calls": expected}


class Counted:
    """A generator of cases that counts how many were taken from it."""

    def __init__(self, make: Any, count: int) -> None:
        self.make, self.count, self.taken = make, count, 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for n in range(self.count):
            self.taken += 1
            yield self.make(n)


def plain(record: Any) -> dict[str, Any]:
    return {k: v for k, v in record.model_dump(mode="json").items() if k not in VOLATILE}


@pytest.mark.parametrize(
    ("make", "rubric"), [(faithfulness_case, "faithfulness"), (conversation, "trajectory")]
)
def test_the_stream_yields_grade_manys_records_in_order(make: Any, rubric: str) -> None:
    cases = [make(n) for n in range(150)]
    streamed = [plain(r) for r in judge.iter_grade(iter(cases), rubric)]
    listed = [plain(r) for r in Judge().grade_many(cases, rubric)]
    assert streamed == listed
    assert [r["id"] for r in streamed] == [c["id"] for c in cases]


@pytest.mark.parametrize(
    ("make", "rubric"), [(faithfulness_case, "faithfulness"), (conversation, "trajectory")]
)
def test_the_stream_reads_a_bounded_window_ahead_whatever_the_count(make: Any, rubric: str) -> None:
    """The memory bound: between two records handed to the caller, the stream has taken at
    most a window of cases from the source (the grader's in-flight window plus one batch),
    the same for 300 cases as for 3,000; `grade_many` takes them all first."""
    config = JudgeConfig(concurrency=4)
    leads = []
    for count in (300, 3_000):
        source = Counted(make, count)
        lead = 0
        for done, _ in enumerate(Judge(config).iter_grade(source, rubric, batch=16), 1):
            lead = max(lead, source.taken - done)
        assert done == count
        leads.append(lead)
    assert leads[0] == leads[1] <= 64 + 16 + 4
    source = Counted(make, 300)
    Judge(config).grade_many(source, rubric)
    assert source.taken == 300


def test_a_path_and_a_frame_stream_as_the_file_grades(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    cases = [faithfulness_case(n) for n in range(40)]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    out = tmp_path / "graded.jsonl"
    Judge().grade_file(path, out)
    from_file = [
        {k: v for k, v in json.loads(line).items() if k not in VOLATILE}
        for line in out.read_text().splitlines()
    ]
    assert [plain(r) for r in judge.iter_grade(path)] == from_file
    assert [plain(r) for r in judge.iter_grade(str(path))] == from_file
    assert [plain(r) for r in judge.iter_grade(pd.DataFrame(cases))] == from_file


def test_a_bad_case_stops_the_stream_naming_it() -> None:
    cases = [faithfulness_case(n) for n in range(5)]
    cases[3] = {"id": "c3", "question": "q?"}  # no answer: faithfulness needs one
    seen = []
    with pytest.raises(InputError, match=r"cases \(id 'c3'\): case 4: missing"):
        for record in judge.iter_grade(cases):
            seen.append(record.id)
    assert seen == ["c0", "c1", "c2"]


def test_a_duplicate_id_stops_the_stream() -> None:
    cases = [faithfulness_case(n) for n in range(3)] + [faithfulness_case(1)]
    with pytest.raises(InputError, match=r"\(id 'c1'\): case 4: duplicate id"):
        list(judge.iter_grade(cases))


def test_a_bad_line_of_a_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(faithfulness_case(0)) + "\n{not json\n")
    with pytest.raises(InputError, match=r"cases.jsonl:2: not valid JSON"):
        list(judge.iter_grade(path))


def test_closing_early_stops_the_stream() -> None:
    source = Counted(faithfulness_case, 10_000)
    stream = Judge(JudgeConfig(concurrency=2)).iter_grade(source, batch=8)
    assert [next(stream).id for _ in range(3)] == ["c0", "c1", "c2"]
    stream.close()
    assert source.taken < 100


def test_the_stream_works_inside_a_running_loop() -> None:
    async def in_a_notebook_cell() -> list[str]:
        return [r.id for r in judge.iter_grade([faithfulness_case(n) for n in range(3)])]

    assert asyncio.run(in_a_notebook_cell()) == ["c0", "c1", "c2"]
