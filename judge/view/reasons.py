"""A verdict's reason in one line, for the records table: what the judge (or the computed
kind) found, from the verdict's own fields, whatever its kind.

- a rationale, as written;
- missing and unexpected calls (`trajectory`): `missing: refund({"order": "A"});
  unexpected: send_email(...)`, with the calls the rubric's rules left out counted;
- calls that broke their tool's schema (`tool_arguments`): `call 2 refund: 'amount' is a
  required property`, and the tools the agent called that it was not offered;
- else the error or the abstention's reason.
Each piece is cut at PIECE characters: the case page shows it whole.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["verdict_reason"]

PIECE = 160
CALLS_SHOWN = 3


def verdict_reason(record: dict[str, Any]) -> str | None:
    """The record's reason (module docstring), or None when it has none to give."""
    verdict = record.get("verdict")
    if not isinstance(verdict, dict):
        return _cut(record.get("error"))
    if isinstance(verdict.get("rationale"), str) and verdict["rationale"].strip():
        return _cut(verdict["rationale"])
    parts = [*_calls_part(verdict, "missing"), *_calls_part(verdict, "unexpected")]
    parts += _invalid_part(verdict)
    left = verdict.get("left_out")
    if isinstance(left, list) and left:
        parts.append(f"{len(left)} call(s) left out by the rubric's rules")
    notes = verdict.get("notes")
    if isinstance(notes, list):
        parts += [_cut(n) or "" for n in notes[:2] if isinstance(n, str)]
    if not parts and verdict.get("matched") is True:
        parts.append("every call as expected")
    return "; ".join(p for p in parts if p) or _cut(record.get("error"))


def _calls_part(verdict: dict[str, Any], field: str) -> list[str]:
    calls = verdict.get(field)
    if not isinstance(calls, list) or not calls:
        return []
    shown = ", ".join(_call(c) for c in calls[:CALLS_SHOWN] if isinstance(c, dict))
    more = f" and {len(calls) - CALLS_SHOWN} more" if len(calls) > CALLS_SHOWN else ""
    return [f"{field}: {shown}{more}"]


def _call(call: dict[str, Any]) -> str:
    arguments = call.get("arguments")
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return f"{call.get('name')}({_cut(text, 60)})"


def _invalid_part(verdict: dict[str, Any]) -> list[str]:
    out = []
    for item in (verdict.get("invalid") or [])[:CALLS_SHOWN]:
        if isinstance(item, dict):
            errors = "; ".join(str(e) for e in item.get("errors") or [])
            out.append(f"call {item.get('index')} {item.get('name')}: {_cut(errors)}")
    unknown = verdict.get("unknown_tools")
    if isinstance(unknown, list) and unknown:
        out.append("not offered: " + ", ".join(str(u) for u in unknown[:CALLS_SHOWN]))
    return out


def _cut(text: Any, limit: int = PIECE) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"
