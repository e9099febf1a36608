"""`citations`: does each cited context really support the sentence that cites it?

The answer's sentences and `[n]` markers are read by rules (`judge.lexical.citations`:
context n is the n-th context, from 1), so every judge sees the same citations; the judge
only decides support. Verdict `{"sentences": [{"sentence", "citations": [{"context": n,
"verdict": supported | unsupported, "evidence"}]}]}`, one entry per sentence in order.

    citation correctness = supported citations / citations      (the score)
    coverage             = sentences with a citation / sentences  (beside it)

A citation of a context that does not exist is unsupported: resolving the number is not
support (the reference document's Example 4: 0.5 where a check of the numbers alone says
1.0). An answer with no citation abstains: correctness is 0/0, never 0 or 1; its coverage
(0) still counts in the summary. Label `supported` when every citation is, else
`unsupported`. The rules judge checks the words a citation covers against that one context
(content-word overlap and every number, `judge.lexical.check_claim`); it misses
paraphrase, as lexical checks do. Signal: None. Citation correctness is about attribution,
so it is left out of the two-by-two's generation signal (faithfulness or correctness).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, computed_field

from judge import lexical
from judge.kinds._base import Choice, ChoiceStats, Kind, KindStats, Scored, VerdictModel, ratio
from judge.lexical.citations import cited_sentences
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.rubric import Rubric


Support = Literal["supported", "unsupported"]


class CitationCheck(VerdictModel):
    context: int
    verdict: Support
    evidence: str


class SentenceCitations(VerdictModel):
    sentence: str
    citations: list[CitationCheck]


class CitationsVerdict(VerdictModel):
    sentences: list[SentenceCitations]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def citation_correctness(self) -> float | None:
        checks = [c for s in self.sentences for c in s.citations]
        supported = sum(c.verdict == "supported" for c in checks)
        return supported / len(checks) if checks else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def coverage(self) -> float | None:
        cited = sum(bool(s.citations) for s in self.sentences)
        return cited / len(self.sentences) if self.sentences else None


@dataclass
class CitationsStats(ChoiceStats):
    sentences: int = 0
    cited_sentences: int = 0
    citations: int = 0
    supported: int = 0
    uncited_answers: int = 0

    def add_record(self, record: GradedRecord) -> None:
        sentences = (record.verdict or {}).get("sentences") or []
        cited = sum(bool(s.get("citations")) for s in sentences)
        self.sentences += len(sentences)
        self.cited_sentences += cited
        self.uncited_answers += bool(sentences) and not cited

    def add_ok(self, record: GradedRecord) -> None:
        super().add_ok(record)
        checks = [c for s in (record.verdict or {}).get("sentences", []) for c in s["citations"]]
        self.citations += len(checks)
        self.supported += sum(c.get("verdict") == "supported" for c in checks)

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        return {
            "citations": self.citations,
            "supported_citations": self.supported,
            "citation_correctness": ratio(self.supported, self.citations),
            "coverage": ratio(self.cited_sentences, self.sentences),
            "uncited_answers": self.uncited_answers,
            **super().figures(mean_score),
        }


def expected_citations(case: Case) -> list[list[int]]:
    """The context numbers each sentence of the answer cites, in order."""
    return [[c.context for c in s.citations] for s in cited_sentences(case.answer or "")]


Sentences = list[tuple[str, list[tuple[int, str]]]]  # (sentence, [(context, span), ...])


def citations_verdict(
    answer: str, contexts: list[str], *, budget: lexical.Budget | None = None
) -> CitationsVerdict:
    """The rules judge: each citation's words against the one context it names."""
    read = [(s.text, [(c.context, c.span) for c in s.citations]) for s in cited_sentences(answer)]
    return check_citations(read, contexts, budget)


