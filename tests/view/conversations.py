"""Conversation cases and their records for the viewer's and the label app's tests: an
agent's transcripts with tool calls, expected calls, a long tool result and a hostile one,
and records shaped as the `trajectory` kind writes them (missing and unexpected calls)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HOSTILE = '<img src=x onerror="window.__pwned=1">'
LONG_RESULT = "Row " + " | ".join(f"fare {i}: {100 + i} EUR" for i in range(120))


def call(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def conversations() -> list[dict[str, Any]]:
    """Four conversations: weather then booking (one expected call missing), a long fare
    table, a hostile tool result and arguments, and one with no tool call."""
    return [
        {
            "id": "trip-1",
            "goal": "Book a train to Lyon if it is sunny there on Friday.",
            "messages": [
                {"role": "system", "content": "You are a travel agent. Use the tools."},
                {"role": "user", "content": "Is it sunny in Lyon on Friday? If so book me."},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call("c1", "get_weather", {"city": "Lyon", "day": "Friday"})],
                },
                {
                    "role": "tool",
                    "tool_call_id": "c1",
                    "name": "get_weather",
                    "content": "Lyon, Friday: sunny, 24 degrees.",
                },
                {"role": "assistant", "content": "It will be sunny and 24 degrees in Lyon."},
            ],
            "expected_tool_calls": [
                {"name": "get_weather", "arguments": {"day": "Friday", "city": "Lyon"}},
                {"name": "book_train", "arguments": {"to": "Lyon", "day": "Friday"}},
            ],
        },
        {
            "id": "trip-2",
            "messages": [
                {"role": "user", "content": "Cheapest fare to Rome?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call("f1", "search_fares", {"to": "Rome"})],
                },
                {
                    "role": "tool",
                    "tool_call_id": "f1",
                    "name": "search_fares",
                    "content": LONG_RESULT,
                },
                {"role": "assistant", "content": "The cheapest fare is 100 EUR."},
            ],
            "expected_tool_calls": [{"name": "search_fares", "arguments": {"to": "Rome"}}],
        },
        {
            "id": "trip-3",
            "messages": [
                {"role": "user", "content": "Weather in Oslo?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        call("h1", "get_weather", '{"city": "' + HOSTILE.replace('"', "'") + '"')
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": "h1",
                    "name": "get_weather",
                    "content": HOSTILE + " <script>window.__pwned=2</script>",
                },
                {"role": "assistant", "content": "Done."},
            ],
            "expected_tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
        },
        {
            "id": "chat-4",
            "messages": [
                {"role": "user", "content": "Thanks!"},
                {"role": "assistant", "content": "You are welcome."},
            ],
        },
    ]


def record(case_id: str, score: float | None, verdict: dict[str, Any] | None) -> dict[str, Any]:
    status = "ok" if score is not None else "abstained"
    return {
        "id": case_id,
        "rubric": "trajectory",
        "rubric_version": 1,
        "rubric_sha256": "0" * 64,
        "judge": {"model": "rules", "output_mode": "rules"},
        "status": status,
        "verdict": verdict,
        "score": score,
        "label": None if score is None else ("match" if score == 1.0 else "mismatch"),
        "error": None if score is not None else "no expected_tool_calls: skipped",
        "raw": None,
        "cached": False,
        "usage": {"prompt_tokens": 0, "completion_tokens": 0},
        "latency_ms": 0.0,
    }


def records() -> list[dict[str, Any]]:
    """What a superset/exact trajectory rubric says of `conversations()`."""
    return [
        record(
            "trip-1",
            0.0,
            {
                "match": "superset",
                "arguments": "exact",
                "missing": [{"name": "book_train", "arguments": {"to": "Lyon", "day": "Friday"}}],
                "unexpected": [],
                "precision": 1.0,
                "recall": 0.5,
            },
        ),
        record(
            "trip-2",
            1.0,
            {
                "match": "superset",
                "arguments": "exact",
                "missing": [],
                "unexpected": [],
                "precision": 1.0,
                "recall": 1.0,
            },
        ),
        record(
            "trip-3",
            0.0,
            {
                "match": "superset",
                "arguments": "exact",
                "missing": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
                "unexpected": [
                    {
                        "name": "get_weather",
                        "arguments": '{"city": "' + HOSTILE.replace('"', "'") + '"',
                    }
                ],
                "precision": 0.0,
                "recall": 0.0,
            },
        ),
        record("chat-4", None, None),
    ]


def write_run(folder: Path) -> Path:
    """folder/cases.jsonl and folder/trajectory.jsonl (the records); returns the records."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = lambda rows: "".join(json.dumps(r) + "\n" for r in rows)  # noqa: E731
    (folder / "cases.jsonl").write_text(lines(conversations()))
    path = folder / "trajectory.jsonl"
    path.write_text(lines(records()))
    return path
