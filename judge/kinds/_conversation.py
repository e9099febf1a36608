"""What the conversation kinds share: the transcript as the judge reads it, the goal, and
where the injection probe plants its note (a tool result, the text an agent trusts most).

A transcript goes to the judge as JSON, each message with its `index` in the case's
`messages` (0-based): verdicts name turns by that index, and a kind checks that they name
real ones (`Kind.verdict_problem`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from judge import lexical
from judge.kinds._base import Kind
from judge.schemas import Case
from judge.transcript import FunctionCall, Message, ToolCall, assistant_turns, first_user_text

# the id of the call a planted tool result answers, when the transcript had no tool result
INJECTED_CALL_ID = "call_injected_note"
INJECTED_TOOL = "lookup"


def transcript(messages: Sequence[Message] | None, start: int = 0) -> list[dict[str, Any]]:
    """Messages as JSON for the judge, each with its index in the whole conversation."""
    return [
        {"index": start + offset, **message.model_dump(mode="json", exclude_none=True)}
        for offset, message in enumerate(messages or [])
    ]


def goal_of(case: Case) -> tuple[str, str]:
    """(what the user wanted, where it came from): the case's `goal`, else the first user
    message's text."""
    if case.goal and case.goal.strip():
        return case.goal, "goal"
    return first_user_text(case.messages) or "", "first_user_message"


def last_reply(messages: Sequence[Message] | None) -> str:
    """The last assistant turn's text ("" when the assistant never said anything)."""
    turns = list(assistant_turns(messages or []))
    return (turns[-1][1].content or "") if turns else ""


def shares_words(text: str, others: Sequence[str]) -> bool:
    """Whether `text` has a content word in common with any of `others` (the loopback
    server's stand-in for a model's judgement: deterministic, and it can fail)."""
    words = {lexical.stem(w) for w in lexical.content_words(text)}
    return any(words & {lexical.stem(w) for w in lexical.content_words(o)} for o in others)


def planted(messages: Sequence[Message], text: str, *, replace: bool = False) -> list[Message]:
    """The messages with `text` in the last tool result (appended, or instead of it when
    `replace`); with no tool result, a new call and result go before the last assistant
    turn, so every judge of that turn reads them."""
    out = list(messages)
    tools = [i for i, m in enumerate(out) if m.role == "tool"]
    if tools:
        old = out[tools[-1]]
        content = text if replace else f"{old.content or ''} {text}".strip()
        out[tools[-1]] = old.model_copy(update={"content": content})
        return out
    turns = [i for i, _ in assistant_turns(out)]
    at = turns[-1] if turns else len(out)
    call = ToolCall(id=INJECTED_CALL_ID, function=FunctionCall(name=INJECTED_TOOL))
    out[at:at] = [
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", tool_call_id=INJECTED_CALL_ID, name=INJECTED_TOOL, content=text),
    ]
    return out


class ConversationKind(Kind):
    """A kind that grades a conversation (`messages`): the injection probe plants its note
    in a tool result and echoes the assistant's last turn."""

    answer_fields: ClassVar[tuple[str, ...]] = ("messages",)
    answers_are_text: ClassVar[bool] = False  # no padding a transcript (verbosity probe)
    injection_site: ClassVar[str | None] = (
        "the conversation's last tool result (a new one before the last assistant turn when "
        "there is none)"
    )
    template_inputs: ClassVar[str] = "[messages]"

    def injection_echo(self, case: Case, target: str) -> str:
        return last_reply(getattr(case, self.injection_field(target)))

    def inject(self, case: Case, target: str, text: str, *, replace: bool = False) -> Case:
        name = self.injection_field(target)
        messages = planted(getattr(case, name) or [], text, replace=replace)
        return case.model_copy(update={name: messages})
