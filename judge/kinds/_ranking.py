"""Rank-based retrieval metrics for one query, with trec_eval's definitions.

Inputs: the ranked ids the retriever returned and the graded relevance of ids
(`{"doc-id": grade}`, grade >= 0; a plain set of relevant ids is grade 1 each). An id is
relevant when its grade is above 0. With R relevant ids, rel_i = 1 when the id at rank i
is relevant, g_i its grade (0 when ungraded):

    hit@k        = 1 if any rel_i = 1 for i <= k, else 0     (trec_eval success_k)
    recall@k     = sum_{i<=k} rel_i / R                      (recall_k)
    precision@k  = sum_{i<=k} rel_i / k                      (P_k: k, not the list length)
    nDCG@k       = DCG@k / IDCG@k, DCG@k = sum_{i<=k} g_i / log2(i + 1), IDCG@k the same
                   over the grades sorted high to low        (ndcg_cut_k, linear gain)
    mrr          = 1 / rank of the first relevant id, 0 if none (recip_rank; its mean over
                   cases is the MRR)
    average_precision = sum over relevant ranks i of precision@i / R   (map; its mean is MAP)

Edge cases, each a rule (tests/e2e/test_retrieval.py checks them against ir-measures, which
runs trec_eval through pytrec_eval):
- no relevant id (R = 0): recall, nDCG and AP are 0/0. The metrics are undefined and the
  kind abstains, never 0 or 1. Here we part from trec_eval on purpose: it leaves out a
  query with no judgements at all, but scores 0 a query whose judged ids are all grade 0,
  which would count a question with nothing to find as a retrieval failure.
- a repeated id: its first rank counts; a later copy is a non-relevant slot at its rank
  (the context window spent that slot on a copy), never a second hit.
- k beyond the list: the missing ranks are non-relevant (precision@10 of a 3-id list with
  one hit is 1/10, as trec_eval's P_10).
- an empty ranking: every metric is 0.
- relevant ids the retriever never returned lower recall, nDCG (through IDCG) and AP.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

RANKED_METRICS = ("hit", "recall", "precision", "ndcg")
WHOLE_LIST_METRICS = ("mrr", "average_precision")


def metric_names(ks: Sequence[int]) -> list[str]:
    """`hit_at_1, ..., ndcg_at_10, mrr, average_precision` for the cut-offs `ks`."""
    return [f"{m}_at_{k}" for m in RANKED_METRICS for k in ks] + list(WHOLE_LIST_METRICS)


def grades_of(
    relevant_ids: Sequence[str] | None, relevance: Mapping[str, float] | None
) -> dict[str, float]:
    """Graded relevance from a case's labels: `relevance` as given, and grade 1 for each id
    of `relevant_ids` that `relevance` does not grade."""
    grades = {doc: float(grade) for doc, grade in (relevance or {}).items()}
    for doc in relevant_ids or ():
        grades.setdefault(doc, 1.0)
    return grades


def ranked_slots(retrieved: Sequence[str]) -> list[str | None]:
    """The ranking with each repeated id replaced by None (a non-relevant slot)."""
    seen: set[str] = set()
    slots: list[str | None] = []
    for doc in retrieved:
        slots.append(None if doc in seen else doc)
        seen.add(doc)
    return slots


def dcg(gains: Sequence[float]) -> float:
    """sum_i g_i / log2(i + 1), ranks from 1."""
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, 1) if g)


def ranking_metrics(
    retrieved: Sequence[str], grades: Mapping[str, float], ks: Sequence[int]
) -> dict[str, float]:
    """Every metric of `metric_names(ks)` for one query (the module docstring's formulas).
    Raises ValueError when no id is relevant (the metrics are undefined)."""
    relevant = {doc for doc, grade in grades.items() if grade > 0}
    if not relevant:
        raise ValueError("no relevant id: recall, nDCG and average precision are undefined")
    slots = ranked_slots(retrieved)
    hits = [doc is not None and doc in relevant for doc in slots]
    gains = [grades.get(doc, 0.0) if doc is not None else 0.0 for doc in slots]
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)
    out: dict[str, float] = {}
    for k in ks:
        found = sum(hits[:k])
        out[f"hit_at_{k}"] = 1.0 if found else 0.0
        out[f"recall_at_{k}"] = found / len(relevant)
        out[f"precision_at_{k}"] = found / k
        out[f"ndcg_at_{k}"] = dcg(gains[:k]) / dcg(ideal[:k])
    first = next((rank for rank, hit in enumerate(hits, 1) if hit), None)
    out["mrr"] = 1.0 / first if first else 0.0
    out["average_precision"] = average_precision(hits, len(relevant))
    return {name: out[name] for name in metric_names(ks)}


def average_precision(hits: Sequence[bool], relevant: int) -> float:
    """sum over the ranks i that hold a relevant id of (hits up to i) / i, over R."""
    total, found = 0.0, 0
    for rank, hit in enumerate(hits, 1):
        if hit:
            found += 1
            total += found / rank
    return total / relevant
