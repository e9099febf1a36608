"""Verdict cache on disk (diskcache), keyed by exactly what changes the judge's output.

Key = sha256 of canonical JSON of: rubric id, version and file hash; the judge's model,
endpoint (scheme, host, port, path: a model name means different weights on different
servers), temperature, top_p, seed, max tokens and output mode (and `--samples` K when above 1:
K replies vote on another verdict); and the case content (question,
contexts, answer; for pairwise both answers in the order shown). Retries, timeouts,
concurrency and the API key are not in it, nor whether logprobs are asked (they change no
verdict; an entry keeps the record's confidence, so a hit equals the graded record). Only
`ok` and `abstained` outcomes are stored.

Data, never objects: an entry is JSON bytes, `{"format": "llm-judge-verdict/2", "record":
"<the record's JSON>", "mac": "<hex>"}`, kept in the database row itself (`DataDisk`). diskcache's default `Disk` unpickles
what it reads, so anyone who could write a shared cache folder could run code as the next
user; `DataDisk` never unpickles and never opens a file a row names. A row that is not ours
in that exact shape (a pickle, an entry of an older version of this cache, text, another
format) is a miss: the case is graded again and its entry rewritten; a row of bytes that
are not JSON (damaged, cut short) is a miss that is logged. A database that SQLite
cannot read once open is a miss too, with one warning (a cache must never fail a run).

Authenticated: `mac` is HMAC-SHA256, under a secret kept outside the folder
(`judge.engine.cache_secret`: `$JUDGE_CACHE_KEY`, else the user's own key file), of the
entry's cache key and the record's exact bytes. Anyone who can write a shared folder can
write rows, but not a row this user's secret vouches for: an entry whose MAC does not check
(a rewritten score, a planted verdict, an entry moved to another case's key, one written
under another secret or by a version before entries were signed) is a miss, counted in
`rejected` and logged, and the case is graded again.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import re
import sqlite3
from pathlib import Path
from types import TracebackType
from typing import Any

import diskcache
from diskcache.core import MODE_RAW

from calibration.io.jsontext import JsonLimitError, loads_bounded
from judge.engine.cache_secret import CACHE_KEY_ENV, load_cache_secret
from judge.errors import UsageError
from judge.rubric import Rubric
from judge.schemas import Case

log = logging.getLogger(__name__)

FORMAT = "llm-judge-verdict/2"
_UNSIGNED = "llm-judge-verdict/1"  # before entries were signed: cannot be vouched for
_MAC_CONTEXT = b"llm-judge verdict cache entry\0"
_VALUE_FILE = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{28}\.val")


def cache_key(rubric: Rubric, identity: dict[str, Any], case: Case) -> str:
    """sha256 of canonical JSON of what decides the verdict, and nothing else."""
    content = rubric.behaviour.cache_content(rubric, case)
    payload = {
        "rubric": [rubric.id, rubric.version, rubric.sha256],
        "judge": identity,
        "case": content,
    }
    return _sha256_canonical(payload)


def inputs_sha256(rubric: Rubric, case: Case) -> str:
    """sha256 of canonical JSON of what the judge is shown of `case` (the kind's
    `cache_content`, as in the cache key), written in each record as `inputs_sha256`: a
    rerun keeps a record only while its case still hashes the same (judge.engine.resume)."""
    return _sha256_canonical(rubric.behaviour.cache_content(rubric, case))


def _sha256_canonical(payload: Any) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class DataDisk(diskcache.Disk):
    """A diskcache `Disk` for bytes only, stored in the row: it never unpickles a key or a
    value and never reads a file a row names. What it cannot return as bytes is `None`
    (the cache then sees a miss)."""

    def __init__(self, directory: str, min_file_size: int = 0, **_settings: Any) -> None:
        # the folder's Settings table passes its own disk_* values (pickle_protocol, ...)
        super().__init__(directory, min_file_size=min_file_size)

    def get(self, key: Any, raw: bool) -> Any:
        # a non-raw key is a pickle: hand back its bytes, never the object
        return bytes(key) if isinstance(key, bytes | memoryview) else key

    def store(
        self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN
    ) -> tuple[int, int, None, sqlite3.Binary]:
        if read or not isinstance(value, bytes):
            raise TypeError("the verdict cache stores bytes only")
        return 0, MODE_RAW, None, sqlite3.Binary(value)

    def remove(self, file_path: str) -> None:
        # a row names the file to delete when it is replaced: only a name diskcache itself
        # makes (ab/cd/<hex>.val, an older version's large entry) inside this folder
        if _VALUE_FILE.fullmatch(str(file_path)):
            super().remove(file_path)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> bytes | None:
        if mode != MODE_RAW or filename is not None or not isinstance(value, bytes | memoryview):
            return None  # a pickle, a file, text or a number: not an entry of ours
        return bytes(value)


# diskcache's SQLite files; SQLite gives a WAL and its index the database file's mode
_DB_FILES = ("cache.db", "cache.db-wal", "cache.db-shm")


def _private(directory: Path, created: list[str]) -> None:
    """The database files this cache just created made 0600, as its folder is 0700 (they
    hold case text; SQLite created them through the umask, 0644 on most machines). Files
    that were there before are the folder owner's business, left as they are."""
    for name in created:
        with contextlib.suppress(FileNotFoundError):
            os.chmod(directory / name, 0o600)


