"""`turn_relevancy`: is each assistant turn a relevant reply to the conversation so far?

Each assistant turn is judged with the `window` messages before it (rubric key, default
5), all in one request; see `judge.kinds._turnwise` for the verdict, the score (the share
of turns that pass) and the checks on the judge's reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judge.kinds._turnwise import TurnwiseKind

if TYPE_CHECKING:
    from judge.rubric import Rubric


class TurnRelevancyKind(TurnwiseKind):
    name = "turn_relevancy"
    verdict_name = "TurnRelevancyVerdict"

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "every assistant turn is relevant and passes"
