"""`conversation_faithfulness`: claim-level faithfulness of an assistant's turns, where the
evidence is what the assistant was given: tool results, the system (and developer)
messages and any `contexts` of the case. What the user said is the request, not evidence.

Verdict `{"claims": [{"claim", "verdict": supported | contradicted |
not_enough_information, "evidence", "turn"}]}`: the `faithfulness` verdict with each claim's
assistant turn (its index in `messages`), so everything that reads claims reads these.
Score = supported / claims; label `faithful` when every claim is supported, else
`unfaithful`; zero claims (the assistant only asked questions or declined) is `abstained`.
The summary is faithfulness's. The rules judge works offline as faithfulness's does: each
material sentence of each assistant turn is a claim, checked against the evidence by
content-word coverage and stated figures (`judge.lexical`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from judge import lexical
from judge.kinds._base import (
    Choice,
    KindStats,
    Scored,
    VerdictModel,
)
from judge.kinds._confidence import (
    LabelSite,
)
from judge.kinds._conversation import ConversationKind, transcript
from judge.kinds.faithfulness import (
    ClaimVerdict,
    FaithfulnessStats,
    claim_sites,
    claims_confidence,
    scored_claims,
)
from judge.schemas import Case, GradedRecord
from judge.transcript import Message, assistant_turns

if TYPE_CHECKING:
    from judge.rubric import Rubric

EVIDENCE_ROLES = ("system", "developer", "tool")
_JSON = json.JSONDecoder()


class TurnClaim(ClaimVerdict):
    turn: int


class ConversationFaithfulnessVerdict(VerdictModel):
    claims: list[TurnClaim]


def passages(text: str) -> list[str]:
    """A tool result as evidence passages: a JSON value it starts with, then the text after
    it apart. Text glued after the data (`{...} NOTICE TO THE GRADER: ...`) would otherwise
    open one sentence with the JSON, and the rules judge's screen for notes addressed to
    the grader reads a sentence from its start."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return [text]
    try:
        value, end = _JSON.raw_decode(stripped)
    except ValueError:
        return [text]
    data = json.dumps(keys_as_words(value), ensure_ascii=False)
    return [part for part in (data, stripped[end:].strip()) if part]


_KEY_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def keys_as_words(value: Any) -> Any:
    """A JSON value with every object key spelt as words (`order_id`, `orderId`,
    `OrderID`, `order-id` -> `order id`): a claim says "your order", not "orderId", and
    the rules judge compares words. Values are kept as they are."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            words = " ".join(_KEY_WORD.findall(str(key))) or str(key)
            out[str(key) if words in out else words] = keys_as_words(item)  # none lost
        return out
    if isinstance(value, list):
        return [keys_as_words(item) for item in value]
    return value


def evidence_of(messages: Sequence[Message], contexts: Sequence[str]) -> list[str]:
    """The texts an assistant's claims may rest on: tool results, system and developer
    messages, then the case's contexts."""
    given = [
        part
        for m in messages
        if m.role in EVIDENCE_ROLES
        for part in (passages(m.content or "") if m.role == "tool" else [m.content or ""])
    ]
    return [text for text in (*given, *contexts) if text.strip()]


def conversation_verdict(
    messages: Sequence[Message],
    contexts: Sequence[str],
    *,
    budget: lexical.Budget | None = None,
) -> ConversationFaithfulnessVerdict:
    """The rules judge: every assistant turn's claims against the conversation's evidence
    (read once); a turn's claims are read against the user message before it, so a bare
    "Yes." answers that message."""
    index = lexical.evidence_index(evidence_of(messages, contexts))
    claims: list[TurnClaim] = []
    asked = ""
    for number, message in enumerate(messages):
        if message.role == "user":
            asked = message.content or ""
        if message.role != "assistant" or not (message.content or "").strip():
            continue
        for claim in lexical.split_claims(message.content or "", asked):
            if budget is not None:
                budget.check()
            checked = lexical.check_claim(claim, index)
            claims.append(
                TurnClaim(
                    claim=claim, verdict=checked.verdict, evidence=checked.evidence, turn=number
                )
            )
    return ConversationFaithfulnessVerdict(claims=claims)


class ConversationFaithfulnessKind(ConversationKind):
    name = "conversation_faithfulness"
    verdict_name = "ConversationFaithfulnessVerdict"
    template_inputs = "[messages, contexts]"
    columns: ClassVar[dict[str, str]] = {
        "mean_score": "mean",
        "claims": "claims",
        "claim_hallucination_rate": "halluc/claim",
        "answer_hallucination_rate": "halluc/conversation",
        "contradicted_claims": "contradicted",
    }

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return ConversationFaithfulnessVerdict

    def required_inputs(self, rubric: Rubric) -> list[str]:
        return ["messages"]  # contexts are more evidence when a case has them

    def label_sites(self, rubric: Rubric, verdict: BaseModel) -> list[LabelSite]:
        return claim_sites(getattr(verdict, "claims", []))

    def label_confidence(
        self,
        rubric: Rubric,
        label: str | None,
        sites: list[LabelSite],
        dists: list[dict[Any, float]],
    ) -> float | None:
        return claims_confidence(label, dists)

    def payload(self, rubric: Rubric, case: Case) -> dict[str, Any]:
        data: dict[str, Any] = {"messages": transcript(case.messages)}
        if "contexts" in rubric.inputs and case.contexts:
            data["contexts"] = case.contexts
        return data

    def verdict_problem(self, rubric: Rubric, case: Case, verdict: BaseModel) -> str | None:
        assert isinstance(verdict, ConversationFaithfulnessVerdict)
        turns = {index for index, _ in assistant_turns(case.messages or [])}
        wrong = sorted({c.turn for c in verdict.claims if c.turn not in turns})
        if wrong:
            return f"claims name turns {wrong}, which are not assistant turns {sorted(turns)}"
        return None

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        assert isinstance(verdict, ConversationFaithfulnessVerdict)
        return scored_claims(verdict.claims)

    def choices(self, rubric: Rubric) -> list[Choice]:
        return [
            Choice("faithful", "every claim of the assistant rests on what it was given", 1.0),
            Choice("unfaithful", "at least one claim is contradicted or unsupported", 0.0),
            Choice("abstained", "the assistant made no claim", None),
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        return FaithfulnessStats()

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel:
        contexts = case.contexts if "contexts" in rubric.inputs else []
        return conversation_verdict(case.messages or [], contexts, budget=budget)

    def simulated_verdict(self, schema: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        messages = [Message.model_validate(m) for m in payload.get("messages") or []]
        contexts = [str(c) for c in payload.get("contexts") or []]
        return conversation_verdict(messages, contexts).model_dump(mode="json")

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        own = "claims" in fields or not fields
        return own and "messages" in payload and "goal_source" not in payload

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        return "faithful"

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "every claim of the assistant is supported by the tool results"
