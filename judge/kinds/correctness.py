"""`correctness`: the answer against a reference (gold) answer, precision and recall in one call.

Verdict `{"answer_claims": [{"claim", "verdict": supported | contradicted |
not_in_reference, "evidence"}], "reference_facts": [{"fact", "verdict": covered | missed,
"evidence"}]}`:

    precision = supported answer claims / answer claims   (is what it says right?)
    recall    = covered reference facts / reference facts (does it say what it should?)
    score     = F1 = 2 P R / (P + R), 0 when both are 0

The record's verdict carries precision, recall and f1 beside the lists. Label `incorrect`
when a claim contradicts the reference or F1 is 0, `correct` when P = R = 1, else
`partial`. An answer with no claim (a refusal) abstains.

The rules judge cannot read meaning: its verdict is `{"method": "token_f1", ...}`, the
content-word overlap of the answer with the reference (`judge.lexical.token_f1`: precision =
shared words / answer words, recall = shared / reference words, F1 as above), with exact
match of the normalised texts beside it (`judge.lexical.exact_match`). It reproduces the
reference document's worked examples (0.4706 and 0.5833) and is weak on paraphrase.
Signal: generation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, computed_field

from judge import lexical
from judge.kinds._base import (
    Abstain,
    Choice,
    ChoiceStats,
    Kind,
    KindStats,
    Scored,
    VerdictModel,
    numbers_of,
    ratio,
)
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.rubric import Rubric

LABELS = ("correct", "partial", "incorrect")
ClaimLabel = Literal["supported", "contradicted", "not_in_reference"]


def f1_of(precision: float | None, recall: float | None) -> float | None:
    """2 P R / (P + R); 0 when both are 0; None when either is undefined."""
    if precision is None or recall is None:
        return None
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


class AnswerClaim(VerdictModel):
    claim: str
    verdict: ClaimLabel
    evidence: str


class ReferenceFact(VerdictModel):
    fact: str
    verdict: Literal["covered", "missed"]
    evidence: str


class CorrectnessVerdict(VerdictModel):
    answer_claims: list[AnswerClaim]
    reference_facts: list[ReferenceFact]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def precision(self) -> float | None:
        claims = self.answer_claims
        return sum(c.verdict == "supported" for c in claims) / len(claims) if claims else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def recall(self) -> float | None:
        facts = self.reference_facts
        return sum(f.verdict == "covered" for f in facts) / len(facts) if facts else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def f1(self) -> float | None:
        return f1_of(self.precision, self.recall)


class TokenF1Verdict(VerdictModel):
    """The rules judge's verdict: content-word overlap with the reference."""

    method: Literal["token_f1"]
    answer_words: int
    reference_words: int
    shared_words: list[str]
    exact_match: bool

    @computed_field  # type: ignore[prop-decorator]
    @property
    def precision(self) -> float:
        return len(self.shared_words) / self.answer_words if self.answer_words else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def recall(self) -> float:
        return len(self.shared_words) / self.reference_words if self.reference_words else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def f1(self) -> float:
        return f1_of(self.precision, self.recall) or 0.0


def token_f1_verdict(answer: str, reference: str) -> TokenF1Verdict:
    predicted, wanted, shared = lexical.token_overlap(answer, reference)
    return TokenF1Verdict(
        method="token_f1",
        answer_words=predicted,
        reference_words=wanted,
        shared_words=sorted(shared.elements()),
        exact_match=lexical.exact_match(answer, reference),
    )


def claims_verdict(answer: str, reference: str) -> CorrectnessVerdict:
    """A sentence-level lexical verdict in the judge's shape (the loopback test server's
    answer): answer claims checked against the reference, reference facts against the answer."""
    in_reference = lexical.evidence_index([reference])
    in_answer = lexical.evidence_index([answer])
    claims = [
        AnswerClaim(claim=c.claim, verdict=_claim_label(c.verdict), evidence=c.evidence)
        for c in (lexical.check_claim(s, in_reference) for s in lexical.split_claims(answer))
    ]
    facts = [
        ReferenceFact(
            fact=f.claim,
            verdict="covered" if f.verdict == "supported" else "missed",
            evidence=f.evidence,
        )
        for f in (lexical.check_claim(s, in_answer) for s in lexical.split_claims(reference))
    ]
    return CorrectnessVerdict(answer_claims=claims, reference_facts=facts)


