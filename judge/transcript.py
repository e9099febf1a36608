"""Conversations as cases: OpenAI chat messages, the tool calls an agent made, the calls it
was expected to make and the tools it had (DESIGN.md "Input cases").

A conversation case carries `messages` instead of (or beside) `question` and `answer`. The
models here validate one message at a time; `check_sequence` checks the order (a tool
result answers a call made before it). Arguments stay as the JSON text the model wrote:
`parse_arguments` reads them, and text that is not a JSON object (or nests past
MAX_ARGUMENT_DEPTH levels) is kept as text, so it can only ever mismatch, never crash a
grade or make a record no reader accepts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ROLES = ("system", "developer", "user", "assistant", "tool")
MAX_MESSAGES = 10_000  # messages one case may hold
MAX_CALLS = 10_000  # expected calls one case may list
# Arguments nested deeper than this stay the text they were: they can only mismatch, and a
# record that quotes them (a verdict's `missing`, `unexpected`, `invalid` lists, four levels
# down) stays inside the 64 levels every reader of records accepts (calibration.io.jsontext).
MAX_ARGUMENT_DEPTH = 32


class FunctionCall(BaseModel):
    """The function an assistant asked for: its name and its arguments as JSON text."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=256)
    arguments: str = "{}"

    @field_validator("arguments", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        """Arguments given as an object (as some logs store them) become JSON text."""
        if value is None:
            return "{}"
        if isinstance(value, dict | list):
            return json.dumps(value, ensure_ascii=False)
        return value


class ToolCall(BaseModel):
    """One entry of an assistant message's `tool_calls`."""

    model_config = ConfigDict(extra="ignore")

    id: str | None = Field(default=None, max_length=512)
    type: Literal["function"] = "function"
    function: FunctionCall

    @field_validator("type", mode="before")
    @classmethod
    def _function_by_default(cls, value: Any) -> Any:
        """`"type": null`, as some logs write it, is the only type there is."""
        return "function" if value is None else value


class Message(BaseModel):
    """One OpenAI chat message. Fields other than these (refusal, annotations, audio) are
    dropped: they are not what a grader reads."""

    model_config = ConfigDict(extra="ignore")

    role: str
    content: str | None = None
    tool_calls: list[ToolCall] | None = Field(default=None, max_length=MAX_CALLS)
    tool_call_id: str | None = Field(default=None, max_length=512)
    name: str | None = Field(default=None, max_length=256)

    @field_validator("role")
    @classmethod
    def _known_role(cls, value: str) -> str:
        if value not in ROLES:
            raise ValueError(f"unknown role {value[:40]!r} (known: {', '.join(ROLES)})")
        return value

    @field_validator("content", mode="before")
    @classmethod
    def _content_text(cls, value: Any) -> Any:
        """Content parts (`[{"type": "text", "text": ...}]`) joined into one text; a part
        that is not text (an image) is named in brackets."""
        if isinstance(value, list):
            return "\n".join(_part_text(part) for part in value)
        return value


def _part_text(part: Any) -> str:
    if isinstance(part, dict):
        if isinstance(part.get("text"), str):
            return str(part["text"])
        return f"[{part.get('type', 'part')}]"
    return str(part)


class ExpectedCall(BaseModel):
    """A call the agent should make: a name and the arguments as an object (JSON text that
    holds an object is read as one; any other text is kept and can only mismatch)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=256)
    arguments: dict[str, Any] | str = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _tool_call_shape(cls, value: Any) -> Any:
        """An expected call written as an OpenAI tool call (`{"id", "type", "function":
        {"name", "arguments"}}`, copied from a transcript) is read as its function."""
        if isinstance(value, dict) and isinstance(value.get("function"), dict):
            function = value["function"]
            return {k: function[k] for k in ("name", "arguments") if k in function}
        return value

    @field_validator("arguments", mode="before")
    @classmethod
    def _object(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, str):
            parsed = parse_arguments(value)
            return parsed if isinstance(parsed, dict) else value
        if isinstance(value, dict) and _nested_too_deep(value, MAX_ARGUMENT_DEPTH):
            return json.dumps(value, ensure_ascii=False)  # as deep text is kept (module doc)
        return value


def read_function_calls(messages: Any) -> Any:
    """Raw messages with OpenAI's older call shape (still documented) read as the current
    one: an assistant message's `function_call` ({name, arguments}) becomes the one entry
    of its `tool_calls`, with the id `function_call-N` (N counts those calls from 1), and a
    `function` message (its result, named by `name`) becomes a `tool` message answering
    the latest such call of that name not yet answered (else the latest one waiting). A
    `function` message with no call before it is then refused as any such tool message is."""
    if not isinstance(messages, list) or not any(_old_shape(m) for m in messages):
        return messages
    out: list[Any] = []
    waiting: list[tuple[Any, str]] = []  # (name, id) of the calls not yet answered
    made = 0
    for message in messages:
        if isinstance(message, dict) and isinstance(message.get("function_call"), dict):
            message = dict(message)
            function = message.pop("function_call")
            made += 1
            call_id = f"function_call-{made}"
            entry = {"id": call_id, "type": "function", "function": function}
            message["tool_calls"] = [*(message.get("tool_calls") or []), entry]
            waiting.append((function.get("name"), call_id))
        elif isinstance(message, dict) and message.get("role") == "function":
            message = {**message, "role": "tool"}
            named = [i for i, (name, _) in enumerate(waiting) if name == message.get("name")]
            at = named[-1] if named else len(waiting) - 1
            if at >= 0 and not message.get("tool_call_id"):
                message["tool_call_id"] = waiting.pop(at)[1]
        out.append(message)
    return out


def _old_shape(message: Any) -> bool:
    return isinstance(message, dict) and (
        isinstance(message.get("function_call"), dict) or message.get("role") == "function"
    )


def check_sequence(messages: Sequence[Message]) -> str | None:
    """Why the messages are not a conversation, or None. A tool message must answer a call
    an assistant made before it (`tool_call_id` naming that call's id)."""
    if not messages:
        return "no messages"
    called: set[str] = set()
    for number, message in enumerate(messages, 1):
        for call in message.tool_calls or []:
            if call.id:
                called.add(call.id)
        if message.tool_calls and message.role != "assistant":
            return f"message {number}: only an assistant message may carry tool_calls"
        if message.role != "tool":
            continue
        if not called:
            return f"message {number}: a tool message with no tool call before it"
        if not message.tool_call_id:
            return f"message {number}: a tool message needs a tool_call_id"
        if message.tool_call_id not in called:
            return (
                f"message {number}: tool_call_id {message.tool_call_id[:60]!r} names no call "
                "made before it"
            )
    return None


@dataclass(frozen=True)
class Call:
    """A tool call as graders compare it: the name and the arguments read from JSON (the
    text itself when it is not a JSON object)."""

    name: str
    arguments: Any

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


def parse_arguments(text: str) -> Any:
    """Arguments JSON text as an object; the text itself when it is not a JSON object (a
    model's malformed arguments are evidence, kept as written) or nests more than
    MAX_ARGUMENT_DEPTH levels."""
    try:
        value = _loads_bounded(text, max_depth=MAX_ARGUMENT_DEPTH)
    except (ValueError, RecursionError):
        return text
    return value if isinstance(value, dict) else text


def agent_calls(messages: Sequence[Message] | None) -> list[Call]:
    """Every tool call the assistant made, in order."""
    return [
        Call(call.function.name, parse_arguments(call.function.arguments))
        for message in messages or []
        for call in message.tool_calls or []
    ]


def expected_calls(expected: Sequence[ExpectedCall] | None) -> list[Call]:
    return [Call(call.name, call.arguments) for call in expected or []]


def canonical(value: Any) -> Any:
    """A JSON value in a form where equal JSON compares equal: key order ignored (dicts
    compare so already), numbers by value (5 == 5.0, booleans kept apart from 1 and 0)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer past a float's range compares exactly
            return ("n", value)
        return ("n", number) if math.isfinite(number) else ("n", repr(number))
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal as JSON (`canonical`)."""
    return bool(canonical(a) == canonical(b))


def assistant_turns(messages: Sequence[Message]) -> Iterator[tuple[int, Message]]:
    """(index, message) of each assistant message that says something (has content)."""
    for index, message in enumerate(messages):
        if message.role == "assistant" and (message.content or "").strip():
            yield index, message


def first_user_text(messages: Sequence[Message] | None) -> str | None:
    """The first user message's text: a conversation's goal when the case names none."""
    for message in messages or []:
        if message.role == "user" and (message.content or "").strip():
            return message.content
    return None


def _loads_bounded(text: str, *, max_depth: int) -> Any:
    """`calibration.io.jsontext.loads_bounded`, imported on use: `judge --help` and
    `judge rubrics` import nothing of calibration (tests/e2e/test_startup.py)."""
    from calibration.io.jsontext import loads_bounded

    return loads_bounded(text, max_depth=max_depth)


def _nested_too_deep(value: Any, limit: int) -> bool:
    """`calibration.io.jsontext.nested_too_deep`, imported on use (as above)."""
    from calibration.io.jsontext import nested_too_deep

    return bool(nested_too_deep(value, limit))
