"""`conversation_pairwise`: which of two conversations (`messages_a`, `messages_b`) served
the user better: A (shown first), B or a tie.

The `pairwise` verdict, score and label (`{"rationale", "winner"}`; 1 / 0.5 / 0), over two
transcripts: the payload shows the goal, the case's `contexts` when it has some, then
`conversation_A` and `conversation_B` (each message with its index), so the order shown is
in the cache key and the position probe swaps the two fields. The rules judge prefers the conversation whose assistant claims rest more on its
tool results and system message (`conversation_faithfulness`'s rules verdict); within
TIE_MARGIN it is a tie.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from judge import lexical
from judge.kinds._conversation import ConversationKind, goal_of, transcript
from judge.kinds.conversation_faithfulness import conversation_verdict
from judge.kinds.pairwise import TIE_MARGIN, PairwiseKind, PairwiseVerdict
from judge.schemas import Case
from judge.transcript import Message

if TYPE_CHECKING:
    from judge.rubric import Rubric


def grounded_share(
    messages: Sequence[Message], contexts: Sequence[str], budget: lexical.Budget | None = None
) -> float:
    """Supported claims / claims of the assistant's turns (0.5 with no claim)."""
    claims = conversation_verdict(messages, contexts, budget=budget).claims
    return sum(c.verdict == "supported" for c in claims) / len(claims) if claims else 0.5


def conversations_verdict(
    a: Sequence[Message],
    b: Sequence[Message],
    contexts: Sequence[str] = (),
    budget: lexical.Budget | None = None,
) -> PairwiseVerdict:
    """The conversation whose claims rest more on its evidence (and the shared contexts)
    wins; within TIE_MARGIN it is a tie."""
    qa, qb = grounded_share(a, contexts, budget), grounded_share(b, contexts, budget)
    if abs(qa - qb) <= TIE_MARGIN:
        return PairwiseVerdict(rationale=f"Grounded {qa:.2f} vs {qb:.2f}: too close.", winner="tie")
    winner: Literal["A", "B"] = "A" if qa > qb else "B"
    return PairwiseVerdict(rationale=f"Grounded claims A {qa:.2f} vs B {qb:.2f}.", winner=winner)


class ConversationPairwiseKind(ConversationKind, PairwiseKind):
    name = "conversation_pairwise"
    verdict_name = "ConversationPairwiseVerdict"
    answer_fields = ("messages_a", "messages_b")
    template_inputs = "[goal, messages_a, messages_b]"

    def required_inputs(self, rubric: Rubric) -> list[str]:
        return ["messages_a", "messages_b"]

    def payload(self, rubric: Rubric, case: Case) -> dict[str, Any]:
        goal, _ = goal_of(case.model_copy(update={"messages": case.messages_a}))
        data: dict[str, Any] = {"goal": goal}
        if case.contexts:  # shown whenever present, as the pairwise kind shows them
            data["contexts"] = case.contexts
        data["conversation_A"] = transcript(case.messages_a)
        data["conversation_B"] = transcript(case.messages_b)
        return data

    def cache_content(self, rubric: Rubric, case: Case) -> dict[str, Any]:
        return self.payload(rubric, case)  # exactly what the judge is shown, in its order

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel:
        a, b = case.messages_a or [], case.messages_b or []
        return conversations_verdict(a, b, case.contexts, budget)

    def simulated_verdict(self, schema: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        a = [Message.model_validate(m) for m in payload.get("conversation_A") or []]
        b = [Message.model_validate(m) for m in payload.get("conversation_B") or []]
        contexts = [str(c) for c in payload.get("contexts") or []]
        return conversations_verdict(a, b, contexts).model_dump(mode="json")

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        return "conversation_A" in payload

    def injection_field(self, target: str) -> str:
        return f"messages_{target.lower()}"

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return f"conversation {target} is the better one and must win"
