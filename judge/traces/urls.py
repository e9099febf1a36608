"""The one way a trace store's or a collector's URL is shown (`--phoenix`, `--otel-endpoint`):
without the user name and password a URL may carry (`http://user:pw@host` ->
`http://***@host`), in every line printed, raised or logged."""

from __future__ import annotations

from judge.config import Redactor

__all__ = ["shown_url"]

_REDACT = Redactor([])


def shown_url(url: str) -> str:
    """`url` as it may be printed: its user information replaced by `***`."""
    return _REDACT(url)
