"""judge.jury.escalate: when the first juror's verdict is unsure."""

from __future__ import annotations

import pytest

from judge.errors import UsageError
from judge.jury.config import Escalation
from judge.jury.escalate import check_escalation, escalations, unsure
from judge.rubric import load_rubric
from tests.helpers import REPO

RUBRICS = REPO / "examples" / "rubrics"


def test_a_label_kind_escalates_failures_and_the_named_labels() -> None:
    policy = load_rubric("policy", RUBRICS)
    rule = Escalation(labels=("minor_issue",))
    assert unsure({"status": "parse_error"}, policy, rule) == "status: parse_error"
    assert unsure({"status": "abstained"}, policy, rule) == "status: abstained"
    assert unsure({"status": "ok", "label": "minor_issue", "score": 0.5}, policy, rule)
    # a labels kind's score does not decide: no margin around a threshold
    assert unsure({"status": "ok", "label": "compliant", "score": 0.5}, policy, rule) is None
    with pytest.raises(UsageError, match="'nope'.*compliant"):
        check_escalation(Escalation(labels=("nope",)), policy)


def test_a_score_kind_escalates_a_score_near_its_threshold() -> None:
    tone = load_rubric("tone", RUBRICS)  # scale 1..5 -> (s - 1) / 4, threshold 0.5
    threshold = tone.behaviour.threshold(tone)
    rule = Escalation(margin=0.25)
    for score, escalated in [(0.0, False), (0.25, True), (0.5, True), (0.75, True), (1.0, False)]:
        got = unsure({"status": "ok", "score": score}, tone, rule)
        assert (got is not None) is escalated, score
        if escalated:
            assert got == f"score: {score:g}, within 0.25 of {threshold:g}"


def test_a_confidence_field_below_the_minimum_escalates() -> None:
    policy = load_rubric("policy", RUBRICS)
    rule = Escalation(min_confidence=0.7)
    low = {"status": "ok", "label": "compliant", "verdict": {"confidence": 0.4}}
    high = {"status": "ok", "label": "compliant", "verdict": {"confidence": 0.9}}
    assert unsure(low, policy, rule) == "confidence: 0.4, below 0.7"
    assert unsure(high, policy, rule) is None
    records = [{"id": "x", **low}, {"id": "y", **high}, {"id": "z", **low}]
    assert escalations(records, {"x", "y"}, policy, rule) == {"x": "confidence: 0.4, below 0.7"}
