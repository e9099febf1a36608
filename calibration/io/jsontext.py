"""Untrusted JSON, bounded before it is parsed: one rule for every reader.

Python's ``json`` parser recurses once per level of nesting, so a few kilobytes of
``[[[[...`` (a broken generation, a planted file, a hostile request body) raise
``RecursionError`` deep inside whatever was reading them. Every parse of text that came
from outside (a judge's reply, a reply body, a batch result file, a cache entry, a service
body, an upload, a row file) goes through :func:`loads_bounded`, which refuses text nested
more than :data:`MAX_DEPTH` levels, or longer than a caller's byte limit, *before* the
parser sees it, with a :class:`JsonLimitError` (a ``ValueError``, so a caller's existing
"not JSON" branch handles it). An integer longer than Python converts (4,300 digits by
default, ``sys.get_int_max_str_digits()``) is refused with one too, instead of the bare
``ValueError`` the parser raises mid-way.

The depth is counted on the text itself, without parsing: brackets outside strings, read
left to right as the parser would; a string's brackets (``"[[["``) do not count. Text with
no more opening brackets than the limit is let through without the scan.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "TOO_DEEP",
    "JsonLimitError",
    "loads_bounded",
    "nested_too_deep",
    "text_too_deep",
]

MAX_DEPTH = 64  # a case or a verdict is a few levels deep; deeper JSON only exhausts a parser
TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"

# a JSON string (escapes included; the unrolled form, linear on long strings) or a bracket
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_BYTE_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
# the ValueError of int(), not of json, when a number is over sys.get_int_max_str_digits()
_DIGIT_LIMIT = re.compile(r"integer string conversion: value has (\d+) digits")
_OPENING = frozenset(("[", "{", b"[", b"{"))


class JsonLimitError(ValueError):
    """JSON text over a nesting or size limit: refused before it was parsed."""


def text_too_deep(text: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON ``text`` opens more than ``limit`` containers inside one another
    (counted on the text, outside strings; iterative, so nothing to exhaust)."""
    tokens: Iterator[re.Match[Any]]
    if isinstance(text, bytes | bytearray):
        text = bytes(text)
        if text.count(b"[") + text.count(b"{") <= limit:
            return False
        tokens = _BYTE_TOKENS.finditer(text)
    else:
        if text.count("[") + text.count("{") <= limit:
            return False
        tokens = _TOKENS.finditer(text)
    depth = 0
    for token in tokens:
        found = token.group()
        if len(found) != 1:
            continue  # a string
        if found in _OPENING:
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def loads_bounded(
    text: str | bytes, *, max_depth: int = MAX_DEPTH, max_bytes: int | None = None
) -> Any:
    """``json.loads(text)`` for text from outside: :class:`JsonLimitError` when it is longer
    than ``max_bytes`` (characters, for a ``str``), nested deeper than ``max_depth`` or
    holds an integer over Python's digit limit (its message says which);
    ``json.JSONDecodeError`` (also a ``ValueError``) when it is not JSON."""
    if max_bytes is not None and len(text) > max_bytes:
        raise JsonLimitError(f"{len(text)} bytes of JSON, over the {max_bytes}-byte limit")
    if text_too_deep(text, max_depth):
        raise JsonLimitError(f"nested more than {max_depth} levels deep")
    try:
        return json.loads(text)
    except ValueError as exc:
        too_long = _DIGIT_LIMIT.search(str(exc))
        if too_long is None or isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
            raise
        # Python refuses to convert an integer this long (quadratic time): say so in one line
        limit = sys.get_int_max_str_digits()
        raise JsonLimitError(
            f"a number of {too_long.group(1)} digits, over Python's {limit}-digit limit"
        ) from None


def nested_too_deep(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether parsed containers nest more than ``limit`` deep (iterative: no recursion to
    exhaust). For data that did not come through :func:`loads_bounded` (a CSV cell's JSON
    already parsed, a YAML or TOML document)."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = (
            node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        )
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
