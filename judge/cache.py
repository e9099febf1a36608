"""Verdict cache on disk (diskcache), keyed by exactly what changes the judge's output.

Key = sha256 of canonical JSON of: rubric id, version and file hash; the judge's model,
temperature, top_p, seed, max tokens and output mode; and the case content (question,
contexts, answer; for pairwise both answers in the order shown). Retries, timeouts,
concurrency and the API key are not in it. Only `ok` and `abstained` outcomes are stored.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import diskcache

from judge.rubric import Rubric
from judge.schemas import Case


def cache_key(rubric: Rubric, identity: dict[str, Any], case: Case) -> str:
    """sha256 of canonical JSON of what decides the verdict, and nothing else."""
    content = rubric.behaviour.cache_content(rubric, case)
    payload = {
        "rubric": [rubric.id, rubric.version, rubric.sha256],
        "judge": identity,
        "case": content,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class VerdictCache:
    """A folder private to the user (mode 0700) holding one entry per cache key."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)
        self.directory = directory
        self._store = diskcache.Cache(str(directory))

    def get(self, key: str) -> dict[str, Any] | None:
        value = self._store.get(key)
        return value if isinstance(value, dict) else None

    def set(self, key: str, value: dict[str, Any]) -> None:
        self._store.set(key, value)

    def __len__(self) -> int:
        return len(self._store)

    def close(self) -> None:
        self._store.close()
