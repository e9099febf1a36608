"""The secret that authenticates verdict-cache entries, kept outside every cache folder.

A cache folder may be shared (a team's folder on a network drive, `/tmp`), and anyone who
can write it can write rows: each entry therefore carries an HMAC-SHA256 of its record and
its cache key under a secret the writer held (`judge.engine.cache`). An entry whose MAC
does not check (a rewritten score, a row planted by someone without the secret, an entry
written under another user's secret) is a miss, counted.

The secret is, in order:

- ``$JUDGE_CACHE_KEY`` (at least 16 characters): the one way to share a cache, since
  every user and every replica that should trust each other's entries must hold the same
  secret;
- else the per-user file ``$XDG_CONFIG_HOME/llm-judge/cache.key`` (``~/.config/...`` when
  that is unset or relative), 32 random bytes in hex, created mode 0600 on first use. A
  key file owned by another user, or that others can read or write, is refused: it would
  let them forge entries.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from judge.errors import UsageError

__all__ = ["CACHE_KEY_ENV", "cache_key_file", "load_cache_secret"]

CACHE_KEY_ENV = "JUDGE_CACHE_KEY"
MIN_SECRET_CHARS = 16
_MAKE_ONE = "python -c 'import secrets; print(secrets.token_hex(32))'"


def cache_key_file(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/llm-judge/cache.key`` when that is an absolute path (the XDG rule),
    else ``~/.config/llm-judge/cache.key``."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME") or ""
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".config"
    return base / "llm-judge" / "cache.key"


def load_cache_secret(env: Mapping[str, str] | None = None) -> bytes:
    """The cache secret (module docstring): ``$JUDGE_CACHE_KEY``, else the per-user key
    file, created on first use. A UsageError names what is wrong and how to fix it."""
    env = os.environ if env is None else env
    shared = env.get(CACHE_KEY_ENV)
    if shared:
        if len(shared) < MIN_SECRET_CHARS:
            raise UsageError(
                f"${CACHE_KEY_ENV} is too short to authenticate the cache: give at least "
                f"{MIN_SECRET_CHARS} random characters, e.g. `{_MAKE_ONE}`"
            )
        return shared.encode("utf-8")
    return _own_key(cache_key_file(env))


def _own_key(path: Path) -> bytes:
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return _read_key(path)
    except OSError as exc:
        raise UsageError(
            f"cannot create the cache key {path}: {exc.strerror} (set ${CACHE_KEY_ENV}, "
            "or pass --no-cache)"
        ) from None
    with os.fdopen(handle, "w", encoding="ascii") as out:
        out.write(secrets.token_hex(32) + "\n")
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    """The key file's secret, refused unless it is the user's own and private to them."""
    try:
        info = path.stat()
        secret = path.read_bytes().strip()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise UsageError(f"cannot read the cache key {path}: {exc.strerror}") from None
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise UsageError(
            f"the cache key {path} belongs to another user: refusing it (anyone holding it "
            "can forge cache entries); remove it, or set $" + CACHE_KEY_ENV
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise UsageError(
            f"the cache key {path} can be read or written by others (mode "
            f"{stat.S_IMODE(info.st_mode):o}): refusing it; run chmod 600 {path}"
        )
    if len(secret) < MIN_SECRET_CHARS:
        raise UsageError(f"the cache key {path} is too short: remove it to make a new one")
    return secret
