"""Raw judge reply -> validated verdict. The judge's text is data to validate, never trusted."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from calibration.io.jsontext import JsonLimitError, loads_bounded
from judge.errors import JudgeError

# A parse_error keeps the reply's text for the record, up to this many characters: enough to
# see what went wrong, not a whole megabyte of `[[[[` in every record and summary.
MAX_RAW_CHARS = 16_384
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


def kept_raw(text: str | None) -> str | None:
    """The reply text a parse_error record keeps: the first `MAX_RAW_CHARS` characters, and
    a note of how long it was when it was cut."""
    if text is None or len(text) <= MAX_RAW_CHARS:
        return text
    return text[:MAX_RAW_CHARS] + f"... [cut: {len(text)} characters in all]"


def _extract_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped:
        raise ParseError("empty reply")
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1)
    try:
        return loads_bounded(stripped)  # depth checked before parsing: a reply is untrusted
    except JsonLimitError as exc:
        raise ParseError(f"not a verdict: JSON {exc}") from None
    except json.JSONDecodeError as first:
        start, end = stripped.find("{"), stripped.rfind("}")
        if 0 <= start < end:
            try:
                return loads_bounded(stripped[start : end + 1])
            except JsonLimitError as exc:
                raise ParseError(f"not a verdict: JSON {exc}") from None
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
