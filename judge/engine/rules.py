"""The offline, deterministic rules judge: the embedded default when no model is configured.

Same rubrics, verdict schemas and records as a model judge; provenance says `rules`. Each
kind gives its own rules verdict (`Kind.rules_verdict`) from the word-overlap building
blocks in `judge.lexical`; a kind with no honest lexical signal abstains and says it needs
a model. It is the cheap first tier and a baseline.

A case over OFFLOAD_CHARS runs in a worker thread, so a server's event loop keeps
answering, and stops at its time budget (an `api_error` record).
"""

from __future__ import annotations

import asyncio

from judge.engine.outcome import Outcome
from judge.kinds import Abstain
from judge.lexical import Budget, BudgetExceeded, token_f1
from judge.rubric import Rubric
from judge.schemas import Case, JudgeInfo

__all__ = [
    "COMPUTED_IDENTITY",
    "COMPUTED_INFO",
    "OFFLOAD_CHARS",
    "RULES_INFO",
    "RulesJudge",
    "case_size",
    "computed_outcome",
    "token_f1",
]

RULES_INFO = JudgeInfo(model="rules", output_mode="rules")
# Provenance of a kind that needs no judge (`Kind.needs_judge` False, e.g. retrieval
# metrics): its value is computed from the case alone, whichever judge is configured.
COMPUTED_INFO = JudgeInfo(model="computed", output_mode="computed")
COMPUTED_IDENTITY = {"judge": "computed"}
# Below this many characters of text a case takes well under a millisecond: a thread would
# cost more than it saves. Above it the case runs off the event loop.
OFFLOAD_CHARS = 20_000
CONVERSATIONS = ("messages", "messages_a", "messages_b")


class RulesJudge:
    """Backend that grades with each kind's rules verdict; never touches the network.

    `time_budget_s` bounds one case (None: no bound); a case over it, or one whose caller
    stopped waiting, ends as an `api_error` record and its worker thread stops."""

    name = "rules"

    def __init__(self, *, time_budget_s: float | None = None) -> None:
        self.time_budget_s = time_budget_s

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        budget = Budget(self.time_budget_s)
        if case_size(case) < OFFLOAD_CHARS:
            return self._outcome(rubric, case, budget)
        try:
            return await asyncio.to_thread(self._outcome, rubric, case, budget)
        finally:
            budget.cancel()  # if we were cancelled, the thread stops at its next check

    def _outcome(self, rubric: Rubric, case: Case, budget: Budget) -> Outcome:
        try:
            return self.evaluate_sync(rubric, case, budget=budget)
        except BudgetExceeded as exc:
            return Outcome(status="api_error", judge=RULES_INFO, error=str(exc))

    def evaluate_sync(self, rubric: Rubric, case: Case, *, budget: Budget | None = None) -> Outcome:
        return rules_outcome(rubric, case, RULES_INFO, budget=budget)

    def cache_identity(self) -> None:
        return None  # cheaper to recompute than to look up

    async def aclose(self) -> None:
        return None


def rules_outcome(
    rubric: Rubric, case: Case, info: JudgeInfo, *, budget: Budget | None = None
) -> Outcome:
    """The kind's rules verdict as an outcome, with `info` as its provenance."""
    verdict = rubric.behaviour.rules_verdict(rubric, case, budget=budget)
    if isinstance(verdict, Abstain):
        return Outcome(status="abstained", judge=info, error=verdict.reason)
    status = rubric.behaviour.score(rubric, verdict).status
    return Outcome(status=status, judge=info, verdict=verdict)


def computed_outcome(rubric: Rubric, case: Case, *, budget: Budget | None = None) -> Outcome:
    """A kind that needs no judge: its rules verdict is the verdict, provenance `computed`.
    A case stopped by `budget` (its caller gave up on it) is an `api_error` record."""
    try:
        return rules_outcome(rubric, case, COMPUTED_INFO, budget=budget)
    except BudgetExceeded as exc:
        return Outcome(status="api_error", judge=COMPUTED_INFO, error=str(exc))


def case_size(case: Case) -> int:
    """Characters of text the rules judge reads for `case` (a conversation's messages too:
    its claims and evidence are their contents)."""
    texts = (case.question, case.answer, case.answer_a, case.answer_b, *case.contexts)
    said = (m.content for name in CONVERSATIONS for m in getattr(case, name) or [])
    return sum(len(t) for t in (*texts, *said) if t)
