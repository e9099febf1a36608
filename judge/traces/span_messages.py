"""Chat messages as spans record them, read into OpenAI's message shape (plain dicts:
`role`, `content`, `tool_calls`, `tool_call_id`, `name`), for judge.traces.conversation.

Two encodings are read:
- OpenInference flattens each message into attributes:
  `PATH.N.message.role`, `.content` (or `.contents.K.message_content.text`),
  `.tool_calls.M.tool_call.id`, `.tool_calls.M.tool_call.function.name` / `.arguments`,
  `.tool_call_id`, `.name`;
- the OpenTelemetry GenAI conventions keep a JSON array in one attribute:
  `[{"role", "parts": [{"type": "text", "content"}, {"type": "tool_call", "id", "name",
  "arguments"}, {"type": "tool_call_response", "id", "response"}]}]`; an array of OpenAI
  messages (`content`, `tool_calls`) is read too, as some emitters write that.

Nothing here validates: a message in a role no chat API knows is dropped, and the
conversation module makes the calls and results agree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from judge.traces.spans import loads_text

__all__ = ["read_messages", "read_system", "read_tools", "text_of"]

MAX_INDEX = 10_000  # messages, calls or tools one attribute list may hold
# other vocabularies' names for the chat roles (LangChain, Gemini, old OpenAI functions)
ROLE_ALIASES = {"human": "user", "ai": "assistant", "model": "assistant", "function": "tool"}
KNOWN_ROLES = ("system", "developer", "user", "assistant", "tool")

Message = dict[str, Any]


def read_messages(attributes: Mapping[str, Any], paths: Iterable[str]) -> list[Message]:
    """The messages at the first of `paths` that holds any (GenAI JSON or OpenInference's
    flattened form); empty when none does."""
    for path in paths:
        value = attributes.get(path)
        data = _json(value) if isinstance(value, str) else value
        if isinstance(data, list):
            found = [m for item in data if isinstance(item, dict) for m in _json_message(item)]
        else:
            found = _flat_messages(attributes, path)
        if found:
            return found
    return []


def read_system(attributes: Mapping[str, Any], paths: Iterable[str]) -> str | None:
    """GenAI's `gen_ai.system_instructions` (text parts, JSON, or plain text) as one text."""
    for path in paths:
        value = attributes.get(path)
        data = _json(value) if isinstance(value, str) else value
        if isinstance(data, list):
            text = _parts_text(data)
        else:
            text = value if isinstance(value, str) else None
        if text:
            return text
    return None


def read_tools(attributes: Mapping[str, Any], paths: Iterable[str]) -> list[dict[str, Any]]:
    """The tool definitions an LLM span was offered: a JSON array (GenAI
    `gen_ai.tool.definitions`) or OpenInference's `PATH.N.tool.json_schema` texts."""
    for path in paths:
        value = attributes.get(path)
        data = _json(value) if isinstance(value, str) else value
        if isinstance(data, list):
            tools = [t for t in data if isinstance(t, dict)]
        else:
            flat = _indexed(attributes, path, r"tool\.json_schema")
            tools = [t for _, t in sorted(flat.items()) if isinstance(t, dict)]
        if tools:
            return tools
    return []


