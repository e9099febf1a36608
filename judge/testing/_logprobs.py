"""The test server's token log-probabilities (`"logprobs": true` with `top_logprobs`), in
OpenAI's shape: `choices[0].logprobs.content`, one entry per token, each
`{"token", "logprob", "bytes", "top_logprobs": [...]}`.

The reply is cut into tokens (a run of letters, one digit, a run of spaces, or one other
character: `not_enough_information` is five tokens, `10` two), so the tokens spell the
reply exactly. Each value of the verdict that the request's schema limits to a set
(`enum`, `const`, a boolean) gets alternatives at the token where the values part: the
token written has a probability drawn from sha256 of the case and the value's place,
between 0.5 and 0.99 (so different cases get different confidences, and the written value
is always the most likely one); the other values share 80% of the rest, the first the
most, and a token that begins no value (a space) the last 20%. Every other token is sure
(probability 1). The same case gets the same probabilities on every request. A request in
JSON mode (`json_object`) carries no schema: no value has alternatives, every token is sure,
and the confidence read from them is 1.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from typing import Any

from judge.engine.confidence import value_spans

_TOKEN = re.compile(r"[A-Za-z]+|[0-9]|\s+|[^A-Za-z0-9\s]")
FILLER = " "  # an alternative that begins no value: normalised away by the client
Path = tuple[str | int, ...]


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text)


def reply_logprobs(
    content: str, verdict: Any, schema: dict[str, Any], case_text: str, top: int
) -> dict[str, Any]:
    """The `logprobs` of a reply whose `content` writes `verdict` (module docstring)."""
    pieces = tokenize(content)
    entries = [_entry(piece, 0.0, []) for piece in pieces]
    sites = list(choice_sites(verdict, schema, ()))
    spans = value_spans(content, [path for path, _, _ in sites]) if sites else None
    if spans is not None:
        starts = _starts(pieces)
        for path, written, allowed in sites:
            index, lead = _deciding_token(pieces, starts, spans[path][0], json.dumps(written))
            if index is not None:
                p = _drawn(case_text, path)
                alternatives = _alternatives(written, allowed, lead, pieces[index], p)
                entries[index] = _entry(pieces[index], math.log(p), alternatives[: max(0, top)])
    return {"content": entries, "refusal": None}


def choice_sites(
    value: Any, schema: dict[str, Any], path: Path, root: dict[str, Any] | None = None
) -> Iterator[tuple[Path, Any, list[Any]]]:
    """(path, value written, values allowed) for each value of `value` that `schema` limits
    to a set, following `$ref`s into the root's `$defs`."""
    root = schema if root is None else root
    schema = _resolved(schema, root)
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key, item in value.items():
            if isinstance(properties.get(key), dict):
                yield from choice_sites(item, properties[key], (*path, key), root)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                yield from choice_sites(item, items, (*path, i), root)
    else:
        allowed = _allowed(schema)
        if len(allowed) > 1 and value in allowed:
            yield path, value, allowed


def _resolved(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        found = (root.get("$defs") or {}).get(ref.rsplit("/", 1)[1])
        return found if isinstance(found, dict) else {}
    return schema


def _allowed(schema: dict[str, Any]) -> list[Any]:
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    if schema.get("type") == "boolean":
        return [True, False]
    return []


def _starts(pieces: list[str]) -> list[int]:
    out, at = [], 0
    for piece in pieces:
        out.append(at)
        at += len(piece)
    return out


def _deciding_token(
    pieces: list[str], starts: list[int], start: int, written: str
) -> tuple[int | None, str]:
    """The token where the written value's text begins to differ from the JSON around it
    (its first letters or digit, after an opening quote), and what the written value's
    JSON has before that token (the quote)."""
    lead = '"' if written.startswith('"') else ""
    target = start + len(lead)
    for index, at in enumerate(starts):
        if at == target:
            return index, lead
    return None, lead


def _drawn(case_text: str, path: Path) -> float:
    """The written token's probability: 0.5 to 0.99, from sha256 of the case and path."""
    digest = hashlib.sha256(f"{case_text}\x00{json.dumps(path)}".encode()).digest()
    return 0.5 + 0.49 * int.from_bytes(digest[:8], "big") / 2**64


def _alternatives(
    written: Any, allowed: list[Any], lead: str, token: str, p: float
) -> list[dict[str, Any]]:
    """The top alternatives at the deciding token: the token written first, the other
    values' first tokens (80% of the rest, split 1 : 1/2 : 1/3 ...), then a filler."""
    firsts: list[str] = []
    for value in allowed:
        opening = tokenize(json.dumps(value)[len(lead) :])[:1]
        if value != written and opening and opening[0] != token and opening[0] not in firsts:
            firsts.append(opening[0])
    rest = 1.0 - p
    weights = [1.0 / (k + 1) for k in range(len(firsts))]
    share = 0.8 * rest if firsts else 0.0
    out = [_entry(token, math.log(p), None)]
    for first, weight in zip(firsts, weights, strict=True):
        out.append(_entry(first, math.log(share * weight / sum(weights)), None))
    out.append(_entry(FILLER, math.log(rest - share), None))
    return out


def _entry(token: str, logprob: float, top: list[dict[str, Any]] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "token": token,
        "logprob": round(logprob, 6),
        "bytes": list(token.encode("utf-8")),
    }
    if top is not None:
        entry["top_logprobs"] = top or [
            {"token": token, "logprob": entry["logprob"], "bytes": entry["bytes"]}
        ]
    return entry
