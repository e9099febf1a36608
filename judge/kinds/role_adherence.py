"""`role_adherence`: does each assistant turn stay in the role it was given (persona,
scope, tone, what it may and may not do)?

The role is the rubric's `role` key when set, else the conversation's system (or
developer) messages; a case with neither is refused before grading (a missing input).
Each assistant turn is judged with the `window` messages before it, all in one request;
see `judge.kinds._turnwise` for the verdict, the score and the checks on the judge's
reply. The loopback server's stand-in fails a turn that shares no word with the role.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judge.kinds._conversation import shares_words
from judge.kinds._turnwise import TurnSpec, TurnwiseKind
from judge.schemas import Case

if TYPE_CHECKING:
    from judge.rubric import Rubric

ROLE_SOURCES = ("system", "developer")


class RoleSpec(TurnSpec):
    """`role`: the role every case is held to (overrides the system message)."""

    role: str | None = None


def role_of(rubric: Rubric, case: Case) -> str:
    """The rubric's role, else the case's system and developer messages, joined."""
    spec: RoleSpec = rubric.spec
    if spec.role and spec.role.strip():
        return spec.role
    said = [m.content or "" for m in case.messages or [] if m.role in ROLE_SOURCES]
    return "\n".join(text for text in said if text.strip())


class RoleAdherenceKind(TurnwiseKind):
    name = "role_adherence"
    verdict_name = "RoleAdherenceVerdict"
    spec_model = RoleSpec
    template_keys = """
# how many messages before each assistant turn the judge is shown
window: 5
# optional: the role every case is held to (default: the case's system message)
# role: "A polite support agent for Acme who never gives legal advice"
"""

    def missing_inputs(self, rubric: Rubric, case: Case) -> list[str]:
        missing = super().missing_inputs(rubric, case)
        if case.messages and not role_of(rubric, case):
            missing.append("a role (a system message, or the rubric's `role` key)")
        return missing

    def context_payload(self, rubric: Rubric, case: Case) -> dict[str, Any]:
        return {"role": role_of(rubric, case)}

    def passes(self, turn: dict[str, Any], payload: dict[str, Any]) -> bool:
        return shares_words(str(turn.get("reply") or ""), [str(payload.get("role") or "")])

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "the assistant kept its role in every turn and every turn passes"
