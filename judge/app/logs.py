"""Every log line passes a redactor: keys, tokens and a password written into a
URL (`--base-url https://user:pw@host/v1`, which httpx and the openai SDK log at `-v`).

The record factory is installed once per process and redacts with the redactor of the
command running now (`main` may run many times in one process, as in the tests: wrapping
the factory each time would stack one layer per call)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from judge.config import Redactor

SECRET_ENV = ("OPENAI_API_KEY", "JUDGE_SERVICE_TOKEN", "JUDGE_LABEL_TOKEN")


class _Redacting:
    """The log record factory: the message (and traceback) rendered, then redacted."""

    def __init__(self, make: Callable[..., logging.LogRecord]) -> None:
        self.make = make
        self.redact: Callable[[str], str] = str

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.make(*args, **kwargs)
        record.msg, record.args = self.redact(record.getMessage()), None
        if record.exc_info:
            record.exc_text = self.redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return record


def redact_logs(redact: Callable[[str], str]) -> None:
    """From now on every log record, by any logger, is made through `redact`."""
    factory = logging.getLogRecordFactory()
    if not isinstance(factory, _Redacting):
        factory = _Redacting(factory)
        logging.setLogRecordFactory(factory)
    factory.redact = redact


def url_passwords(*urls: str | None) -> list[str]:
    """The passwords written into `urls` (as written and percent-decoded)."""
    found: list[str] = []
    for url in urls:
        try:
            password = urlsplit(url).password if url else None
        except ValueError:
            password = None
        if password:
            found += [password, unquote(password)]
    return found


def cli_redactor(env: Mapping[str, str], base_url: str | None) -> Redactor:
    """The secrets a command knows before it runs: keys and tokens from the environment and
    the password of the endpoint URL (flag or $OPENAI_BASE_URL)."""
    secrets = [env[name] for name in SECRET_ENV if env.get(name)]
    return Redactor(secrets + url_passwords(base_url, env.get("OPENAI_BASE_URL")))
