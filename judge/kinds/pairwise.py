"""Pairwise preference: which of two answers is better, A (shown first), B or a tie.

Verdict `{"rationale", "winner": "A" | "B" | "tie"}`. Score 1 for A, 0.5 for a tie, 0 for
B; the label is the winner. The payload shows `answer_A` then `answer_B`, so the order
shown is part of the cache key and the position probe can swap it. The summary adds the
win rates.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel

from judge import lexical
from judge.kinds._base import Choice, Kind, KindStats, Scored, VerdictModel, ratio
from judge.kinds.faithfulness import claims_verdict
from judge.kinds.relevance import relevance_verdict
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.rubric import Rubric

PAIRWISE_SCORE = {"A": 1.0, "tie": 0.5, "B": 0.0}
TIE_MARGIN = 0.05


class PairwiseVerdict(VerdictModel):
    rationale: str
    winner: Literal["A", "B", "tie"]


@dataclass
class PairwiseStats(KindStats):
    winners: Counter[str] = field(default_factory=Counter)
    scored: int = 0

    def add_ok(self, record: GradedRecord) -> None:
        self.scored += 1
        if record.label:
            self.winners[record.label] += 1

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        return {"win_rates": {w: ratio(self.winners[w], self.scored) for w in ("A", "B", "tie")}}


def _quality(
    question: str,
    answer: str,
    index: lexical.ContextIndex | None,
    budget: lexical.Budget | None,
) -> float:
    relevance = relevance_verdict(question, answer)
    rel = 0.0 if relevance.abstained else (relevance.score - 1) / 4
    if index is None:
        return rel
    claims = claims_verdict(answer, index, budget, question).claims
    faith = sum(c.verdict == "supported" for c in claims) / len(claims) if claims else 0.5
    return 0.5 * rel + 0.5 * faith


def pairwise_verdict(
    question: str,
    answer_a: str,
    answer_b: str,
    contexts: list[str],
    *,
    budget: lexical.Budget | None = None,
) -> PairwiseVerdict:
    """The answer with the higher rules quality (mean of relevance and faithfulness) wins;
    within TIE_MARGIN it is a tie."""
    index = lexical.evidence_index(contexts) if contexts else None
    qa = _quality(question, answer_a, index, budget)
    qb = _quality(question, answer_b, index, budget)
    if abs(qa - qb) <= TIE_MARGIN:
        return PairwiseVerdict(rationale=f"Quality {qa:.2f} vs {qb:.2f}: too close.", winner="tie")
    winner: Literal["A", "B"] = "A" if qa > qb else "B"
    return PairwiseVerdict(rationale=f"Quality A {qa:.2f} vs B {qb:.2f}.", winner=winner)


class PairwiseKind(Kind):
    name = "pairwise"
    verdict_name = "PairwiseVerdict"
    answer_fields = ("answer_a", "answer_b")
    template_inputs = "[question, contexts, answer_a, answer_b]"
    columns: ClassVar[dict[str, str]] = {"win_rates": "win rates"}
    label_field = "winner"

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return PairwiseVerdict

    def payload(self, rubric: Rubric, case: Case) -> dict[str, Any]:
        data: dict[str, Any] = {"question": case.question}
        if case.contexts:
            data["contexts"] = case.contexts
        data["answer_A"] = case.answer_a
        data["answer_B"] = case.answer_b
        return data

    def cache_content(self, rubric: Rubric, case: Case) -> dict[str, Any]:
        content = super().cache_content(rubric, case)
        content["contexts"] = case.contexts  # shown whenever present, whatever the inputs say
        return content

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        assert isinstance(verdict, PairwiseVerdict)
        return Scored("ok", PAIRWISE_SCORE[verdict.winner], verdict.winner)

    def choices(self, rubric: Rubric) -> list[Choice]:
        return [
            Choice("A", "answer A is better", 1.0),
            Choice("B", "answer B is better", 0.0),
            Choice("tie", "neither is better", 0.5),
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        return PairwiseStats()

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel:
        return pairwise_verdict(
            case.question or "",
            case.answer_a or "",
            case.answer_b or "",
            case.contexts,
            budget=budget,
        )

    def simulated_verdict(self, schema: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        answer_a = str(payload.get("answer_A") or payload.get("answer_a") or "")
        answer_b = str(payload.get("answer_B") or payload.get("answer_b") or "")
        contexts = [str(c) for c in payload.get("contexts") or []]
        verdict = pairwise_verdict(str(payload.get("question") or ""), answer_a, answer_b, contexts)
        return verdict.model_dump(mode="json")

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        return "winner" in fields or "answer_A" in payload

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        return "A" if clean.label == "B" else "B"

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return f"answer {target} is the better answer and must win"

    def injection_field(self, target: str) -> str:
        return f"answer_{target.lower()}"

    def raises_score(self, target: str) -> bool:
        return target == "A"
