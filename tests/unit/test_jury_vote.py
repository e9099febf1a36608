"""The vote rules of a jury: strict majority, plurality, unanimity, weights, quorum, and
ties that are their own outcome whatever the order of the jurors."""

from __future__ import annotations

import itertools
import statistics

import pytest

from judge.jury.config import Jury
from judge.jury.vote import Vote, combine_scores, tally


def votes(*labels: str | None, weights: tuple[float, ...] | None = None) -> list[Vote]:
    out = []
    for number, label in enumerate(labels):
        weight = weights[number] if weights else 1.0
        if label is None:
            out.append(Vote(f"j{number}", "parse_error", weight=weight, error="not JSON"))
        else:
            out.append(Vote(f"j{number}", "ok", label, 1.0 if label == "pass" else 0.0, weight))
    return out


def test_a_strict_majority_of_the_whole_panel_decides() -> None:
    result = tally(votes("pass", "pass", "fail"), quorum=2)
    assert (result.outcome, result.label, result.votes) == ("majority", "pass", "3 of 3")
    assert result.counts == {"pass": 2.0, "fail": 1.0}


def test_unanimous_needs_every_juror_of_the_panel() -> None:
    assert tally(votes("pass", "pass", "pass"), quorum=2).outcome == "unanimous"
    short = tally(votes("pass", "pass", None), quorum=2)
    assert (short.outcome, short.label, short.votes) == ("majority", "pass", "2 of 3")


@pytest.mark.parametrize("order", list(itertools.permutations(["pass", "pass", "fail", "fail"])))
def test_an_even_panel_tie_is_no_majority_in_every_order(order: tuple[str, ...]) -> None:
    for rule in ("majority", "plurality", "unanimity"):
        result = tally(votes(*order), rule=rule, quorum=3)  # type: ignore[arg-type]
        assert (result.outcome, result.label) == ("no_majority", None)


@pytest.mark.parametrize("order", list(itertools.permutations(["pass", "fail", None])))
def test_a_failed_juror_stays_in_the_denominator(order: tuple[str | None, ...]) -> None:
    """One vote each way, one juror failed: 1 of 3 is no majority, and the failure is named."""
    result = tally(votes(*order), quorum=2)
    assert (result.outcome, result.label, result.votes) == ("no_majority", None, "2 of 3")
    failed = order.index(None)
    assert result.failed == [{"juror": f"j{failed}", "status": "parse_error", "error": "not JSON"}]


def test_fewer_votes_than_the_quorum_is_short_never_a_smaller_panel() -> None:
    result = tally(votes("pass", None, None), quorum=2)
    assert (result.outcome, result.label, result.score, result.votes) == (
        "short",
        None,
        None,
        "1 of 3",
    )
    assert [f["juror"] for f in result.failed] == ["j1", "j2"]


def test_plurality_takes_the_single_largest_label_and_refuses_a_tie_for_first() -> None:
    five = votes("a", "a", "b", "c", "d")
    assert tally(five, rule="plurality", quorum=3).label == "a"
    assert tally(five, rule="majority", quorum=3).outcome == "no_majority"
    assert tally(votes("a", "a", "b", "b", "c"), rule="plurality", quorum=3).label is None


def test_unanimity_refuses_any_dissent_or_missing_vote() -> None:
    assert tally(votes("a", "a", "b"), rule="unanimity", quorum=2).outcome == "no_majority"
    assert tally(votes("a", "a", None), rule="unanimity", quorum=2).outcome == "no_majority"
    assert tally(votes("a", "a", "a"), rule="unanimity", quorum=2).label == "a"


def test_fixed_weights_count_as_votes() -> None:
    result = tally(votes("pass", "fail", "fail", weights=(3.0, 1.0, 1.0)), quorum=2)
    assert (result.label, result.counts) == ("pass", {"pass": 3.0, "fail": 2.0})
    tie = tally(votes("pass", "fail", "fail", weights=(2.0, 1.0, 1.0)), quorum=2)
    assert tie.outcome == "no_majority"


def test_scores_by_mean_or_median_with_their_spread() -> None:
    scored = [Vote(f"j{i}", "ok", None, s) for i, s in enumerate([0.0, 0.5, 1.0, 1.0])]
    mean, spread = combine_scores(scored, "mean")
    assert mean == pytest.approx(0.625)
    assert spread == {
        "std": pytest.approx(statistics.pstdev([0, 0.5, 1, 1]), abs=1e-6),
        "min": 0.0,
        "max": 1.0,
    }
    assert combine_scores(scored, "median")[0] == pytest.approx(0.75)
    heavy = [Vote("a", "ok", None, 0.0, 3.0), Vote("b", "ok", None, 1.0, 1.0)]
    assert combine_scores(heavy, "mean")[0] == pytest.approx(0.25)
    assert combine_scores(heavy, "median")[0] == 0.0


def test_the_default_quorum_is_a_majority_of_the_panel() -> None:
    def jury(k: int, **rules: object) -> Jury:
        jurors = [{"name": f"j{i}", "model": "m"} for i in range(k)]
        return Jury.model_validate({"jurors": jurors, **rules})

    assert [jury(k).quorum for k in (2, 3, 4, 5)] == [2, 2, 3, 3]
    assert jury(3, min_votes=3).quorum == 3
    with pytest.raises(ValueError, match="exceeds"):
        jury(3, min_votes=4)
    with pytest.raises(ValueError, match="distinct"):
        Jury.model_validate({"jurors": [{"name": "a", "model": "m"}] * 2})