def text_of(value: Any) -> str | None:
    """An attribute value as text: strings as they are, other JSON values as JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _json(value: str) -> Any:
    try:
        return loads_text(value)  # bounded, and no lone surrogate left in its strings
    except ValueError:
        return None


def _role(value: Any) -> str | None:
    role = ROLE_ALIASES.get(str(value).lower(), str(value).lower()) if value else None
    return role if role in KNOWN_ROLES else None


# ---- OpenInference: one message over several attributes ------------------------------


def _indexed(attributes: Mapping[str, Any], path: str, tail: str) -> dict[int, Any]:
    """`PATH.N.<tail>` values by N (gaps allowed; N below MAX_INDEX)."""
    pattern = re.compile(re.escape(path) + r"\.(\d{1,5})\." + tail + "$")
    out: dict[int, Any] = {}
    for key, value in attributes.items():
        found = pattern.match(key)
        if found and int(found.group(1)) < MAX_INDEX:
            parsed = _json(value) if isinstance(value, str) else value
            out[int(found.group(1))] = parsed
    return out


def _flat_messages(attributes: Mapping[str, Any], path: str) -> list[Message]:
    prefix = path + "."
    fields: dict[int, dict[str, Any]] = {}
    pattern = re.compile(re.escape(prefix) + r"(\d{1,5})\.message\.(.+)$")
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        found = pattern.match(key)
        if found and int(found.group(1)) < MAX_INDEX:
            fields.setdefault(int(found.group(1)), {})[found.group(2)] = value
    out = []
    for _, items in sorted(fields.items()):
        message = _flat_message(items)
        if message is not None:
            out.append(message)
    return out


def _flat_message(items: dict[str, Any]) -> Message | None:
    role = _role(items.get("role"))
    if role is None:
        return None
    content = items.get("content")
    if not isinstance(content, str):
        parts = [
            (int(k.split(".")[1]), v)
            for k, v in items.items()
            if re.fullmatch(r"contents\.\d{1,5}\.message_content\.text", k) and isinstance(v, str)
        ]
        content = "\n".join(text for _, text in sorted(parts)) if parts else None
    message: Message = {"role": role, "content": content}
    calls = _flat_calls(items)
    if calls:
        message["tool_calls"] = calls
    for key in ("tool_call_id", "name"):
        if isinstance(items.get(key), str) and items[key]:
            message[key] = items[key]
    return message


def _flat_calls(items: dict[str, Any]) -> list[dict[str, Any]]:
    calls: dict[int, dict[str, Any]] = {}
    pattern = re.compile(
        r"tool_calls\.(\d{1,5})\.tool_call\.(id|function\.name|function\.arguments)"
    )
    for key, value in items.items():
        found = pattern.fullmatch(key)
        if found and int(found.group(1)) < MAX_INDEX:
            calls.setdefault(int(found.group(1)), {})[found.group(2)] = value
    return [
        _call(c.get("id"), c.get("function.name"), c.get("function.arguments"))
        for _, c in sorted(calls.items())
        if c.get("function.name")
    ]


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    return {
        "id": str(call_id) if call_id else None,
        "type": "function",
        "function": {"name": str(name), "arguments": text_of(arguments) or "{}"},
    }


# ---- GenAI JSON (or OpenAI-shaped) messages --------------------------------------------


def _json_message(data: dict[str, Any]) -> list[Message]:
    """One JSON message; a message holding several tool responses becomes one tool message
    each (the OpenAI shape answers one call a message)."""
    role = _role(data.get("role"))
    parts = data.get("parts")
    if role is None:
        return []
    if not isinstance(parts, list):
        return [_openai_message(role, data)]
    responses = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_call_response"]
    if responses:
        return [
            {
                "role": "tool",
                "content": text_of(p.get("response", p.get("result"))) or "",
                "tool_call_id": str(p["id"]) if p.get("id") else None,
            }
            for p in responses
        ]
    calls = [
        _call(p.get("id"), p.get("name"), p.get("arguments"))
        for p in parts
        if isinstance(p, dict) and p.get("type") == "tool_call" and p.get("name")
    ]
    message: Message = {"role": role, "content": _parts_text(parts)}
    if calls:
        message["tool_calls"] = calls
    return [message]


def _parts_text(parts: list[Any]) -> str | None:
    texts = [
        str(p.get("content") if "content" in p else p.get("text", ""))
        for p in parts
        if isinstance(p, dict) and p.get("type", "text") == "text"
    ]
    return "\n".join(t for t in texts if t) or None


def _openai_message(role: str, data: dict[str, Any]) -> Message:
    content = data.get("content")
    if isinstance(content, list):
        content = _parts_text(content)
    message: Message = {"role": role, "content": text_of(content)}
    calls = []
    listed = data.get("tool_calls")
    for call in listed if isinstance(listed, list) else []:
        if isinstance(call, dict):
            function = call["function"] if isinstance(call.get("function"), dict) else call
            if function.get("name"):
                calls.append(_call(call.get("id"), function["name"], function.get("arguments")))
    if calls:
        message["tool_calls"] = calls
    for key in ("tool_call_id", "name"):
        if isinstance(data.get(key), str) and data[key]:
            message[key] = data[key]
    return message
