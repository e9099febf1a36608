"""Token log-probabilities in a chat reply (`logprobs` / `top_logprobs`), read into plain
data: what `judge.engine.confidence` turns into a verdict's confidence.

OpenAI, vLLM and llama.cpp's server answer `"logprobs": true, "top_logprobs": k` with
`choices[0].logprobs.content`: one entry per generated token, `{"token", "logprob",
"bytes"?, "top_logprobs": [{"token", "logprob", "bytes"?}, ...]}`. A streamed reply
carries the same entries spread over its chunks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token (its bytes), its log-probability and its top alternatives."""

    text: bytes
    logprob: float
    top: tuple[tuple[bytes, float], ...] = ()


def read_logprobs(choice: Mapping[str, Any]) -> tuple[TokenLogprob, ...] | None:
    """The tokens of a reply's first choice with their log-probabilities; None when the
    reply carries none (not asked, or a server that does not give them) or they are not
    in the shape above."""
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if not isinstance(content, list) or not content:
        return None
    tokens = []
    for entry in content:
        token = _entry(entry)
        if token is None:
            return None
        top = []
        for alternative in entry.get("top_logprobs") or ():
            read = _entry(alternative)
            if read is not None:
                top.append((read.text, read.logprob))
        tokens.append(TokenLogprob(token.text, token.logprob, tuple(top)))
    return tuple(tokens)


def _entry(entry: Any) -> TokenLogprob | None:
    """A `{"token", "logprob", "bytes"?}` entry: its bytes (the `bytes` list where given:
    a character split over tokens keeps its own bytes there) and log-probability."""
    if not isinstance(entry, Mapping):
        return None
    token, logprob, raw = entry.get("token"), entry.get("logprob"), entry.get("bytes")
    if not isinstance(token, str) or isinstance(logprob, bool):
        return None
    if not isinstance(logprob, int | float):
        return None
    if isinstance(raw, list) and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
        text = bytes(raw)
    else:
        text = token.encode("utf-8")
    return TokenLogprob(text, float(logprob))
