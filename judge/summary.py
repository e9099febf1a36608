"""The summary of a graded set, built record by record (memory does not grow with N)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from judge.pricing import estimate_cost
from judge.schemas import GradedRecord


@dataclass
class _Stats:
    """Running totals for one group of records (all, or one slice)."""

    statuses: Counter[str] = field(default_factory=Counter)
    scored: int = 0
    score_sum: float = 0.0
    claims: int = 0
    supported: int = 0
    contradicted: int = 0
    unfaithful_answers: int = 0
    relevance_sum: int = 0
    winners: Counter[str] = field(default_factory=Counter)

    def add(self, record: GradedRecord, kind: str) -> None:
        self.statuses[record.status] += 1
        if record.status != "ok" or record.score is None:
            return
        self.scored += 1
        self.score_sum += record.score
        verdict = record.verdict or {}
        if kind == "faithfulness":
            verdicts = [c.get("verdict") for c in verdict.get("claims", [])]
            self.claims += len(verdicts)
            self.supported += verdicts.count("supported")
            self.contradicted += verdicts.count("contradicted")
            self.unfaithful_answers += verdicts.count("supported") < len(verdicts)
        elif kind == "relevance":
            self.relevance_sum += int(verdict.get("score", 0))
        elif kind == "pairwise" and record.label:
            self.winners[record.label] += 1

    def result(self, kind: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cases": sum(self.statuses.values()),
            "status": dict(sorted(self.statuses.items())),
            "scored": self.scored,
            "mean_score": _ratio(self.score_sum, self.scored),
        }
        if kind == "faithfulness":
            out |= {
                "claims": self.claims,
                "supported_claims": self.supported,
                "contradicted_claims": self.contradicted,
                "claim_hallucination_rate": _ratio(self.claims - self.supported, self.claims),
                "answer_hallucination_rate": _ratio(self.unfaithful_answers, self.scored),
            }
        elif kind == "relevance":
            out |= {
                "mean_relevance": _ratio(self.relevance_sum, self.scored),
                "mean_normalised": out["mean_score"],
            }
        elif kind == "pairwise":
            out["win_rates"] = {w: _ratio(self.winners[w], self.scored) for w in ("A", "B", "tie")}
        return out


def _ratio(num: float, den: float) -> float | None:
    return round(num / den, 6) if den else None


class SummaryBuilder:
    """Feed records with `add`; `result()` gives the summary dict of DESIGN.md."""

    def __init__(self, rubric_kind: str, rubric_ref: str) -> None:
        self.kind = rubric_kind
        self.rubric_ref = rubric_ref
        self.all = _Stats()
        self.slices: dict[str, _Stats] = {}
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached = 0
        self.models: Counter[str] = Counter()

    def add(self, record: GradedRecord) -> None:
        self.all.add(record, self.kind)
        for name in record.slices:
            self.slices.setdefault(name, _Stats()).add(record, self.kind)
        self.prompt_tokens += record.usage.prompt_tokens
        self.completion_tokens += record.usage.completion_tokens
        self.cached += record.cached
        self.models[record.judge.model] += 1

    def result(self, prices: tuple[float, float] | None = None) -> dict[str, Any]:
        out = {"rubric": self.rubric_ref, "kind": self.kind, **self.all.result(self.kind)}
        out["cached"] = self.cached
        out["judge_models"] = dict(self.models)
        out["tokens"] = {"prompt": self.prompt_tokens, "completion": self.completion_tokens}
        cost = estimate_cost(self.prompt_tokens, self.completion_tokens, prices)
        out["estimated_cost_usd"] = None if cost is None else round(cost, 6)
        out["by_slice"] = {name: s.result(self.kind) for name, s in sorted(self.slices.items())}
        return out
