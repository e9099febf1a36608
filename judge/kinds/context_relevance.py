"""`context_relevance`: every retrieved chunk judged against the question, in one call.

Verdict `{"chunks": [{"chunk": n, "verdict": relevant | partial | irrelevant, "quote"}]}`,
one entry per context in the order retrieved (chunk 1 is the first context). With
v_i = 1 (relevant), 0.5 (partial) or 0 (irrelevant) for the chunk at rank i of K:

    context precision = sum_k precision@k * v_k / sum_k v_k,  precision@k = sum_{i<=k} v_i / k

Ragas' context precision (the mean of precision@k over the ranks that hold a relevant
chunk) with partial chunks weighted 0.5: 1 when the useful chunks come first, lower as
they sink below irrelevant ones, 0 when no chunk is of use. The record's verdict also
carries `relevant_share` = relevant chunks / chunks (partial ones not counted). Label: the
best chunk's verdict (`relevant` when any chunk is). It is the retrieval signal of the
two-by-two when a case has no labelled relevant ids.

The rules judge is weak and says so in the docs: a chunk is relevant when it uses at least
half of the question's terms, partial when it uses some, irrelevant when none (stemmed
content words; text addressed to the grader does not count); the quote is the chunk's
sentence with the most question terms. It cannot see that a chunk answers a question in
other words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, computed_field

from judge import lexical
from judge.kinds._base import (
    Choice,
    ChoiceStats,
    Kind,
    KindStats,
    Scored,
    VerdictModel,
    numbers_of,
    ratio,
)
from judge.lexical.index import SENTENCE_END
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.rubric import Rubric

ChunkLabel = Literal["relevant", "partial", "irrelevant"]
WEIGHTS: dict[str, float] = {"relevant": 1.0, "partial": 0.5, "irrelevant": 0.0}
RELEVANT_SHARE = 0.5  # rules judge: question terms a chunk must use to count as relevant


def context_precision(weights: list[float]) -> float:
    """sum_k precision@k * v_k / sum_k v_k over ranked chunk weights v (0 when all are 0)."""
    total, seen, useful = 0.0, 0.0, 0.0
    for rank, weight in enumerate(weights, 1):
        seen += weight
        total += (seen / rank) * weight
        useful += weight
    return total / useful if useful else 0.0


class ChunkVerdict(VerdictModel):
    chunk: int
    verdict: ChunkLabel
    quote: str


class ContextRelevanceVerdict(VerdictModel):
    chunks: list[ChunkVerdict]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def context_precision(self) -> float:
        return context_precision([WEIGHTS[c.verdict] for c in self.chunks])

    @computed_field  # type: ignore[prop-decorator]
    @property
    def relevant_share(self) -> float | None:
        chunks = self.chunks
        return sum(c.verdict == "relevant" for c in chunks) / len(chunks) if chunks else None


def chunk_verdict(number: int, question: str, chunk: str) -> ChunkVerdict:
    """The rules judge's view of one chunk (the module docstring's thresholds)."""
    found, terms = lexical.term_coverage(question, chunk)
    share = found / terms if terms else 1.0
    verdict: ChunkLabel = (
        "relevant" if share >= RELEVANT_SHARE else "partial" if found else "irrelevant"
    )
    sentences = [s for s in SENTENCE_END.split(chunk) if s.strip()] or [""]
    quote = max(sentences, key=lambda s: lexical.term_coverage(question, s)[0])
    return ChunkVerdict(chunk=number, verdict=verdict, quote=quote.strip() if found else "")


def relevance_verdict(question: str, contexts: list[str]) -> ContextRelevanceVerdict:
    return ContextRelevanceVerdict(
        chunks=[chunk_verdict(n, question, c) for n, c in enumerate(contexts, 1)]
    )


@dataclass
class ContextRelevanceStats(ChoiceStats):
    chunks: int = 0
    relevant: int = 0
    partial: int = 0

    def add_ok(self, record: GradedRecord) -> None:
        super().add_ok(record)
        verdicts = [c.get("verdict") for c in (record.verdict or {}).get("chunks", [])]
        self.chunks += len(verdicts)
        self.relevant += verdicts.count("relevant")
        self.partial += verdicts.count("partial")

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        return {
            "chunks": self.chunks,
            "relevant_share": ratio(self.relevant, self.chunks),
            "partial_share": ratio(self.partial, self.chunks),
            **super().figures(mean_score),
        }


class ContextRelevanceKind(Kind):
    name = "context_relevance"
    panel_combines = "score"  # a jury averages scores (judge.jury.vote)
    verdict_name = "ContextRelevanceVerdict"
    answer_fields = ()  # it grades the retrieved chunks; there is no answer to pad or inject
    signal = "retrieval"
    template_inputs = "[question, contexts]"
    columns: ClassVar[dict[str, str]] = {
        "mean_score": "ctx precision",
        "relevant_share": "relevant",
        "chunks": "chunks",
    }

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return ContextRelevanceVerdict

    def verdict_problem(self, rubric: Rubric, case: Case, verdict: BaseModel) -> str | None:
        assert isinstance(verdict, ContextRelevanceVerdict)
        numbers = [c.chunk for c in verdict.chunks]
        wanted = list(range(1, len(case.contexts) + 1))
        if numbers != wanted:
            return (
                f"there are {len(wanted)} chunks: judge each once, numbered 1 to "
                f"{len(wanted)} in order (got chunk numbers {numbers[:12]})"
            )
        return None

    def case_figures(self, rubric: Rubric, record: GradedRecord) -> dict[str, float]:
        """The share of relevant chunks beside context precision (the score)."""
        return numbers_of(record.verdict, ("relevant_share",))

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        assert isinstance(verdict, ContextRelevanceVerdict)
        if not verdict.chunks:
            return Scored("abstained")
        best = max(verdict.chunks, key=lambda c: WEIGHTS[c.verdict]).verdict
        return Scored("ok", verdict.context_precision, best)

    def choices(self, rubric: Rubric) -> list[Choice]:
        return [
            Choice("relevant", "at least one chunk helps answer the question", 1.0),
            Choice("partial", "the best chunk touches the question without answering it", 0.5),
            Choice("irrelevant", "no chunk is of use for the question", 0.0),
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        return ContextRelevanceStats(names=list(WEIGHTS))

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel:
        chunks = []
        for number, chunk in enumerate(case.contexts, 1):
            if budget is not None:
                budget.check()
            chunks.append(chunk_verdict(number, case.question or "", chunk))
        return ContextRelevanceVerdict(chunks=chunks)

    def simulated_verdict(self, schema: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        contexts = [str(c) for c in payload.get("contexts") or []]
        return relevance_verdict(str(payload.get("question") or ""), contexts).judge_fields()

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        return fields == {"chunks"} or (not fields and set(payload) == {"question", "contexts"})

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        return "relevant"

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "every retrieved chunk is relevant to the question"
