"""Tool spans as `tool` messages, and every tool message made to answer a call made before
it (judge.transcript.check_sequence), so that a conversation pulled from a trace validates.

Traces are uneven: a model call may record its tool calls without ids, a tool span may
carry a call id (`tool_call.id`, `gen_ai.tool.call.id`) or not, and a tool may run with no
call recorded at all. `answer_calls` matches each tool message to an open call: by id, else
the first open call of the same tool name; a call with no id takes the tool span's id, or
one made up deterministically (`call_<tool span id>`, then `call_<n>`), so the same trace
always gives the same case. A tool message with no call to answer gets one: added to the
assistant turn before it when nothing but tool results came since, else in an assistant
message of its own just before it, with the arguments the tool span recorded.
"""

from __future__ import annotations

import copy
from typing import Any

from judge.traces.mapping import TraceMapping
from judge.traces.span_messages import text_of
from judge.traces.spans import Span

__all__ = ["answer_calls", "tool_message"]

Message = dict[str, Any]
_ARGUMENTS = "_arguments"  # private keys, dropped once the calls are matched
_OWN_ID = "_own_id"


def tool_message(span: Span, mapping: TraceMapping) -> Message:
    """One tool span as a `tool` message: its name, call id, result, and the arguments it
    recorded (used only when no model call recorded the call)."""
    attributes = span.attributes
    name = _first_text(attributes, mapping.tool_name) or _name_from_span(span.name)
    return {
        "role": "tool",
        "name": name,
        "tool_call_id": _first_text(attributes, mapping.tool_call_id),
        "content": _first_text(attributes, mapping.tool_result) or "",
        _ARGUMENTS: _first_text(attributes, mapping.tool_arguments),
        _OWN_ID: f"call_{span.span_id}",
    }


def _first_text(attributes: dict[str, Any], paths: tuple[str, ...]) -> str | None:
    for path in paths:
        value = text_of(attributes.get(path))
        if value:
            return value
    return None


def _name_from_span(name: str) -> str:
    """GenAI names a tool span `execute_tool {tool}`."""
    return name.removeprefix("execute_tool ").strip() or "tool"


def answer_calls(messages: list[Message]) -> list[Message]:
    """The messages (copied) with every tool message answering a call made before it and
    every call carrying an id, unique in the conversation."""
    messages = copy.deepcopy(messages)
    ids = _Ids(messages)
    out: list[Message] = []
    open_calls = _OpenCalls()
    last_assistant: int | None = None
    tools_since = True  # only tool results since the last assistant turn (linear: no rescan)
    for message in messages:
        if message["role"] == "assistant":
            last_assistant, tools_since = len(out), True
            open_calls.extend(message.get("tool_calls") or [])
        elif message["role"] != "tool":
            tools_since = False
        if message["role"] == "tool":
            call = open_calls.take(message)
            if call is None:
                call = _made_up_call(message)
                last_assistant = _attach(out, last_assistant if tools_since else None, call)
                tools_since = True
            if not call.get("id"):
                call["id"] = ids.take(message.get("tool_call_id"), message.get(_OWN_ID))
            message["tool_call_id"] = call["id"]
            message["name"] = message.get("name") or call["function"]["name"]
        out.append(message)
    for message in out:
        for call in message.get("tool_calls") or []:
            if not call.get("id"):
                call["id"] = ids.take(None, None)
        message.pop(_ARGUMENTS, None)
        message.pop(_OWN_ID, None)
    return out


class _OpenCalls:
    """The calls made and not yet answered, in order; found through an index by id and by
    name, so a trace of thousands of calls is matched without rescanning them all."""

    def __init__(self) -> None:
        self.calls: dict[int, dict[str, Any]] = {}  # by a running number: insertion order
        self.by_id: dict[str, list[int]] = {}
        self.by_name: dict[str, list[int]] = {}
        self.count = 0

    def extend(self, calls: list[dict[str, Any]]) -> None:
        for call in calls:
            self.calls[self.count] = call
            if call.get("id"):
                self.by_id.setdefault(str(call["id"]), []).append(self.count)
            self.by_name.setdefault(str(call["function"]["name"]), []).append(self.count)
            self.count += 1

    def take(self, message: Message) -> dict[str, Any] | None:
        """The open call a tool message answers (removed): the one with its id, else the
        first of the same name whose id does not say otherwise."""
        wanted, name = message.get("tool_call_id"), message.get("name")
        for number in self.by_id.get(str(wanted), []) if wanted else []:
            if number in self.calls:
                return self.calls.pop(number)
        numbers = self.by_name.get(str(name), []) if name else list(self.calls)
        while numbers and numbers[0] not in self.calls:
            numbers.pop(0)  # answered already: never looked at again
        for number in numbers:
            call = self.calls.get(number)
            if call is None or (wanted and call.get("id")):
                continue  # answered, or both have ids and they differ
            return self.calls.pop(number)
        return None


def _made_up_call(message: Message) -> dict[str, Any]:
    return {
        "id": None,
        "type": "function",
        "function": {
            "name": message.get("name") or "tool",
            "arguments": message.get(_ARGUMENTS) or "{}",
        },
    }


def _attach(out: list[Message], last_assistant: int | None, call: dict[str, Any]) -> int:
    """Put a made-up call in the assistant turn `last_assistant` (given only when nothing
    but tool results came since), or in a new assistant message; that message's index."""
    if last_assistant is not None:
        turn = out[last_assistant]
        turn["tool_calls"] = [*(turn.get("tool_calls") or []), call]
        return last_assistant
    out.append({"role": "assistant", "content": None, "tool_calls": [call]})
    return len(out) - 1


class _Ids:
    """Call ids, each given once: a trace's own where it has one, else made up."""

    def __init__(self, messages: list[Message]) -> None:
        self.used = {
            str(call["id"])
            for message in messages
            for call in message.get("tool_calls") or []
            if call.get("id")
        }
        self.count = 0

    def take(self, wanted: str | None, own: str | None) -> str:
        for candidate in (wanted, own):
            if candidate and candidate not in self.used:
                self.used.add(candidate)
                return candidate
        while True:
            self.count += 1
            made = f"call_{self.count}"
            if made not in self.used:
                self.used.add(made)
                return made