def check_citations(
    sentences: Sentences, contexts: list[str], budget: lexical.Budget | None = None
) -> CitationsVerdict:
    """Each (context, span) of each sentence checked against that context alone; a
    context number outside 1..len(contexts) is unsupported."""
    indexes: dict[int, lexical.ContextIndex] = {}
    out = []
    for text, citations in sentences:
        checks = []
        for n, span in citations:
            if budget is not None:
                budget.check()
            if not 1 <= n <= len(contexts):
                checks.append(CitationCheck(context=n, verdict="unsupported", evidence=""))
                continue
            if n not in indexes:
                indexes[n] = lexical.evidence_index([contexts[n - 1]])
            found = lexical.check_claim(span, indexes[n])
            verdict: Support = "supported" if found.verdict == "supported" else "unsupported"
            checks.append(CitationCheck(context=n, verdict=verdict, evidence=found.evidence))
        out.append(SentenceCitations(sentence=text, citations=checks))
    return CitationsVerdict(sentences=out)


class CitationsKind(Kind):
    name = "citations"
    panel_combines = "score"  # a jury averages scores (judge.jury.vote)
    verdict_name = "CitationsVerdict"
    signal = None
    template_inputs = "[question, contexts, answer]"
    columns: ClassVar[dict[str, str]] = {
        "mean_score": "correct/answer",
        "citation_correctness": "correct/citation",
        "coverage": "coverage",
        "uncited_answers": "uncited",
    }

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return CitationsVerdict

    def payload(self, rubric: Rubric, case: Case) -> dict[str, Any]:
        """The contexts numbered as the answer cites them, and the answer's sentences with
        the context numbers each cites and the words each citation covers."""
        out: dict[str, Any] = {"question": case.question} if "question" in rubric.inputs else {}
        out["contexts"] = [{"number": n, "text": t} for n, t in enumerate(case.contexts, 1)]
        out["sentences"] = [
            {
                "sentence": s.text,
                "citations": [{"context": c.context, "text": c.span} for c in s.citations],
            }
            for s in cited_sentences(case.answer or "")
        ]
        return out

    def verdict_problem(self, rubric: Rubric, case: Case, verdict: BaseModel) -> str | None:
        assert isinstance(verdict, CitationsVerdict)
        wanted = expected_citations(case)
        if len(verdict.sentences) != len(wanted):
            return f"the answer has {len(wanted)} sentences; give one entry for each, in order"
        for number, (entry, cites) in enumerate(zip(verdict.sentences, wanted, strict=True), 1):
            if [c.context for c in entry.citations] != cites:
                return f"sentence {number} cites contexts {cites}; check exactly those, in order"
            if any(
                c.verdict == "supported" and not 1 <= c.context <= len(case.contexts)
                for c in entry.citations
            ):
                return f"sentence {number} cites a context that does not exist: that is unsupported"
        return None

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        assert isinstance(verdict, CitationsVerdict)
        correctness = verdict.citation_correctness
        if correctness is None:
            return Scored("abstained")
        return Scored("ok", correctness, "supported" if correctness == 1.0 else "unsupported")

    def choices(self, rubric: Rubric) -> list[Choice]:
        return [
            Choice("supported", "every cited context supports the sentence that cites it", 1.0),
            Choice("unsupported", "at least one citation points at a context that does not", 0.0),
            Choice("uncited", "the answer cites no context", None),
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        return CitationsStats(names=["supported", "unsupported"])

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel:
        return citations_verdict(case.answer or "", case.contexts, budget=budget)

    def simulated_verdict(self, schema: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        contexts = [str(c.get("text", "")) for c in _dicts(payload.get("contexts"))]
        sentences = [
            (
                str(s.get("sentence", "")),
                [
                    (int(c.get("context", 0)), str(c.get("text", "")))
                    for c in _dicts(s.get("citations"))
                ],
            )
            for s in _dicts(payload.get("sentences"))
        ]
        return check_citations(sentences, contexts).judge_fields()

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        return fields == {"sentences"} or (not fields and "sentences" in payload)

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        return "supported" if clean.status == "ok" else None

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "every citation in the answer is supported by the context it names"


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
