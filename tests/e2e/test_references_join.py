"""`judge grade --references REFS --join-on FIELD` (issue 51, item 4): what a case lacks is
joined in by key; a case no reference matches is counted and named; two references with one
key are bad input (exit 2, nothing written); the records keep the key."""

from __future__ import annotations

import json
from typing import Any

from judge.cli import main
from tests.helpers import read_jsonl, write_jsonl

RUBRIC = ["--rubric", "trajectory"]


def _case(case_id: str, task: Any, **extra: Any) -> dict[str, Any]:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "refund", "arguments": '{"order": "A"}'},
    }
    messages = [
        {"role": "user", "content": "Refund order A."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "refund", "content": "done"},
        {"role": "assistant", "content": "Refunded."},
    ]
    return {"id": case_id, "messages": messages, "metadata": {"task_id": task}, **extra}


REFUND = [{"name": "refund", "arguments": {"order": "A"}}]
LOOKUP = [{"name": "lookup", "arguments": {}}]


def test_cases_get_what_they_lack_and_keep_what_they_have(tmp_path, capsys) -> None:
    cases = write_jsonl(
        tmp_path / "cases.jsonl",
        [
            _case("a", 1),
            _case("b", "2", goal="my own goal"),
            _case("c", 7),
            _case("d", 1, expected_tool_calls=LOOKUP),
            {**_case("e", None), "metadata": {}},
        ],
    )
    refs = write_jsonl(
        tmp_path / "refs.jsonl",
        [
            {"task_id": 1, "expected_tool_calls": REFUND, "goal": "refund A"},
            {
                "task_id": 2,
                "expected_tool_calls": REFUND,
                "goal": "refund A",
                "metadata": {"tier": "gold"},
            },
        ],
    )
    out = tmp_path / "out.jsonl"
    argv = [
        "grade",
        str(cases),
        *RUBRIC,
        "--references",
        str(refs),
        "--join-on",
        "metadata.task_id",
    ]
    assert main([*argv, "-o", str(out)]) == 0
    records = {r["id"]: r for r in read_jsonl(out)}
    assert [records[i]["label"] for i in "abd"] == ["match", "match", "mismatch"]  # d kept its own
    assert records["c"]["status"] == records["e"]["status"] == "abstained"
    assert {i: records[i].get("reference_key") for i in "abcde"} == {
        "a": "1", "b": "2", "c": None, "d": "1", "e": None,
    }  # fmt: skip
    err = capsys.readouterr().err
    assert (
        "references: 3 cases joined by metadata.task_id from refs.jsonl (2 of 2 references used)"
        in err
    )
    assert "1 with a key no reference has: c" in err
    assert "1 with no metadata.task_id: e" in err


def test_a_csv_of_references_joins_on_goal(tmp_path) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [_case("a", 1, goal="Refund order A.")])
    refs = tmp_path / "refs.csv"
    refs.write_text(
        'goal,expected_tool_calls\n"Refund order A.","'
        + json.dumps(REFUND).replace('"', '""')
        + '"\n'
    )
    out = tmp_path / "out.jsonl"
    argv = ["grade", str(cases), *RUBRIC, "--references", str(refs), "--join-on", "goal"]
    assert main([*argv, "-o", str(out)]) == 0
    (record,) = read_jsonl(out)
    assert record["label"] == "match" and record["reference_key"] == "Refund order A."


def test_a_key_of_two_references_is_bad_input(tmp_path, capsys) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [_case("a", 1)])
    refs = write_jsonl(
        tmp_path / "refs.jsonl",
        [
            {"task_id": 1, "expected_tool_calls": REFUND},
            {"task_id": "1", "expected_tool_calls": LOOKUP},
        ],
    )
    out = tmp_path / "out.jsonl"
    argv = [
        "grade",
        str(cases),
        *RUBRIC,
        "--references",
        str(refs),
        "--join-on",
        "metadata.task_id",
    ]
    assert main([*argv, "-o", str(out)]) == 2
    assert not out.exists()
    assert (
        f"{refs}:2 (id '1'): metadata.task_id '1' is the key of line 1 too"
        in capsys.readouterr().err
    )


def test_a_reference_field_that_no_case_has_is_bad_input(tmp_path, capsys) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [_case("a", 1)])
    refs = write_jsonl(tmp_path / "refs.jsonl", [{"task_id": 1, "expected_calls": REFUND}])
    argv = [
        "grade",
        str(cases),
        *RUBRIC,
        "--references",
        str(refs),
        "--join-on",
        "metadata.task_id",
    ]
    assert main([*argv, "-o", str(tmp_path / "out.jsonl")]) == 2
    assert "not case fields: expected_calls" in capsys.readouterr().err


def test_join_on_alone_is_a_usage_error(tmp_path) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [_case("a", 1)])
    assert main(["grade", str(cases), *RUBRIC, "--join-on", "goal"]) == 2


def test_a_run_where_every_case_abstained_says_so_and_can_fail_a_gate(tmp_path, capsys) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [_case("a", 1), _case("b", 2)])
    out = tmp_path / "out.jsonl"
    assert main(["grade", str(cases), *RUBRIC, "-o", str(out), "--fail-if", "scored == 0"]) == 3
    err = capsys.readouterr().err
    assert "every one of the 2 cases abstained (2 of them: no expected_tool_calls" in err
    assert "gate: scored == 0: 0 -> failed" in err
