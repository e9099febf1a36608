"""The rules judge's claims: only material sentences are claims, and numbers are numbers
whatever their form, with their unit and qualifier (issue 24)."""

from __future__ import annotations

import csv

import pytest

from judge.engine.grader import Grader
from judge.engine.rules import RulesJudge
from judge.kinds.faithfulness import faithfulness_verdict
from judge.lexical import judge_claim, split_claims
from judge.lexical.quantities import Quantity, quantities
from judge.probes import ProbeOptions, run_probe
from judge.probes.verbosity import COURTESY_CLOSE, COURTESY_OPEN, GREETING, OFFER
from judge.rubric import load_rubric
from judge.schemas import Case
from tests.helpers import REPO, TRIAL_CONTEXT, read_jsonl, score_verdict

FACT = "The free trial lasts 14 days from sign-up."

# ---- item 1: greetings, thanks, offers, restated questions and bare answers ------------


@pytest.mark.parametrize(
    "frame",
    [
        COURTESY_OPEN,
        COURTESY_CLOSE,
        GREETING,
        OFFER,
        "Hello!",
        "Thanks so much for reaching out.",
        "Great question!",
        "Hope this helps!",
        "Feel free to contact us if you have any other questions.",
        'You asked: "How long is the free trial?"',
        "How long is the free trial?",
        "Your question was about the trial.",
    ],
)
def test_framing_sentences_are_not_claims(frame: str) -> None:
    assert split_claims(f"{frame} {FACT}") == [FACT]
    assert split_claims(f"{FACT} {frame}") == [FACT]
    padded = faithfulness_verdict(f"{frame} {FACT}", [TRIAL_CONTEXT])
    assert score_verdict(padded)[1:] == (1.0, "faithful")


def test_a_sentence_with_one_material_word_is_still_a_claim() -> None:
    assert split_claims("Thanks: the trial lasts 40 days.") == ["Thanks: the trial lasts 40 days."]
    verdict = faithfulness_verdict("Happy to help with a free gift for you.", [TRIAL_CONTEXT])
    assert score_verdict(verdict)[1:] == (0.0, "unfaithful")


@pytest.mark.parametrize("opener", ["Yes.", "No.", "Yes!", "No, sorry.", "Yes, you can."])
def test_a_bare_yes_or_no_is_judged_with_the_sentence_that_carries_it(opener: str) -> None:
    assert split_claims(f"{opener} {FACT}") == [FACT]
    assert score_verdict(faithfulness_verdict(f"{opener} {FACT}", [TRIAL_CONTEXT]))[1] == 1.0


def test_an_answer_that_is_only_yes_is_judged_against_the_question() -> None:
    question = "Does the free trial last 14 days from sign-up?"
    assert split_claims("Yes.", question) == [f"Yes: {question}"]
    verdict = faithfulness_verdict("Yes.", [TRIAL_CONTEXT], question=question)
    assert score_verdict(verdict)[1:] == (1.0, "faithful")
    off = faithfulness_verdict("Yes.", [TRIAL_CONTEXT], question="Is there a student discount?")
    assert score_verdict(off)[1:] == (0.0, "unfaithful")
    assert split_claims("Yes.") == []  # no question to judge it against: nothing to check


def test_a_leading_yes_is_not_a_word_the_context_must_give() -> None:
    assert judge_claim("Yes, the free trial lasts 14 days.", TRIAL_CONTEXT).verdict == "supported"


def _examples() -> dict[str, dict]:
    return {row["id"]: row for row in read_jsonl(REPO / "examples" / "cases.jsonl")}


def test_the_examples_bare_answers_are_not_claims() -> None:
    cases = _examples()
    returns = cases["returns-007"]
    verdict = faithfulness_verdict(returns["answer"], returns["contexts"])
    assert [c.claim for c in verdict.claims] == [returns["answer"].removeprefix("No. ")]
    assert score_verdict(verdict)[1:] == (1.0, "faithful")  # people: faithful
    billing = cases["billing-003"]
    claims = split_claims(billing["answer"], billing["question"])
    assert len(claims) == 2 and not any(c.lower().startswith("yes") for c in claims)


