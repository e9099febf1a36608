"""`retrieval`: rank metrics of the retrieved ids against the labelled relevant ones.

No judge, no request, no cache (`needs_judge` False): the verdict is computed from the case
alone, whichever judge is configured, with provenance `computed`.

```yaml
kind: retrieval
inputs: [retrieved_ids, relevant_ids, relevance]
k: [1, 3, 5, 10]          # the cut-offs (default)
primary: recall@5         # the record's score (default); also recall_at_5, mrr, ...
```
A case needs `retrieved_ids` (ranked; `[]` = the retriever returned nothing) and labels:
`relevant_ids` (a set) and/or graded `relevance` ({"doc-id": grade}). Per case the verdict
holds hit@k, recall@k, precision@k and nDCG@k for each k, MRR and average precision
(formulas and edge-case rules: `judge.kinds._ranking`), with notes on repeated ids and on a
ranking longer or shorter than `contexts`. Score = the primary metric; label `hit` when a
relevant id is in the top K, else `miss`, K being the primary metric's cut-off (the largest
k for mrr and average precision). A case with no relevant id, or no labels, abstains (the
metrics are 0/0 there; the two-by-two then falls back to context relevance). The summary
gives the mean of every metric (a per-case reciprocal rank averages to the MRR, average
precision to the MAP). Signal: retrieval.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from judge import lexical
from judge.kinds._base import (
    Abstain,
    Choice,
    Kind,
    KindStats,
    Scored,
    VerdictModel,
    numbers_of,
    ratio,
)
from judge.kinds._ranking import grades_of, metric_names, ranked_slots, ranking_metrics
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.rubric import Rubric

DEFAULT_KS = (1, 3, 5, 10)
_AT = re.compile(r"^([a-z]+)@(\d+)$")


class RetrievalSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    k: list[int] = Field(default=list(DEFAULT_KS), min_length=1, max_length=20)
    primary: str = "recall_at_5"

    @field_validator("k")
    @classmethod
    def _ks(cls, ks: list[int]) -> list[int]:
        if any(k < 1 for k in ks) or len(set(ks)) != len(ks):
            raise ValueError("k values must be distinct whole numbers >= 1")
        return sorted(ks)

    @field_validator("primary")
    @classmethod
    def _spelling(cls, name: str) -> str:
        match = _AT.match(name.strip())
        return f"{match[1]}_at_{match[2]}" if match else name.strip()  # recall@5 = recall_at_5

    @model_validator(mode="after")
    def _primary_known(self) -> RetrievalSpec:
        names = metric_names(self.k)
        if self.primary not in names:
            raise ValueError(f"primary {self.primary!r} is not one of {', '.join(names)}")
        return self

    @property
    def label_k(self) -> int:
        """The cut-off of the hit/miss label: the primary metric's, else the largest k."""
        head, _, k = self.primary.rpartition("_at_")
        return int(k) if head and k.isdigit() else max(self.k)


def display_name(metric: str) -> str:
    """`recall_at_5` -> `recall@5`, as the rubric file writes it."""
    return metric.replace("_at_", "@")


@dataclass
class RetrievalStats(KindStats):
    names: list[str]
    primary: str
    sums: dict[str, float] = field(default_factory=dict)
    scored: int = 0

    def add_ok(self, record: GradedRecord) -> None:
        metrics = (record.verdict or {}).get("metrics") or {}
        self.scored += 1
        for name in self.names:
            self.sums[name] = self.sums.get(name, 0.0) + float(metrics.get(name, 0.0))

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        means = {name: ratio(self.sums.get(name, 0.0), self.scored) for name in self.names}
        return {"primary": display_name(self.primary), **means}


