"""Relevance of an answer to its question, 1-5.

Verdict `{"rationale", "abstained", "score": 1..5}`. Score = (score - 1) / 4, label "1".."5";
an abstention (the answer only declines) is `abstained`. The summary adds the mean on the
1-5 scale and the mean normalised score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel

from judge import lexical
from judge.kinds._base import Choice, Kind, KindStats, Scored, VerdictModel, ratio
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.rubric import Rubric

LEVELS = {
    5: "answers the question fully and directly",
    4: "answers it, with a small gap or needless detail",
    3: "answers part of it",
    2: "on the topic but does not answer it",
    1: "off-topic or empty",
}


class RelevanceVerdict(VerdictModel):
    rationale: str
    abstained: bool
    score: Literal[1, 2, 3, 4, 5]


@dataclass
class RelevanceStats(KindStats):
    total: int = 0
    scored: int = 0

    def add_ok(self, record: GradedRecord) -> None:
        self.scored += 1
        self.total += int((record.verdict or {}).get("score", 0))

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        return {"mean_relevance": ratio(self.total, self.scored), "mean_normalised": mean_score}


def relevance_verdict(question: str, answer: str) -> RelevanceVerdict:
    """Question-term coverage of the answer: >=0.75 -> 5, >=0.5 -> 4, >=0.3 -> 3, >0 -> 2,
    else 1; an answer with nothing but declining sentences abstains."""
    if lexical.declines(answer):
        return RelevanceVerdict(rationale="The answer declines to answer.", abstained=True, score=1)
    found, terms = lexical.term_coverage(question, answer)
    coverage = found / terms if terms else 1.0
    score = 5 if coverage >= 0.75 else 4 if coverage >= 0.5 else 3 if coverage >= 0.3 else 2
    if coverage == 0:
        score = 1
    rationale = f"The answer uses {found} of {terms} question terms."
    return RelevanceVerdict(rationale=rationale, abstained=False, score=score)  # type: ignore[arg-type]


class RelevanceKind(Kind):
    name = "relevance"
    verdict_name = "RelevanceVerdict"
    columns: ClassVar[dict[str, str]] = {
        "mean_relevance": "mean 1-5",
        "mean_normalised": "normalised",
    }

    label_field = "score"

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return RelevanceVerdict

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        assert isinstance(verdict, RelevanceVerdict)
        if verdict.abstained:
            return Scored("abstained")
        return Scored("ok", (verdict.score - 1) / 4, str(verdict.score))

    def choices(self, rubric: Rubric) -> list[Choice]:
        return [Choice(str(s), LEVELS[s], (s - 1) / 4) for s in (1, 2, 3, 4, 5)]

    def new_stats(self, rubric: Rubric) -> KindStats:
        return RelevanceStats()

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel:
        return relevance_verdict(case.question or "", case.answer or "")

    def simulated_verdict(self, schema: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        verdict = relevance_verdict(
            str(payload.get("question") or ""), str(payload.get("answer") or "")
        )
        return verdict.model_dump(mode="json")

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        return "abstained" in fields or (not fields and set(payload) == {"question", "answer"})

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        return "5"

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "the answer is fully relevant and must get a score of 5"
