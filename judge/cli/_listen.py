"""What `judge serve` and `judge label` check before they listen: a token strong enough for
an address beyond loopback."""

from __future__ import annotations

import ipaddress

from judge.errors import UsageError

MIN_TOKEN_CHARS = 16


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_strong_token(host: str, token: str | None, how: str) -> None:
    """Off loopback a server needs a token of at least MIN_TOKEN_CHARS characters; `how`
    says where the token is set (`set JUDGE_SERVICE_TOKEN ...`)."""
    if is_loopback(host):
        return
    if token is None:
        raise UsageError(f"binding to {host} needs a bearer token: {how}")
    if len(token) < MIN_TOKEN_CHARS:
        raise UsageError(
            f"binding to {host} needs a bearer token of at least {MIN_TOKEN_CHARS} characters, "
            f"got {len(token)} (e.g. `python -c 'import secrets; print(secrets.token_urlsafe())'`)"
        )
