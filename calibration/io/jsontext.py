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
from itertools import accumulate
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

# what the depth count keeps of the text: quotes, brackets, and the backslash with every
# letter JSON allows after it (so an escape stays an escape once the rest is deleted)
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}\\/bfnrtu')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
# the ValueError of int(), not of json, when a number is over sys.get_int_max_str_digits()
_DIGIT_LIMIT = re.compile(r"integer string conversion: value has (\d+) digits")
# a bracket's step in depth (byte codes)
_STEPS = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


class JsonLimitError(ValueError):
    """JSON text over a nesting or size limit: refused before it was parsed."""


def text_too_deep(text: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON ``text`` opens more than ``limit`` containers inside one another
    (counted on the text, outside strings; iterative, so nothing to exhaust).

    A few linear passes in C, whatever the text holds: every byte is deleted but quotes,
    brackets and escapes (the backslash and the letters JSON allows after it); escaped
    backslashes are dropped, then escaped quotes (in that order, so an escaped backslash
    before a quote leaves the quote ending its string); what is left between quotes was
    in a string (a tool result that is JSON text inside a string has many brackets, none
    of which count); when more than ``limit`` opening brackets remain outside, the depth
    is the largest running sum of their steps (+1 opening, -1 closing), left to right as
    the parser reads them. An unterminated string's brackets count as in it, as the
    parser reads them too; an escape JSON does not allow is read differently only after
    the point where the parser stops at it. The earlier scan looped in Python over every
    string and bracket: a quarter of `judge grade`'s CPU on agent trajectories
    (benchmarks/grade_profile.md)."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    # UTF-8 never uses an ASCII byte inside a multi-byte character: the bytes say it all
    kept = raw.translate(None, _NOT_STRUCTURE)
    if kept.count(b"[") + kept.count(b"{") <= limit:
        return False
    unescaped = kept.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(unescaped.split(b'"')[::2]).translate(None, _NOT_BRACKET)
    if outside.count(b"[") + outside.count(b"{") <= limit:
        return False
    return max(accumulate(map(_STEPS.__getitem__, outside))) > limit


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
