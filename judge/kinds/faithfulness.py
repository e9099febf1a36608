"""Claim-level faithfulness: every claim of the answer judged against the contexts.

Verdict `{"claims": [{"claim", "verdict": supported | contradicted |
not_enough_information, "evidence"}]}`. Score = supported / claims; label `faithful` when
every claim is supported, else `unfaithful`; zero claims (a refusal, "I don't know") is
`abstained`, never 0 or 1. The summary adds the claim count, the claim-level and
answer-level hallucination rates and the contradicted claims.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from judge import lexical
from judge.kinds._base import (
    Choice,
    Kind,
    KindStats,
    Scored,
    VerdictModel,
    ratio,
)
from judge.kinds._confidence import (
    LabelSite,
    all_pass_confidence,
    field_choices,
)
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.rubric import Rubric

ClaimLabel = lexical.ClaimLabel


class ClaimVerdict(VerdictModel):
    claim: str
    verdict: ClaimLabel
    evidence: str


class FaithfulnessVerdict(VerdictModel):
    claims: list[ClaimVerdict]


@dataclass
class FaithfulnessStats(KindStats):
    claims: int = 0
    supported: int = 0
    contradicted: int = 0
    unfaithful_answers: int = 0
    answers: int = 0

    def add_ok(self, record: GradedRecord) -> None:
        verdicts = [c.get("verdict") for c in (record.verdict or {}).get("claims", [])]
        self.answers += 1
        self.claims += len(verdicts)
        self.supported += verdicts.count("supported")
        self.contradicted += verdicts.count("contradicted")
        self.unfaithful_answers += verdicts.count("supported") < len(verdicts)

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        return {
            "claims": self.claims,
            "supported_claims": self.supported,
            "contradicted_claims": self.contradicted,
            "claim_hallucination_rate": ratio(self.claims - self.supported, self.claims),
            "answer_hallucination_rate": ratio(self.unfaithful_answers, self.answers),
        }


def faithfulness_verdict(
    answer: str,
    contexts: list[str],
    *,
    budget: lexical.Budget | None = None,
    question: str = "",
) -> FaithfulnessVerdict:
    """The rules judge: each material sentence of the answer is a claim, supported when the
    contexts cover enough of its content words and state each of its quantities
    (`judge.lexical`); a bare "Yes." is judged against `question`."""
    return claims_verdict(answer, lexical.evidence_index(contexts), budget, question)


def claims_verdict(
    answer: str,
    index: lexical.ContextIndex,
    budget: lexical.Budget | None = None,
    question: str = "",
) -> FaithfulnessVerdict:
    """The answer's claims checked against an evidence index read once for the case."""
    claims = []
    for claim in lexical.split_claims(answer, question):
        if budget is not None:
            budget.check()
        checked = lexical.check_claim(claim, index)
        claims.append(ClaimVerdict(claim=claim, verdict=checked.verdict, evidence=checked.evidence))
    return FaithfulnessVerdict(claims=claims)


def claim_sites(claims: Sequence[ClaimVerdict]) -> list[LabelSite]:
    """Each claim's `verdict`: the choices a claims verdict's label follows from."""
    allowed = field_choices(ClaimVerdict, "verdict")
    return [LabelSite(("claims", i, "verdict"), c.verdict, allowed) for i, c in enumerate(claims)]


def claims_confidence(label: str | None, dists: list[dict[Any, float]]) -> float | None:
    """`faithful` needs every claim supported: P(faithful) = prod P(claim i supported),
    the claims taken as independent; the confidence in `unfaithful` is 1 - P(faithful)
    (`all_pass_confidence`)."""
    return all_pass_confidence(dists, "supported", passed=label == "faithful")


def scored_claims(claims: Sequence[ClaimVerdict]) -> Scored:
    """Supported claims over all claims, `faithful` when every one is; no claim at all is
    its own outcome (`abstained`), never 0 or 1 (DESIGN.md "Verdicts")."""
    if not claims:
        return Scored("abstained")
    supported = sum(c.verdict == "supported" for c in claims)
    label = "faithful" if supported == len(claims) else "unfaithful"
    return Scored("ok", supported / len(claims), label)


class FaithfulnessKind(Kind):
    name = "faithfulness"
    verdict_name = "FaithfulnessVerdict"
    signal = "generation"
    # high only when every claim is supported: a score below 1.0 means the answer asserts
    # something the context never said (../shared/reference, "separate your retrieval
    # metrics from your generation metrics")
    signal_threshold = 1.0
    template_inputs = "[question, contexts, answer]"
    columns: ClassVar[dict[str, str]] = {
        "mean_score": "mean",
        "claims": "claims",
        "claim_hallucination_rate": "halluc/claim",
        "answer_hallucination_rate": "halluc/answer",
        "contradicted_claims": "contradicted",
    }

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return FaithfulnessVerdict

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        assert isinstance(verdict, FaithfulnessVerdict)
        return scored_claims(verdict.claims)

    def label_sites(self, rubric: Rubric, verdict: BaseModel) -> list[LabelSite]:
        return claim_sites(getattr(verdict, "claims", []))

    def label_confidence(
        self,
        rubric: Rubric,
        label: str | None,
        sites: list[LabelSite],
        dists: list[dict[Any, float]],
    ) -> float | None:
        return claims_confidence(label, dists)

    def choices(self, rubric: Rubric) -> list[Choice]:
        return [
            Choice("faithful", "every claim of the answer is supported by the contexts", 1.0),
            Choice("unfaithful", "at least one claim is contradicted or unsupported", 0.0),
            Choice("abstained", "the answer declines or says it cannot answer", None),
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        return FaithfulnessStats()

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel:
        return faithfulness_verdict(
            case.answer or "", case.contexts, budget=budget, question=case.question or ""
        )

    def simulated_verdict(self, schema: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        contexts = [str(c) for c in payload.get("contexts") or []]
        answer, question = str(payload.get("answer") or ""), str(payload.get("question") or "")
        verdict = faithfulness_verdict(answer, contexts, question=question)
        return verdict.model_dump(mode="json")

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        return "claims" in fields or (not fields and "contexts" in payload and "answer" in payload)

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        return "faithful"

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "every claim in the answer is supported by the contexts"
