"""What a server checks before it listens (`judge serve`, `judge label`, `judge view`): a
token strong enough for an address beyond loopback; then the listening socket itself."""

from __future__ import annotations

import errno
import ipaddress
import socket

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


def bind(host: str, port: int, *, backlog: int = 2048) -> socket.socket:
    """A listening socket on host:port (any address family `host` resolves to), or a
    one-line UsageError saying why not. Bound here, before anything is printed, so the
    address a server prints is already accepting connections."""
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {port}")
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        reason = "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror or exc
        raise UsageError(f"cannot listen on {host}:{port}: {reason}") from None
    return sock


def bind_page(host: str, port: int) -> socket.socket:
    """The socket of a page a person opens (`judge label`, `judge view`): an IPv6 address
    has a colon, anything else is IPv4."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    return sock


def page_url(sock: socket.socket, token: str) -> str:
    """The URL a person opens: the bound address, with the session token."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/?token={token}"