def _claim_label(checked: lexical.ClaimLabel) -> ClaimLabel:
    return "not_in_reference" if checked == "not_enough_information" else checked


@dataclass
class CorrectnessStats(ChoiceStats):
    precision: float = 0.0
    recall: float = 0.0
    exact: int = 0
    lexical: int = 0
    contradicted: int = 0

    def add_ok(self, record: GradedRecord) -> None:
        super().add_ok(record)
        verdict = record.verdict or {}
        self.precision += float(verdict.get("precision") or 0.0)
        self.recall += float(verdict.get("recall") or 0.0)
        if "exact_match" in verdict:
            self.lexical += 1
            self.exact += bool(verdict["exact_match"])
        claims = verdict.get("answer_claims") or []
        self.contradicted += sum(c.get("verdict") == "contradicted" for c in claims)

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        return {
            "mean_precision": ratio(self.precision, self.scored),
            "mean_recall": ratio(self.recall, self.scored),
            "exact_match_rate": ratio(self.exact, self.lexical),
            "contradicted_claims": self.contradicted,
            **super().figures(mean_score),
        }


class CorrectnessKind(Kind):
    name = "correctness"
    panel_combines = "score"  # a jury averages scores (judge.jury.vote)
    verdict_name = "CorrectnessVerdict"
    signal = "generation"
    template_inputs = "[question, answer, reference]"
    columns: ClassVar[dict[str, str]] = {
        "mean_score": "F1",
        "mean_precision": "precision",
        "mean_recall": "recall",
        "exact_match_rate": "exact",
    }

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return CorrectnessVerdict

    def verdict_problem(self, rubric: Rubric, case: Case, verdict: BaseModel) -> str | None:
        assert isinstance(verdict, CorrectnessVerdict)
        if not verdict.reference_facts:
            return "reference_facts is empty: list the reference's key facts (at least one)"
        return None

    def case_figures(self, rubric: Rubric, record: GradedRecord) -> dict[str, float]:
        """Precision and recall beside F1 (the score); exact match on the rules tier."""
        return numbers_of(record.verdict, ("precision", "recall", "exact_match"))

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        assert isinstance(verdict, CorrectnessVerdict | TokenF1Verdict)
        f1 = verdict.f1
        if f1 is None:
            return Scored("abstained")
        contradicted = isinstance(verdict, CorrectnessVerdict) and any(
            c.verdict == "contradicted" for c in verdict.answer_claims
        )
        if contradicted or f1 == 0:
            label = "incorrect"
        elif f1 == 1 or (isinstance(verdict, TokenF1Verdict) and verdict.exact_match):
            label = "correct"
        else:
            label = "partial"
        return Scored("ok", f1, label)

    def choices(self, rubric: Rubric) -> list[Choice]:
        return [
            Choice("correct", "says everything the reference says, and nothing against it", 1.0),
            Choice(
                "partial", "right as far as it goes, with key facts missing or extra claims", 0.5
            ),
            Choice("incorrect", "contradicts the reference, or shares nothing with it", 0.0),
            Choice("abstained", "the answer declines or says it cannot answer", None),
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        return CorrectnessStats(names=list(LABELS))

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel | Abstain:
        answer = case.answer or ""
        if not lexical.split_claims(answer):
            return Abstain("the answer declines or states nothing to compare with the reference")
        return token_f1_verdict(answer, case.reference or "")

    def simulated_verdict(self, schema: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        answer, reference = str(payload.get("answer") or ""), str(payload.get("reference") or "")
        return claims_verdict(answer, reference).judge_fields()

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        shown = set(payload)
        return "reference_facts" in fields or (
            not fields and {"answer", "reference"} <= shown <= {"question", "answer", "reference"}
        )

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        return "correct"

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "the answer states every fact of the reference and nothing against it"
