"""Who judged: the judge identity that the cache key and every record carry.

The identity is everything that decides a verdict apart from the case itself: for a model
judge the model requested, the endpoint it was asked at, temperature, top_p, seed, max
tokens and output mode; for a judge that needs no endpoint (the rules judge), its name.
Records carry `judge_id`, a short hash of it, so that a resumed run keeps only verdicts
from the same judge (`judge.records.check_resumable`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol
from urllib.parse import urlsplit

# What the openai SDK talks to when no base URL is given.
OPENAI_BASE_URL = "https://api.openai.com/v1"
_DEFAULT_PORTS = {"http": 80, "https": 443}


class HasIdentity(Protocol):
    name: str

    def cache_identity(self) -> dict[str, Any] | None: ...


def endpoint_of(base_url: str | None) -> str:
    """`scheme://host:port/path` of an endpoint: case-folded, default port made explicit,
    no trailing slash; never the user name, password, query or fragment.

    >>> endpoint_of("HTTPS://user:pw@API.openai.com/v1/")
    'https://api.openai.com:443/v1'
    """
    parts = urlsplit(base_url or OPENAI_BASE_URL)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:  # a port that is not a number: keep the text, the SDK will refuse it
        port = None
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    where = f"{host}:{port}" if port else host
    return f"{scheme}://{where}{parts.path.rstrip('/')}"


def identity_of(backend: HasIdentity) -> dict[str, Any]:
    """The backend's cache identity, or its name when it has none (it is not cached)."""
    return backend.cache_identity() or {"judge": backend.name}


def judge_id(identity: dict[str, Any]) -> str:
    """16 hex digits of sha256 over the canonical JSON of an identity."""
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def describe_identity(identity: dict[str, Any]) -> str:
    """The identity in words, for messages."""
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
    settings = ", ".join(
        f"{name} {judge[name]}"
        for name in ("temperature", "seed", "max_tokens", "output_mode")
        if judge.get(name) is not None
    )
    return f"model {model!r} ({settings})"
