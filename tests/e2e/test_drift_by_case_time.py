"""Issue 51, item 1: a conversation stream graded by `judge grade` from cases that carry a
`time`, then `judge drift --by week` on the records exactly as written (no hand edit), which
alarms in the week the judge changes.

The stream: eight weeks of agent conversations (seeded), each a booking call whose
arguments are right or wrong; people labelled whether the agent did the task (their label
follows the arguments, with a few slips). Weeks 1-4 are graded by the built-in `trajectory`
rubric (arguments compared exactly); from week 5 the team grades with its own rubric that
ignores arguments, so every wrong booking passes and agreement with people collapses."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from judge.cli import main

WEEKS, PER_WEEK, CHANGE = 8, 60, 4  # the judge changes after four weeks (week index 4)
START = datetime(2026, 3, 2, 9, tzinfo=UTC)  # a Monday: ISO week 2026-W10

LENIENT = """\
id: bookings
version: 1
kind: trajectory
title: The booking was attempted (arguments not compared)
inputs: [messages, expected_tool_calls]
match: superset
arguments: ignore
system: |
  Computed from the case alone.
"""


def conversation(case_id: str, when: datetime, right: bool) -> dict[str, object]:
    """One agent conversation: a booking call, right or wrong in its date."""
    wanted = {"flight": "BA117", "date": "2026-05-01"}
    made = wanted if right else {**wanted, "date": "2026-05-10"}
    call = {"id": "call_1", "type": "function", "function": {"name": "book_flight",
            "arguments": json.dumps(made)}}  # fmt: skip
    return {
        "id": case_id,
        "time": when.isoformat().replace("+00:00", "Z"),
        "messages": [
            # each case its own request: drift drops a repeated input (inputs_sha256) as a repeat
            {"role": "user", "content": f"Book BA117 on 1 May 2026 for customer {case_id}."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "booked"}'},
            {"role": "assistant", "content": "Booked."},
        ],
        "expected_tool_calls": [{"name": "book_flight", "arguments": wanted}],
    }


def write_stream(folder: Path) -> tuple[list[Path], Path]:
    """The cases of each judge's weeks (two files) and the people's labels."""
    rng = np.random.default_rng(51)
    before, after, labels = [], [], ["id,label"]
    for week in range(WEEKS):
        for i in range(PER_WEEK):
            right = bool(rng.random() < 0.5)
            when = START + timedelta(weeks=week, hours=int(rng.integers(0, 24 * 6)))
            case = conversation(f"w{week}-{i:02d}", when, right)
            (before if week < CHANGE else after).append(case)
            human_right = right if rng.random() > 0.05 else not right  # people slip too
            labels.append(f"{case['id']},{'match' if human_right else 'mismatch'}")
    files = []
    for name, cases in (("before.jsonl", before), ("after.jsonl", after)):
        path = folder / name
        path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
        files.append(path)
    label_file = folder / "labels.csv"
    label_file.write_text("\n".join(labels) + "\n", encoding="utf-8")
    return files, label_file


def test_drift_by_week_on_records_graded_from_timed_cases_alarms_in_the_changed_week(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (before, after), labels = write_stream(tmp_path)
    rubrics = tmp_path / "team-rubrics"
    (rubrics / "bookings").mkdir(parents=True)
    (rubrics / "bookings" / "v1.yaml").write_text(LENIENT, encoding="utf-8")
    graded = [tmp_path / "graded-before.jsonl", tmp_path / "graded-after.jsonl"]
    for cases, rubric, out in ((before, "trajectory", graded[0]), (after, "bookings", graded[1])):
        code = main(
            ["grade", str(cases), "--rubric", rubric, "--rubrics-dir", str(rubrics),
             "-o", str(out)],
            env={},
        )  # fmt: skip
        assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    first = json.loads(graded[0].read_text("utf-8").splitlines()[0])
    assert first["case_time"] == json.loads(before.read_text("utf-8").splitlines()[0])["time"]
    assert first["graded_at"].endswith("Z")

    report = tmp_path / "drift.json"
    args = ["drift", *map(str, graded), "--labels", str(labels), "--by", "week"]
    code = main([*args, "--json", "-o", str(report), "--bootstrap", "200"], env={})
    err = capsys.readouterr().err
    assert code == 3, err
    result = json.loads(report.read_text("utf-8"))
    assert result["time_source"] == "case time (case_time)"
    weeks = [row["window"] for row in result["windows"]]
    assert weeks == [f"2026-W{n}" for n in range(10, 10 + WEEKS)]
    changed = weeks[CHANGE]
    assert result["alarm"]["first_window"] == changed, result["alarm"]
    assert f"drift: alarm: agreement dropped at window {changed}" in err


def test_records_written_before_graded_at_still_drift_by_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records of an older llm-judge (no graded_at, no case_time) work with --window; with
    --by they are refused in one line that says what to do (exit 2)."""
    (before, _), labels = write_stream(tmp_path)
    graded = tmp_path / "graded.jsonl"
    assert main(["grade", str(before), "--rubric", "trajectory", "-o", str(graded)], env={}) == 0
    old = [json.loads(line) for line in graded.read_text("utf-8").splitlines()]
    for record in old:
        del record["graded_at"], record["case_time"]
    graded.write_text("".join(json.dumps(r) + "\n" for r in old), encoding="utf-8")
    capsys.readouterr()
    args = ["drift", str(graded), "--labels", str(labels), "--bootstrap", "50"]
    assert main([*args, "--window", "60"], env={}) == 0
    assert "time: file order (no time used)" in capsys.readouterr().out
    assert main([*args, "--by", "week"], env={}) == 2
    assert "none of case_time, graded_at" in capsys.readouterr().err
