"""Canned conversations for the conversation-judge tests (task_completion, the turn
kinds, conversation_faithfulness, conversation_pairwise)."""

from __future__ import annotations

import copy
from typing import Any

SYSTEM = "You are Acme's polite support agent for orders and refunds. Never give legal advice."
ORDER_RESULT = '{"order": "A-17", "status": "shipped", "carrier": "DHL", "days": 3}'


def conversation(id: str = "conv-1", **fields: Any) -> dict[str, Any]:
    """An agent that looks up an order (one tool call) and answers from the result."""
    base: dict[str, Any] = {
        "id": id,
        "goal": "Find out where order A-17 is",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "Where is my order A-17?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_order", "arguments": '{"order": "A-17"}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "name": "get_order",
                "content": ORDER_RESULT,
            },
            {"role": "assistant", "content": "Order A-17 has shipped with DHL."},
            {"role": "user", "content": "When will it arrive?"},
            {"role": "assistant", "content": "The order arrives in 3 days."},
        ],
    }
    base.update(fields)
    return base


def with_tool_result(row: dict[str, Any], content: str) -> dict[str, Any]:
    """The same conversation with another tool result."""
    out = copy.deepcopy(row)
    for message in out["messages"]:
        if message["role"] == "tool":
            message["content"] = content
    return out


def with_reply(row: dict[str, Any], index: int, content: str) -> dict[str, Any]:
    """The same conversation with message `index` saying `content`."""
    out = copy.deepcopy(row)
    out["messages"][index]["content"] = content
    return out


def conversation_pair(id: str = "pair-1") -> dict[str, Any]:
    """Two conversations for the same goal: A answers from its tool result, B invents."""
    a = conversation()["messages"]
    b = with_reply(conversation(), 6, "The order arrives in 9 days by boat.")["messages"]
    return {"id": id, "goal": "Find out where order A-17 is", "messages_a": a, "messages_b": b}
