"""Rules per tool in a trajectory rubric (issue 51, item 5): the order they apply in, what
the verdict names as left out, and `expected_tool_calls: []` under superset."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from judge.kinds._tool_rules import error_of
from judge.kinds.trajectory import TrajectorySpec, trajectory_verdict
from judge.transcript import Call

LOOKUP = Call("get_user", {"user_id": "u1"})
BOOK = Call("book", {"flight": "AZ1", "payment": "card-1"})
CALC = Call("calculate", {"expression": "2 + 3", "result": 5})


def test_errors_skip_drops_a_failed_call_before_matching() -> None:
    failed, retried = Call("book", {"flight": "AZ1"}), BOOK
    spec = TrajectorySpec(match="unordered", errors="skip")
    verdict = trajectory_verdict([failed, retried], [BOOK], spec, errors=["Error: no seat", None])
    assert verdict.matched
    assert [(i.name, i.side) for i in verdict.left_out] == [("book", "agent")]
    assert "Error: no seat" in verdict.left_out[0].why
    counted = trajectory_verdict([failed, retried], [BOOK], TrajectorySpec(match="unordered"))
    assert not counted.matched and counted.left_out == []


def test_only_and_ignore_apply_on_both_sides() -> None:
    spec = TrajectorySpec(match="strict", only=("book",))
    verdict = trajectory_verdict([LOOKUP, BOOK], [BOOK, CALC], spec)
    assert verdict.matched and verdict.agent_calls == verdict.expected_calls == 1
    assert sorted((i.name, i.side) for i in verdict.left_out) == [
        ("calculate", "expected"),
        ("get_user", "agent"),
    ]
    ignored = trajectory_verdict(
        [LOOKUP, BOOK], [BOOK], TrajectorySpec(match="strict", ignore=("get_user",))
    )
    assert ignored.matched and ignored.left_out[0].why == "ignore: listed"


def test_a_tool_s_own_argument_mode_and_ignored_keys() -> None:
    made = [Call("calculate", {"expression": "5", "result": 5}), Call("book", {"flight": "AZ1"})]
    spec = TrajectorySpec(
        match="unordered",
        tools={"calculate": {"ignore_keys": ("expression",)}, "book": {"arguments": "ignore"}},
    )
    verdict = trajectory_verdict(made, [CALC, BOOK], spec)
    assert verdict.matched
    assert verdict.notes == ['calculate: argument keys ["expression"] left out (ignore_keys)']
    assert not trajectory_verdict(made, [CALC, BOOK], TrajectorySpec(match="unordered")).matched


def test_the_rules_apply_errors_then_only_then_keys() -> None:
    # the failed call would fit once its keys are dropped: errors: skip removes it first
    failed = Call("calculate", {"expression": "x", "result": 5})
    spec = TrajectorySpec(
        match="superset",
        only=("calculate",),
        errors="skip",
        tools={"calculate": {"ignore_keys": ("expression",)}},
    )
    verdict = trajectory_verdict([failed, LOOKUP], [CALC], spec, errors=["error: bad", None])
    assert not verdict.matched
    assert [i.why.split(" (")[0] for i in verdict.left_out] == ["errors: skip", "only: not listed"]


def test_no_expected_call_under_superset_is_met_and_says_what_was_made() -> None:
    verdict = trajectory_verdict([LOOKUP, BOOK], [], TrajectorySpec(match="superset"))
    assert verdict.matched
    assert "no call was expected; the agent made 2" in verdict.notes
    assert not trajectory_verdict([LOOKUP], [], TrajectorySpec(match="unordered")).matched
    assert trajectory_verdict([], [], TrajectorySpec(match="superset")).notes == []


def test_unknown_rule_keys_are_refused() -> None:
    with pytest.raises(ValidationError):
        TrajectorySpec.model_validate({"tools": {"book": {"argument": "ignore"}}})
    with pytest.raises(ValidationError):
        TrajectorySpec.model_validate({"errors": "drop"})


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("Error: not enough seats", True),
        ("  error: x", True),
        ('{"error": "timeout"}', True),
        ('{"isError": true, "content": []}', True),
        ('{"error": null, "ok": 1}', False),
        ("Errors are listed below: none", True),  # a prefix rule: documented as such
        ("No errors", False),
        (None, False),
    ],
)
def test_which_tool_results_are_errors(content, error) -> None:
    assert (error_of(content) is not None) == error
