"""The RAG kinds (context relevance, correctness, citations) and the four-criterion
benchmark rubric: a scripted judge on the loopback server gives figures equal to hand
computations; the rules judge reproduces the reference document's worked examples."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.engine.rules import RulesJudge
from judge.kinds.context_relevance import context_precision
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.testing import FakeOpenAIServer, Reply
from tests.helpers import read_jsonl, write_jsonl

QUESTION = "How long is the free trial?"
TRIAL = "The free trial lasts 14 days from the day you sign up."
CANCEL = "You can cancel any time before day 14 and pay nothing."
OFFICE = "Our office is in Berlin and opens at nine."


def grade(
    server: FakeOpenAIServer, tmp_path: Path, rubric: str, rows: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    out, summary = tmp_path / f"{rubric}.jsonl", tmp_path / f"{rubric}.json"
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-x", "JUDGE_MODEL": "m"}
    args = ["grade", str(source), "--rubric", rubric, "-o", str(out), "--no-cache"]
    args += ["--concurrency", "1"]  # scripted replies answer the requests in case order
    assert main([*args, "--summary", str(summary)], env=env) == 0
    return read_jsonl(out), json.loads(summary.read_text())


# ---- correctness ------------------------------------------------------------------------

CORRECTNESS = {
    "answer_claims": [
        {"claim": "The trial is 14 days.", "verdict": "supported", "evidence": "14 days"},
        {"claim": "It starts at sign-up.", "verdict": "supported", "evidence": "sign-up"},
        {"claim": "It includes a gift.", "verdict": "not_in_reference", "evidence": ""},
    ],
    "reference_facts": [
        {"fact": "14 days", "verdict": "covered", "evidence": "14 days"},
        {"fact": "from sign-up", "verdict": "covered", "evidence": "sign-up"},
        {"fact": "free", "verdict": "covered", "evidence": "free"},
        {"fact": "cancel any time", "verdict": "missed", "evidence": ""},
    ],
}


def test_correctness_precision_recall_and_f1_equal_a_hand_computation(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    wrong = {
        "answer_claims": [{"claim": "40 days.", "verdict": "contradicted", "evidence": "14"}],
        "reference_facts": [{"fact": "14 days", "verdict": "missed", "evidence": ""}],
    }
    openai_server.script(Reply(verdict=CORRECTNESS), Reply(verdict=wrong))
    rows = [
        {
            "id": "c1",
            "question": QUESTION,
            "answer": "14 days from sign-up, with a gift.",
            "reference": "The free trial lasts 14 days from sign-up; cancel any time.",
        },
        {"id": "c2", "question": QUESTION, "answer": "40 days.", "reference": "14 days."},
    ]
    records, summary = grade(openai_server, tmp_path, "correctness", rows)
    precision, recall = 2 / 3, 3 / 4
    f1 = 2 * precision * recall / (precision + recall)  # 12/17
    first = records[0]
    assert first["verdict"]["precision"] == pytest.approx(precision)
    assert first["verdict"]["recall"] == pytest.approx(recall)
    assert first["score"] == pytest.approx(f1) and first["verdict"]["f1"] == pytest.approx(12 / 17)
    assert first["label"] == "partial"
    assert (records[1]["score"], records[1]["label"]) == (0.0, "incorrect")
    assert summary["mean_score"] == pytest.approx(f1 / 2, abs=1e-6)
    assert summary["mean_precision"] == pytest.approx(precision / 2, abs=1e-6)
    assert summary["mean_recall"] == pytest.approx(recall / 2, abs=1e-6)
    assert summary["contradicted_claims"] == 1 and summary["exact_match_rate"] is None
    assert openai_server.stats.requests == 2


def test_correctness_rules_tier_is_token_f1_with_exact_match_beside_it() -> None:
    rubric, judge = load_rubric("correctness"), RulesJudge()

    def rules(answer: str, reference: str) -> tuple[float | None, dict[str, Any]]:
        outcome = judge.evaluate_sync(
            rubric, Case(id="x", question=QUESTION, answer=answer, reference=reference)
        )
        assert outcome.verdict is not None
        return rubric.behaviour.score(rubric, outcome.verdict).score, outcome.verdict.model_dump()

    reference = "The trial lasts 14 days and can be cancelled any time."
    example_2, verdict = rules("The free trial lasts 14 days from sign-up.", reference)
    assert round(example_2 or 0, 4) == 0.4706 and verdict["exact_match"] is False
    assert verdict["shared_words"] == ["14", "days", "lasts", "trial"]
    assert (verdict["answer_words"], verdict["reference_words"]) == (8, 9)
    example_7, _ = rules(
        "The free trial lasts 14 days from sign-up. You can cancel any time. "
        "The moon is made of cheese.",
        reference,
    )
    assert round(example_7 or 0, 4) == 0.5833
    # Example 1: the same meaning, no exact match; normalised texts that agree do match
    _, paraphrase = rules("You can get a refund within 30 days.", "The refund window is 30 days.")
    assert paraphrase["exact_match"] is False
    same, verdict = rules("the Refund window is 30 days!", "Refund window is 30 days.")
    assert verdict["exact_match"] is True and same == 1.0
    declined = judge.evaluate_sync(rubric, Case(id="x", answer="I don't know.", reference="14."))
    assert declined.status == "abstained"


# ---- context relevance ------------------------------------------------------------------


def test_context_precision_equals_a_hand_computation(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    verdicts = ["irrelevant", "relevant", "partial", "relevant"]
    chunks = [{"chunk": n, "verdict": v, "quote": ""} for n, v in enumerate(verdicts, 1)]
    openai_server.script(Reply(verdict={"chunks": chunks}))
    row = {"id": "r1", "question": QUESTION, "contexts": [OFFICE, TRIAL, CANCEL, TRIAL]}
    records, summary = grade(openai_server, tmp_path, "context_relevance", [row])
    # v = [0, 1, 0.5, 1]: precision@k = 0, 1/2, 1.5/3, 2.5/4 at the useful ranks 2, 3, 4
    hand = (0.5 * 1 + 0.5 * 0.5 + 0.625 * 1) / 2.5  # 0.55
    assert records[0]["score"] == pytest.approx(hand) and hand == pytest.approx(0.55)
    assert records[0]["verdict"]["relevant_share"] == 0.5 and records[0]["label"] == "relevant"
    assert summary["relevant_share"] == 0.5 and summary["partial_share"] == 0.25
    assert summary["chunks"] == 4


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ([1, 1, 0, 0], 1.0),  # useful chunks first
        ([0, 0, 1, 1], (1 / 3 + 2 / 4) / 2),  # the same chunks, sunk
        ([0, 0, 0], 0.0),  # nothing of use
        ([0.5], 0.5),  # one partial chunk: half useful, precision@1 = 0.5
        ([1, 0.5], (1 * 1 + 0.75 * 0.5) / 1.5),
        ([1, 0, 1], (1 + 2 / 3) / 2),  # Ragas' context precision, binary
    ],
)
def test_context_precision_formula(weights: list[float], expected: float) -> None:
    assert context_precision(weights) == pytest.approx(expected)


def test_a_verdict_that_leaves_a_chunk_out_is_repaired_once_then_a_parse_error(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    one = {"chunks": [{"chunk": 1, "verdict": "relevant", "quote": "14 days"}]}
    two = {"chunks": [*one["chunks"], {"chunk": 2, "verdict": "irrelevant", "quote": ""}]}
    openai_server.script(
        Reply(verdict=one), Reply(verdict=two), Reply(verdict=one), Reply(verdict=one)
    )
    rows = [{"id": f"r{i}", "question": QUESTION, "contexts": [TRIAL, OFFICE]} for i in (1, 2)]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "k", "JUDGE_MODEL": "m"}
    out = tmp_path / "o.jsonl"
    args = ["grade", str(source), "--rubric", "context_relevance", "-o", str(out)]
    main([*args, "--no-cache", "--concurrency", "1", "--max-error-rate", "1"], env=env)
    first, second = read_jsonl(out)
    assert first["status"] == "ok" and first["score"] == 1.0
    assert second["status"] == "parse_error" and "there are 2 chunks" in second["error"]
    repair = openai_server.stats.bodies[1]["messages"][-1]["content"]
    assert "does not fit the case" in repair and openai_server.stats.requests == 4


def test_context_relevance_rules_tier_is_lexical() -> None:
    rubric = load_rubric("context_relevance")
    case = Case(id="x", question=QUESTION, contexts=[OFFICE, TRIAL, "Trials can be extended."])
    outcome = RulesJudge().evaluate_sync(rubric, case)
    assert outcome.verdict is not None
    chunks = outcome.verdict.model_dump()["chunks"]
    assert [c["verdict"] for c in chunks] == ["irrelevant", "relevant", "partial"]
    assert chunks[1]["quote"] == TRIAL
    assert rubric.behaviour.score(rubric, outcome.verdict).score == pytest.approx(
        context_precision([0, 1, 0.5])
    )


# ---- citations --------------------------------------------------------------------------

EXAMPLE_4 = "The trial lasts 14 days from sign-up [1]. Cancel fees are 50 dollars [2]."


def resolves_only(answer: str, contexts: list[str]) -> float:
    """The naive check the reference warns about: a citation is 'correct' when its number
    names a context that exists."""
    numbers = [int(n) for n in re.findall(r"\[(\d+)\]", answer)]
    return sum(1 <= n <= len(contexts) for n in numbers) / len(numbers)


def test_citations_rules_tier_reproduces_example_4() -> None:
    rubric = load_rubric("citations")
    contexts = [TRIAL, CANCEL]
    outcome = RulesJudge().evaluate_sync(rubric, Case(id="x", contexts=contexts, answer=EXAMPLE_4))
    assert outcome.verdict is not None
    scored = rubric.behaviour.score(rubric, outcome.verdict)
    assert (scored.score, scored.label) == (0.5, "unsupported")
    assert resolves_only(EXAMPLE_4, contexts) == 1.0  # source 2 is real, yet it does not support
    verdict = outcome.verdict.model_dump()
    assert [c["verdict"] for s in verdict["sentences"] for c in s["citations"]] == [
        "supported",
        "unsupported",
    ]
    assert verdict["coverage"] == 1.0


def test_a_citation_of_a_context_that_does_not_exist_is_unsupported() -> None:
    rubric = load_rubric("citations")
    answer = "The trial lasts 14 days [3]. You can cancel any time [1]."
    outcome = RulesJudge().evaluate_sync(
        rubric, Case(id="x", contexts=[TRIAL, CANCEL], answer=answer)
    )
    assert outcome.verdict is not None
    checks = [c for s in outcome.verdict.model_dump()["sentences"] for c in s["citations"]]
    assert [(c["context"], c["verdict"]) for c in checks] == [
        (3, "unsupported"),
        (1, "unsupported"),
    ]
    uncited = RulesJudge().evaluate_sync(
        rubric, Case(id="x", contexts=[TRIAL], answer="Two weeks.")
    )
    assert uncited.status == "abstained"


def test_citation_correctness_and_coverage_equal_a_hand_computation(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    answer = (
        "The trial lasts 14 days [1]. You can cancel any time [2][3]. Enjoy it. Fees are 5 [1]."
    )
    verdict = {
        "sentences": [
            {
                "sentence": "The trial lasts 14 days.",
                "citations": [{"context": 1, "verdict": "supported", "evidence": "14 days"}],
            },
            {
                "sentence": "You can cancel any time.",
                "citations": [
                    {"context": 2, "verdict": "supported", "evidence": "cancel any time"},
                    {"context": 3, "verdict": "unsupported", "evidence": ""},
                ],
            },
            {"sentence": "Enjoy it.", "citations": []},
            {
                "sentence": "Fees are 5.",
                "citations": [{"context": 1, "verdict": "unsupported", "evidence": ""}],
            },
        ]
    }
    openai_server.script(Reply(verdict=verdict))
    row = {"id": "c1", "question": QUESTION, "contexts": [TRIAL, CANCEL, OFFICE], "answer": answer}
    records, summary = grade(openai_server, tmp_path, "citations", [row])
    assert records[0]["score"] == pytest.approx(2 / 4)  # supported citations / citations
    assert records[0]["verdict"]["coverage"] == pytest.approx(3 / 4)  # cited / sentences
    assert summary["citation_correctness"] == 0.5 and summary["coverage"] == 0.75
    sent = json.loads(openai_server.stats.bodies[0]["messages"][1]["content"])
    assert [[c["context"] for c in s["citations"]] for s in sent["sentences"]] == [
        [1],
        [2, 3],
        [],
        [1],
    ]


def test_an_uncited_answer_abstains_and_still_counts_in_coverage(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    rows = [
        {"id": "c1", "question": QUESTION, "contexts": [TRIAL], "answer": "It lasts 14 days [1]."},
        {"id": "c2", "question": QUESTION, "contexts": [TRIAL], "answer": "Two weeks. Enjoy."},
    ]
    records, summary = grade(openai_server, tmp_path, "citations", rows)  # simulated verdicts
    assert [r["status"] for r in records] == ["ok", "abstained"]
    assert summary["coverage"] == pytest.approx(1 / 3, abs=1e-6) and summary["uncited_answers"] == 1