class RetrievalKind(Kind):
    name = "retrieval"
    verdict_name = "RetrievalVerdict"
    spec_model = RetrievalSpec
    answer_fields = ()  # it grades a ranking, not an answer: the probes refuse it
    needs_judge = False
    signal = "retrieval"
    columns: ClassVar[dict[str, str]] = {
        "mean_score": "primary",
        "mrr": "MRR",
        "average_precision": "MAP",
    }
    template_inputs = "[retrieved_ids, relevant_ids, relevance]"
    template_keys = """
# computed from the case alone (no judge): retrieved_ids (ranked) against relevant_ids
# and/or graded relevance. k: the cut-offs; primary: the record's score
k: [1, 3, 5, 10]
primary: recall@5
"""

    def headings(self, summary: dict[str, Any]) -> dict[str, str]:
        """The score's column is headed by the metric it is (`recall@5`), not `primary`."""
        return {**self.columns, "mean_score": str(summary.get("primary") or "primary")}

    def __init__(self) -> None:
        self._models: dict[tuple[int, ...], type[BaseModel]] = {}

    def _spec(self, rubric: Rubric) -> RetrievalSpec:
        spec: RetrievalSpec = rubric.spec
        return spec

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        ks = tuple(self._spec(rubric).k)
        if ks not in self._models:
            metrics: dict[str, Any] = {name: (float, ...) for name in metric_names(ks)}
            model = create_model("RetrievalMetrics", __base__=VerdictModel, **metrics)
            self._models[ks] = create_model(
                "RetrievalVerdict",
                __base__=VerdictModel,
                metrics=(model, ...),
                retrieved=(int, ...),
                relevant=(int, ...),
                first_relevant_rank=(int | None, ...),
                notes=(list[str], ...),
            )
        return self._models[ks]

    def required_inputs(self, rubric: Rubric) -> list[str]:
        return ["retrieved_ids"]  # labels may be absent from some cases: those abstain

    def missing_inputs(self, rubric: Rubric, case: Case) -> list[str]:
        return ["retrieved_ids"] if case.retrieved_ids is None else []  # [] = found nothing

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        spec = self._spec(rubric)
        metrics = verdict.model_dump()["metrics"]
        hit = metrics[f"hit_at_{spec.label_k}"]  # label_k is one of k by construction
        return Scored("ok", metrics[spec.primary], "hit" if hit else "miss")

    def case_figures(self, rubric: Rubric, record: GradedRecord) -> dict[str, float]:
        """Every metric of the case but the primary one (that is the score)."""
        metrics = (record.verdict or {}).get("metrics") or {}
        names = [n for n in metric_names(self._spec(rubric).k) if n != self._spec(rubric).primary]
        return numbers_of(metrics, names)

    def choices(self, rubric: Rubric) -> list[Choice]:
        k = self._spec(rubric).label_k
        return [
            Choice("hit", f"a relevant document is among the top {k} retrieved", 1.0),
            Choice("miss", f"no relevant document in the top {k}", 0.0),
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        spec = self._spec(rubric)
        return RetrievalStats(names=metric_names(spec.k), primary=spec.primary)

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel | Abstain:
        if case.relevant_ids is None and case.relevance is None:
            return Abstain("no relevance labels (relevant_ids or relevance): nothing to measure")
        grades = grades_of(case.relevant_ids, case.relevance)
        retrieved = case.retrieved_ids or []
        try:
            metrics = ranking_metrics(retrieved, grades, self._spec(rubric).k)
        except ValueError:
            return Abstain("no relevant id among the labels: the metrics are undefined (0/0)")
        relevant = {doc for doc, grade in grades.items() if grade > 0}
        first = next((r for r, d in enumerate(ranked_slots(retrieved), 1) if d in relevant), None)
        return self.verdict_model(rubric).model_validate(
            {
                "metrics": metrics,
                "retrieved": len(retrieved),
                "relevant": len(relevant),
                "first_relevant_rank": first,
                "notes": _notes(case, retrieved),
            }
        )


def _notes(case: Case, retrieved: list[str]) -> list[str]:
    """What a reader of the record should know about how the ranking was read."""
    notes = []
    repeats = sorted(d for d, n in Counter(retrieved).items() if n > 1)
    if repeats:
        notes.append(
            f"repeated ids {repeats[:5]}: each counts once, at its first rank; a later copy "
            "is a non-relevant slot"
        )
    if case.contexts and len(case.contexts) != len(retrieved):
        notes.append(
            f"{len(retrieved)} retrieved ids but {len(case.contexts)} contexts: the metrics "
            "read the ids only"
        )
    return notes
