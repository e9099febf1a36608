"""Verdict cache on disk (diskcache), keyed by exactly what changes the judge's output.

Key = sha256 of canonical JSON of: rubric id, version and file hash; the judge's model,
endpoint (scheme, host, port, path: a model name means different weights on different
servers), temperature, top_p, seed, max tokens and output mode; and the case content (question,
contexts, answer; for pairwise both answers in the order shown). Retries, timeouts,
concurrency and the API key are not in it. Only `ok` and `abstained` outcomes are stored.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import sqlite3
from pathlib import Path
from typing import Any

import diskcache

from judge.errors import UsageError
from judge.rubric import Rubric
from judge.schemas import Case

log = logging.getLogger(__name__)


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
    """A folder holding one entry per cache key. A folder it creates is private to the
    user (mode 0700); an existing folder is used as it is, its mode never changed (it may
    be a shared folder the user chose, and is not ours to chmod)."""

    def __init__(self, directory: Path) -> None:
        try:
            directory.mkdir(parents=True, mode=0o700)
        except FileExistsError:
            if not directory.is_dir():
                raise UsageError(f"cache folder {directory} exists and is not a folder") from None
            # not ours: leave its mode alone
        except OSError as exc:
            raise UsageError(
                f"cannot create the cache folder {directory}: {exc.strerror}"
            ) from None
        else:
            os.chmod(directory, 0o700)  # mkdir's mode is filtered by the umask
        self.directory = directory
        try:
            self._store = diskcache.Cache(str(directory))
        except (OSError, sqlite3.Error) as exc:
            raise UsageError(f"cannot use the cache folder {directory}: {exc}") from None

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry, or None: a miss, and so is an entry that cannot be read back (a
        large value's file truncated or damaged), which is logged and graded again."""
        try:
            value = self._store.get(key)
        except (OSError, EOFError, ValueError, pickle.UnpicklingError, sqlite3.Error) as exc:
            log.warning("cache entry %s in %s is unreadable (%s): a miss", key, self.directory, exc)
            return None
        return value if isinstance(value, dict) else None

    def set(self, key: str, value: dict[str, Any]) -> None:
        self._store.set(key, value)

    def __len__(self) -> int:
        return len(self._store)

    def close(self) -> None:
        self._store.close()
