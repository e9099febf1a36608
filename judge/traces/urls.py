"""The one way a trace store's or a collector's URL is shown (`--phoenix`, `--otel-endpoint`):
without the user name and password a URL may carry (`http://user:pw@host` ->
`http://***@host`), in every line printed, raised or logged.

A password typed without percent-encoding may hold `@`, `/`, `?`, `#` or a space, where a
URL parser stops (`http://u:p@ss@host`: the user information runs to the last `@`). What
is hidden here runs to the last `@` after the `://`, so no part of such a password is
shown; a path holding an `@` is hidden with it (more hidden, never less).
"""

from __future__ import annotations

import re

from judge.config import Redactor

__all__ = ["shown_url"]

_REDACT = Redactor([])
_SCHEME = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*://")
_USERINFO = re.compile(r"(?<=://)\S*@")  # within a message: to the last @ of the word


def shown_url(url: str) -> str:
    """`url` (or a message naming URLs) as it may be printed: user information `***`."""
    scheme = _SCHEME.match(url)
    if scheme is not None and "@" in url[scheme.end() :]:
        url = url[: scheme.end()] + "***@" + url.rsplit("@", 1)[1]  # the URL itself
    return _REDACT(_USERINFO.sub("***@", url))
