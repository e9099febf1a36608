"""One retry policy and one SDK set-up for every call to an endpoint (chat completions and
the Batch API's files and batches), and the one place SDK exceptions become the project's
error types.

Retries: tenacity on transient errors only (429, 408/409/5xx, timeouts, dropped
connections), Retry-After honoured up to a cap, else exponential backoff with jitter, a
bounded number of attempts, each logged at debug level. The SDK's own retries are off, so
nothing retries twice. The API key is read from the config here and nowhere else, and
scrubbed from every error message with any password of the URL (`judge.config.Redactor`,
the same redactor the service applies to its logs and answers).
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from judge import errors
from judge.client._http import ReplyTooLarge, async_client, httpx
from judge.config import JudgeConfig, Redactor, secrets_of

log = logging.getLogger("judge.client")
T = TypeVar("T")


def api_key(config: JudgeConfig) -> str | None:
    """The key the config holds (a secret: never logged, written or put in a message)."""
    return config.api_key.get_secret_value() if config.api_key else None


def redactor(config: JudgeConfig) -> Redactor:
    """What scrubs this config's secrets (key, URL password) from anything said."""
    return Redactor(secrets_of(config))


def async_sdk(
    config: JudgeConfig, *, http_client: httpx.AsyncClient | None = None
) -> openai.AsyncOpenAI:
    """The SDK client for an endpoint, its own retries off (ours are `retrying`), on
    `http_client` (else one that follows no redirect: `judge.client._http`)."""
    return openai.AsyncOpenAI(
        api_key=api_key(config) or "no-key",  # local servers take any key; the SDK wants one
        base_url=config.base_url,
        max_retries=0,
        timeout=config.timeout,
        http_client=http_client if http_client is not None else async_client(),
    )


def retrying(config: JudgeConfig) -> AsyncRetrying:
    """The retry policy of the module docstring, for `async for attempt in retrying(c)`."""
    return AsyncRetrying(
        stop=stop_after_attempt(config.max_retries + 1),
        wait=RetryWait(config),
        retry=retry_if_exception(lambda e: isinstance(e, errors.ApiError) and e.transient),
        before_sleep=_log_retry,
        reraise=True,
    )


async def call(config: JudgeConfig, make: Callable[[], Awaitable[T]]) -> T:
    """One SDK call, its errors translated and transient ones retried like a chat request."""
    async for attempt in retrying(config):
        with attempt:
            try:
                return await make()
            except openai.OpenAIError as exc:
                raise translate_error(exc, redactor(config)) from None
    raise AssertionError("unreachable: tenacity reraises the last error")


class RetryWait:
    """Retry-After when the server sends one (capped), else exponential backoff with jitter."""

    def __init__(self, config: JudgeConfig) -> None:
        self.cap = config.retry_after_cap
        self.backoff = wait_exponential_jitter(
            multiplier=config.backoff_initial, max=config.backoff_max, jitter=config.backoff_initial
        )

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            return float(min(max(retry_after, 0.0), self.cap))
        return float(self.backoff(state))


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    log.debug("attempt %d failed (%s); retrying in %.2fs", state.attempt_number, exc, wait)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `Retry-After` as seconds or an HTTP date."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def translate_error(exc: openai.OpenAIError, redact: Callable[[str], str] = str) -> errors.ApiError:
    """Map an SDK exception to the project's error tree; `redact` (the config's
    `Redactor`) scrubs the key and any URL password from what the server said."""
    message = redact(getattr(exc, "message", None) or str(exc))
    if isinstance(exc, ReplyTooLarge):
        return errors.ApiError(message)  # not transient: the same server says it again
    if isinstance(exc, openai.APITimeoutError):
        return errors.ApiTimeoutError(f"request timed out: {message}")
    if isinstance(exc, openai.APIConnectionError):
        return errors.ApiConnectionError(f"connection failed: {message}")
    if not isinstance(exc, openai.APIStatusError):
        return errors.ApiError(message)
    status = exc.status_code
    retry_after = parse_retry_after(exc.response.headers)
    kind: type[errors.ApiError] = errors.ApiError
    if 300 <= status < 400:
        where = redact(exc.response.headers.get("location", "") or "elsewhere")
        message = (
            f"the endpoint answered HTTP {status}, a redirect to {where}; redirects are not "
            "followed (the prompt goes to --base-url only): give the final URL as --base-url"
        )
    elif status in (401, 403):
        kind = errors.AuthError
        message = f"authentication failed ({message}); check the API key"
    elif status == 404:
        kind = errors.ModelNotFoundError
        message = f"not found ({message}); check --model and --base-url"
    elif status == 429:
        kind = errors.RateLimitError
    elif status in (408, 409) or status >= 500:
        kind = errors.ServerError
    elif status in (400, 422):
        kind = errors.BadRequestError
    return kind(message, status_code=status, retry_after=retry_after)
