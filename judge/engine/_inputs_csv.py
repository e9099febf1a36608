"""CSV answer sets: a row's text cells as case values, with list cells read safely (JSON
arrays, Python list literals as pandas writes them, or `a|b|c` for slices and ids;
`metadata` and `relevance` cells hold a JSON object; a conversation's `messages`,
`expected_tool_calls` and `tools` cells hold JSON arrays). The rows themselves come from
`calibration.io.rows`; used by `judge.engine.inputs`."""

from __future__ import annotations

import ast
import json
from typing import Any

from judge.schemas import CASE_ALIASES

_ID_FIELDS = ("retrieved_ids", "relevant_ids")
_LIST_FIELDS = ("contexts", "slices", *_ID_FIELDS)
_SPLIT_FIELDS = ("slices", *_ID_FIELDS)  # `a|b|c` is a list of names
_OBJECT_FIELDS = ("metadata", "relevance")
# a conversation's cells hold JSON (an array of messages, of calls, of tool schemas)
_JSON_FIELDS = ("messages", "messages_a", "messages_b", "expected_tool_calls", "tools")


def case_cells(row: dict[str, str]) -> dict[str, Any]:
    """CSV cells are text: list fields may hold a JSON array (or one plain text / a|b|c),
    metadata a JSON object; an empty cell is no value (an empty id stays, to be refused)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = CASE_ALIASES.get(key, key)
        if name in _LIST_FIELDS:
            if name in _ID_FIELDS and not value.strip():
                continue  # the case does not say; `[]` is "retrieved nothing"
            out[key] = _cell_list(value, split=name in _SPLIT_FIELDS)
        elif name in _JSON_FIELDS:
            if value.strip():
                out[key] = _cell_object(value)
        elif name in _OBJECT_FIELDS:
            if name == "relevance" and not value.strip():
                continue
            out[key] = _cell_object(value)
        elif value == "" and name not in ("id",):
            continue
        else:
            out[key] = value
    return out


def _cell_object(value: str) -> Any:
    if not value.strip():
        return {}
    try:
        from calibration.io.jsontext import loads_bounded  # not for --help or rubrics

        return loads_bounded(value)
    except ValueError:  # not JSON, or nested too deeply
        return value  # validation then says metadata must be an object


def _cell_list(value: str, *, split: bool) -> list[str]:
    """A list cell: a JSON array, a Python list literal (as pandas writes a Ragas
    DataFrame's `retrieved_contexts`), else one text (or `a|b|c` for slices)."""
    text = value.strip()
    if not text:
        return []
    if text.startswith("["):
        parsed = _list_literal(text)
        if parsed is not None:
            return parsed
    if split:
        return [part.strip() for part in text.replace(";", "|").split("|") if part.strip()]
    return [value]


def _list_literal(text: str) -> list[str] | None:
    """A JSON array or a Python list literal of plain values, read without evaluating code
    (`ast.literal_eval` accepts literals only); None when the text is neither."""
    for parse in (json.loads, ast.literal_eval):
        try:
            parsed = parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(parsed, list | tuple):
            return [str(v) for v in parsed]
    return None
