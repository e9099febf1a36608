"""`knowledge_retention`: does each assistant turn keep what the user already said (no
question asked twice, no fact forgotten or contradicted)?

Each assistant turn is judged with the `window` messages before it (rubric key; the
built-in rubric shows 10, as facts are often given early), all in one request; see
`judge.kinds._turnwise` for the verdict, the score and the checks on the judge's reply.
The loopback server's stand-in fails a turn that asks again for something the user already
gave (a question sharing a word with an earlier user message).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judge.kinds._conversation import shares_words
from judge.kinds._turnwise import TurnwiseKind

if TYPE_CHECKING:
    from judge.rubric import Rubric


class KnowledgeRetentionKind(TurnwiseKind):
    name = "knowledge_retention"
    verdict_name = "KnowledgeRetentionVerdict"

    def passes(self, turn: dict[str, Any], payload: dict[str, Any]) -> bool:
        reply = str(turn.get("reply") or "")
        said = [
            str(m.get("content") or "")
            for m in turn.get("window") or []
            if isinstance(m, dict) and m.get("role") == "user"
        ]
        return "?" not in reply or not shares_words(reply, said[:-1])

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "the assistant remembered everything and every turn passes"
