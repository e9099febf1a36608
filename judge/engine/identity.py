"""Who judged: the judge identity that the cache key and every record carry.

The identity is everything that decides a verdict apart from the case itself: for a model
judge the model requested, the endpoint it was asked at, temperature, top_p, seed, max
tokens and output mode; for a judge that needs no endpoint (the rules judge), its name.
Records carry `judge_id`, a short hash of it, so that a resumed run keeps only verdicts
from the same judge (`judge.engine.records.check_resumable`).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Protocol

_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})")  # -2024-08-06, -20241022, -0613


class HasIdentity(Protocol):
    name: str

    def cache_identity(self) -> dict[str, Any] | None: ...


def identity_of(backend: HasIdentity) -> dict[str, Any]:
    """The backend's cache identity, or its name when it has none (it is not cached)."""
    return backend.cache_identity() or {"judge": backend.name}


def judge_id(identity: dict[str, Any]) -> str:
    """16 hex digits of sha256 over the canonical JSON of an identity."""
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def describe_identity(identity: dict[str, Any]) -> str:
    """The identity in words, for messages."""
    if identity.get("judge") == "computed":
        return "values computed from the cases (no judge)"
    if "judge" in identity:
        return f"the {identity['judge']} judge"
    settings = ", ".join(
        f"{name} {identity[name]}"
        for name in ("temperature", "top_p", "seed", "max_tokens", "output_mode")
        if identity.get(name) is not None
    )
    return f"model {identity.get('model')!r} at {identity.get('endpoint')} ({settings})"


def describe_record_judge(judge: dict[str, Any]) -> str:
    """What a record says about its judge (`judge` field), in words."""
    model = judge.get("model")
    if model == "rules":
        return "the rules judge"
    if model == "computed":
        return "values computed from the cases (no judge)"
    settings = ", ".join(
        f"{name} {judge[name]}"
        for name in ("temperature", "seed", "max_tokens", "output_mode")
        if judge.get(name) is not None
    )
    return f"model {model!r} ({settings})"


_COMPARED = ("temperature", "top_p", "seed", "max_tokens")


def judge_differences(identity: dict[str, Any], judge: dict[str, Any]) -> list[str]:
    """What really differs between this run's judge (`identity`) and a record's (`judge`
    field), as `name theirs -> ours`. Not differences: an output mode `auto` (this run
    resolves it as the server allows; the record holds what it resolved to), a setting
    the record does not carry, and a model name the server spelled longer (`gpt-4o` asked,
    `gpt-4o-2024-08-06` answered)."""
    if "judge" in identity:  # the rules judge, or no judge: the whole judge differs
        return []
    found = [
        f"{name} {judge[name]} -> {identity.get(name)}"
        for name in _COMPARED
        if name in judge and judge[name] != identity.get(name)
    ]
    ours, theirs = identity.get("output_mode"), judge.get("output_mode")
    if ours not in (None, "auto") and theirs is not None and theirs != ours:
        found.append(f"output_mode {theirs} -> {ours}")
    model, served = str(identity.get("model") or ""), str(judge.get("model") or "")
    if model and served and not same_model(model, served):
        found.insert(0, f"model {served!r} -> {model!r}")
    return found


def same_model(asked: str, served: str) -> bool:
    """The same model, one name perhaps the other with a snapshot's date (`gpt-4o` and
    `gpt-4o-2024-08-06`, `claude-3-5-sonnet` and `...-20241022`, `gpt-4` and `gpt-4-0613`).
    A longer name that is not a date is another model: `gpt-4o-mini` is not `gpt-4o`."""
    short, long = sorted((asked, served), key=len)
    return long == short or (
        long.startswith(short) and _SNAPSHOT.fullmatch(long[len(short) :]) is not None
    )