# ---- item 2: numbers as numbers ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("within two business days", 2, "business day"),
        ("within 2 working days", 2, "business day"),
        ("a couple of days", 2, "day"),
        ("twenty-one days", 21, "day"),
        ("two hundred dollars", 200, "$"),
        ("$1,200", 1200, "$"),
        ("ten percent", 10, "%"),
        ("10% off", 10, "%"),
        ("15 per cent", 15, "%"),
        ("your 3rd order", 3, None),
        ("the third order", 3, "order"),
        ("half an hour", 30, "minute"),
        ("one hour", 60, "minute"),
        ("two weeks", 14, "day"),
        ("a fortnight", 14, "day"),
        ("once per item", 1, "time"),
        ("3/4 of the price", 0.75, None),
    ],
)
def test_a_figure_is_read_whatever_its_form(text: str, value: float, unit: str | None) -> None:
    found = quantities(text)
    assert found and found[0].value == pytest.approx(value)
    if unit is not None:
        assert found[0].unit == unit


@pytest.mark.parametrize("text", ["one of our stores", "First, sign in.", "the one you bought"])
def test_a_number_word_that_quantifies_nothing_is_no_figure(text: str) -> None:
    assert quantities(text) == []


def test_qualifiers_are_read() -> None:
    assert quantities("up to 30 days")[0].qualifier == "cap"
    assert quantities("at least three items")[0] == Quantity(3.0, "item", "floor", spelt=True)
    assert quantities("34 episodes over two seasons")[1].qualifier == "none"  # a preposition
    assert quantities("free over $75")[0].qualifier == "above"
    assert [q.qualifier for q in quantities("within 5-7 business days")] == ["window", "window"]
    assert quantities("only once")[0] == Quantity(1.0, "time", "only", spelt=True)


CONTEXT = "Orders ship within two business days."


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("Orders ship within nine business days.", "contradicted"),
        ("Orders ship within 9 business days.", "contradicted"),
        ("Orders ship within 2 business days.", "supported"),
        ("Orders ship within two working days.", "supported"),
        ("Orders ship within a couple of business days.", "supported"),
        ("Orders ship in two business days.", "supported"),
        ("Orders ship within two weeks.", "contradicted"),
    ],
)
def test_a_changed_number_in_any_form_is_contradicted(claim: str, verdict: str) -> None:
    assert judge_claim(claim, CONTEXT).verdict == verdict


@pytest.mark.parametrize(
    ("claim", "context", "verdict"),
    [
        # reference 000: "up to 30 days" is overstated as "30 days"
        (
            "Refunds are accepted for 30 days.",
            "Refunds are accepted for up to 30 days.",
            "contradicted",
        ),
        # "within 30 days" and "you have 30 days" say one thing (reference 000)
        ("You have 30 days to return items.", "Return items within 30 days.", "supported"),
        ("You can return at least two items.", "You can return only two items.", "contradicted"),
        ("Shipping is free over $75.", "Shipping is free on orders over $75.", "supported"),
        ("Shipping is free under $75.", "Shipping is free on orders over $75.", "contradicted"),
        ("Save ten percent on boots.", "Save 10% on boots.", "supported"),
        ("Save twenty percent on boots.", "Save 10% on boots.", "contradicted"),
    ],
)
def test_a_changed_qualifier_is_contradicted(claim: str, context: str, verdict: str) -> None:
    assert judge_claim(claim, context).verdict == verdict


def test_a_spelt_count_the_context_gives_no_figure_for_is_the_words_business() -> None:
    context = "Films titled Veeram: there is a 2014 Tamil one and a 2016 Malayalam one."
    assert judge_claim("There are two films titled Veeram.", context).verdict == "supported"
    assert judge_claim("There are 2 films titled Veeram.", context).verdict != "supported"
    married = "He married twice and had three children."
    assert judge_claim("He married twice and had four children.", married).verdict == (
        "contradicted"
    )


def test_a_figure_the_context_says_nothing_about_is_not_a_contradiction() -> None:
    # the words are there but the context gives no figure for the thing: unsupported
    checked = judge_claim("Orders ship within two business days to 40 countries.", CONTEXT)
    assert checked.verdict != "supported"


# ---- item 5: the verbosity probe measures it ---------------------------------------------


async def test_padding_lowers_no_answer_people_call_faithful() -> None:
    cases = [Case(**row) for row in read_jsonl(REPO / "examples" / "cases.jsonl")]
    with (REPO / "examples" / "human_labels.csv").open(encoding="utf-8") as handle:
        faithful = {r["id"] for r in csv.DictReader(handle) if r["label"] == "faithful"}
    grader = Grader(RulesJudge(), load_rubric("faithfulness"))
    result = await run_probe("verbosity", grader, cases, ProbeOptions(paddings=("courtesy",)))
    assert not set(result.report["lowered_ids"]) & faithful
    every = await run_probe("verbosity", grader, cases, ProbeOptions())
    assert set(every.report["strategies"]) >= {"courtesy", "greeting", "offer", "restate"}
    assert every.report["lowered_ids"] == [] and every.report["raised_ids"] == []
