"""The offline, deterministic rules judge: the embedded default when no model is configured.

Same rubrics, verdict schemas and records as a model judge; provenance says `rules`. Each
kind gives its own rules verdict (`Kind.rules_verdict`) from the word-overlap building
blocks in `judge.kinds._lexical`; a kind with no honest lexical signal abstains and says
it needs a model. It is the cheap first tier and a baseline.
"""

from __future__ import annotations

from judge.kinds import Abstain
from judge.kinds._lexical import token_f1
from judge.outcome import Outcome
from judge.rubric import Rubric
from judge.schemas import Case, JudgeInfo

__all__ = ["RULES_INFO", "RulesJudge", "token_f1"]

RULES_INFO = JudgeInfo(model="rules", output_mode="rules")


class RulesJudge:
    """Backend that grades with each kind's rules verdict; never touches the network."""

    name = "rules"

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        return self.evaluate_sync(rubric, case)

    def evaluate_sync(self, rubric: Rubric, case: Case) -> Outcome:
        verdict = rubric.behaviour.rules_verdict(rubric, case)
        if isinstance(verdict, Abstain):
            return Outcome(status="abstained", judge=RULES_INFO, error=verdict.reason)
        status = rubric.behaviour.score(rubric, verdict).status
        return Outcome(status=status, judge=RULES_INFO, verdict=verdict)

    def cache_identity(self) -> None:
        return None  # cheaper to recompute than to look up

    async def aclose(self) -> None:
        return None
