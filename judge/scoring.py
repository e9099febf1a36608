"""Verdict -> (status, score on 0..1, categorical label), the same for every judge."""

from __future__ import annotations

from pydantic import BaseModel

from judge.schemas import FaithfulnessVerdict, PairwiseVerdict, RelevanceVerdict, Status

PAIRWISE_SCORE = {"A": 1.0, "tie": 0.5, "B": 0.0}


def score_verdict(verdict: BaseModel) -> tuple[Status, float | None, str | None]:
    """Faithfulness: supported / claims, `faithful` only when every claim is supported; zero
    claims is `abstained`. Relevance: (score - 1) / 4, label "1".."5"; an abstention is
    `abstained`. Pairwise: 1 for A, 0.5 for a tie, 0 for B."""
    if isinstance(verdict, FaithfulnessVerdict):
        if not verdict.claims:
            return "abstained", None, None
        supported = sum(c.verdict == "supported" for c in verdict.claims)
        label = "faithful" if supported == len(verdict.claims) else "unfaithful"
        return "ok", supported / len(verdict.claims), label
    if isinstance(verdict, RelevanceVerdict):
        if verdict.abstained:
            return "abstained", None, None
        return "ok", (verdict.score - 1) / 4, str(verdict.score)
    if isinstance(verdict, PairwiseVerdict):
        return "ok", PAIRWISE_SCORE[verdict.winner], verdict.winner
    raise TypeError(f"unknown verdict type {type(verdict).__name__}")
