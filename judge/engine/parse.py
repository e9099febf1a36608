"""Raw judge reply -> validated verdict. The judge's text is data to validate, never trusted."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from judge.errors import JudgeError

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class ParseError(JudgeError):
    """A reply that is not a valid verdict; the message says why, to send back for repair."""


def parse_verdict(text: str, model: type[BaseModel]) -> BaseModel:
    """Validate a reply against the verdict model.

    Accepts the JSON object alone, inside a Markdown code fence, or embedded in prose (the
    schema-in-prompt mode); anything else raises ParseError with a short reason.
    """
    data = _extract_json(text)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ParseError(_describe(exc)) from None


def _extract_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped:
        raise ParseError("empty reply")
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1)
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as first:
        start, end = stripped.find("{"), stripped.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(stripped[start : end + 1])
            except json.JSONDecodeError:
                pass
        raise ParseError(f"not valid JSON ({first.msg} at char {first.pos})") from None


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "reply"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - len(parts)
    return "schema violation: " + "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")
