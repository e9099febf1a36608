"""Issue 50: confidence by votes, on hand-made outcomes and tallies: the majority of K
replies (ties to the label given first, abstentions and failures), and a panel's share of
its voting jurors (weighted)."""

from __future__ import annotations

import pytest

from judge.engine.outcome import Outcome
from judge.engine.votes import majority
from judge.jury.records import agreement
from judge.jury.vote import Vote, tally
from judge.rubric import load_rubric
from judge.schemas import JudgeInfo, Usage

PAIRWISE = load_rubric("pairwise")
INFO = JudgeInfo(model="m", output_mode="json_schema")


def reply(winner: str | None, *, tokens: int = 10) -> Outcome:
    """An outcome of a pairwise reply naming `winner`, or a parse error for None."""
    usage = Usage(prompt_tokens=tokens, completion_tokens=1)
    if winner is None:
        return Outcome("parse_error", INFO, error="bad", usage=usage)
    verdict = PAIRWISE.verdict_model()(rationale="r", winner=winner)
    return Outcome("ok", INFO, verdict=verdict, usage=usage, confidence=0.9)


def winner(outcome: Outcome) -> str:
    assert outcome.verdict is not None
    return str(outcome.verdict.model_dump()["winner"])


def test_the_majority_label_wins_with_the_share_agreeing() -> None:
    voted = majority(PAIRWISE, [reply("B"), reply("A"), reply("A"), reply("tie"), reply("A")])
    assert winner(voted) == "A"
    assert (voted.confidence, voted.confidence_source) == (0.6, "votes")
    assert voted.usage.prompt_tokens == 50


def test_a_tie_goes_to_the_label_given_first_and_failures_do_not_vote() -> None:
    voted = majority(PAIRWISE, [reply("B"), reply(None), reply("A")])
    assert winner(voted) == "B"
    assert voted.confidence == 0.5  # of the two replies that gave a verdict
    assert voted.usage.prompt_tokens == 30  # the failed reply was billed too


def test_no_verdict_at_all_is_the_first_failure_without_a_confidence() -> None:
    voted = majority(PAIRWISE, [reply(None), reply(None)])
    assert voted.status == "parse_error" and voted.confidence is None
    assert voted.usage.prompt_tokens == 20


def test_a_panel_s_confidence_is_the_weighted_share_of_voting_jurors() -> None:
    votes = [
        Vote("a", "ok", "A", 1.0, weight=2.0),
        Vote("b", "ok", "B", 0.0, weight=1.0),
        Vote("c", "ok", "A", 1.0, weight=1.0),
        Vote("d", "api_error", error="down"),
    ]
    result = tally(votes, quorum=2)
    assert result.label == "A"
    assert agreement(result) == pytest.approx(3 / 4)  # d did not vote
    assert agreement(tally(votes[:2], rule="majority", quorum=3)) is None  # short: no label