class UnauthenticEntry(Exception):
    """An entry in our format whose MAC does not check under this cache's secret."""


def entry_mac(secret: bytes, key: str, record: bytes) -> str:
    """HMAC-SHA256 of the cache key and the record's bytes (the key bound in, so a genuine
    entry moved to another case's key does not check either)."""
    message = _MAC_CONTEXT + key.encode("utf-8") + b"\0" + record
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def encode_entry(key: str, record: dict[str, Any], secret: bytes) -> bytes:
    body = json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    mac = entry_mac(secret, key, body.encode("utf-8"))
    entry = {"format": FORMAT, "record": body, "mac": mac}
    return json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode()


def decode_entry(data: bytes | None, key: str, secret: bytes) -> dict[str, Any] | None:
    """The record an entry holds, or None for anything that is not in our format at all
    (a pickle, text). An entry in our format that this secret does not vouch for raises
    UnauthenticEntry; bytes that are not JSON (a damaged or cut row) raise ValueError."""
    if data is None:
        return None
    try:
        entry = loads_bounded(data)
    except JsonLimitError:
        return None
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError alike
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(entry, dict) or entry.get("format") not in (FORMAT, _UNSIGNED):
        return None
    body, mac = entry.get("record"), entry.get("mac")
    if not isinstance(body, str) or not isinstance(mac, str):
        raise UnauthenticEntry("unsigned")
    if not hmac.compare_digest(mac, entry_mac(secret, key, body.encode("utf-8"))):
        raise UnauthenticEntry("the MAC does not check")
    try:
        record = loads_bounded(body)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


class VerdictCache:
    """A folder holding one entry per cache key. A folder it creates is private to the
    user (mode 0700); an existing folder is used as it is, its mode never changed (it may
    be a shared folder the user chose, and is not ours to chmod). A database that cannot be
    opened is a UsageError naming the folder; one that fails later is a miss (`get`) or
    not written (`set`), with one warning for the life of the cache."""

    def __init__(self, directory: Path, *, secret: bytes | None = None) -> None:
        self._init_trust(secret)
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
        self._warned = False
        new = [name for name in _DB_FILES if not (directory / name).exists()]
        try:
            self._store = diskcache.Cache(str(directory), disk=DataDisk)
        except (OSError, sqlite3.Error, diskcache.Timeout, ValueError, KeyError) as exc:
            raise UsageError(
                f"cannot use the cache folder {directory}: {exc} (move it aside, or pass "
                "--no-cache)"
            ) from None
        _private(directory, new)

    def _init_trust(self, secret: bytes | None) -> None:
        self._secret = secret  # None: read when first needed (`load_cache_secret`)
        self.rejected = 0  # entries whose MAC did not check: misses, graded again

    @property
    def secret(self) -> bytes:
        if self._secret is None:
            self._secret = load_cache_secret()
        return self._secret

    def get(self, key: str) -> dict[str, Any] | None:
        """The record stored under `key`; None when there is none, it is not ours, or this
        user's secret does not vouch for it (counted in `rejected`). A row of our bytes that
        is not JSON (damaged or cut short) is a miss too, and logged."""
        data = self._read(key)
        if data is None:
            return None
        try:
            return decode_entry(data, key, self.secret)
        except UnauthenticEntry as exc:
            self._reject(key, str(exc))
        except ValueError as exc:
            log.warning("cache entry %s in %s is unreadable (%s): a miss", key, self.directory, exc)
        return None

    def set(self, key: str, value: dict[str, Any]) -> None:
        self._write(key, encode_entry(key, value, self.secret))

    def _read(self, key: str) -> bytes | None:
        try:
            data = self._store.get(key)
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            self._warn(exc)
            return None
        return data if isinstance(data, bytes) else None

    def _write(self, key: str, entry: bytes) -> None:
        try:
            self._store.set(key, entry)
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            self._warn(exc)

    def _reject(self, key: str, why: str) -> None:
        self.rejected += 1
        log.debug("cache entry %s in %s is not authentic (%s): a miss", key, self.directory, why)
        if self.rejected == 1:
            log.warning(
                "the verdict cache %s holds entries this user's cache key does not vouch for "
                "(forged, or written under another key or by an older version): each is a "
                "miss and graded again. To share a cache, give everyone the same $%s",
                self.directory,
                CACHE_KEY_ENV,
            )

    def report_rejected(self) -> None:
        """One log line with how many entries were refused, when any were."""
        if self.rejected:
            log.warning(
                "verdict cache %s: %d entr%s refused as not authentic (graded again)",
                self.directory,
                self.rejected,
                "y" if self.rejected == 1 else "ies",
            )

    def keys(self) -> list[str]:
        """Every key of ours (str); for tests and tools, not the grading path."""
        return [key for key in self._store.iterkeys() if isinstance(key, str)]

    def _warn(self, exc: BaseException) -> None:
        if not self._warned:
            self._warned = True
            log.warning(
                "the verdict cache %s failed (%s): grading without it; move it aside to "
                "start a fresh one",
                self.directory,
                exc,
            )

    def __len__(self) -> int:
        return len(self._store)

    def close(self) -> None:
        self.report_rejected()
        self._store.close()

    def __enter__(self) -> VerdictCache:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
