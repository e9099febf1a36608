"""The only module that talks HTTP: chat completions through the `openai` SDK.

It asks for structured output with the verdict's JSON schema and steps down to JSON mode,
then to the schema in the prompt, when a server refuses `response_format` (only in `auto`
mode). Transient failures are retried here with tenacity, once: the SDK's own retries are
off. SDK exceptions become `judge.errors` types here and nowhere else.
"""

from __future__ import annotations

import email.utils
import itertools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from judge import errors
from judge.config import JudgeConfig
from judge.identity import endpoint_of
from judge.schemas import Usage

log = logging.getLogger(__name__)

MODES = ("json_schema", "json_object", "prompt")
POOL_SIZE = 8  # connections per HTTP pool
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "structured", "guided")

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Completion:
    """What came back for one request, after retries."""

    text: str
    finish_reason: str | None
    refusal: str | None
    model: str
    system_fingerprint: str | None
    usage: Usage
    output_mode: str
    latency_ms: float


class ChatClient:
    """An async chat client pinned to one model and one set of sampling parameters."""

    def __init__(self, config: JudgeConfig, *, http_client: httpx.AsyncClient | None = None):
        if config.model is None:
            raise errors.UsageError("ChatClient needs a model; the rules judge needs no client")
        self.config = config
        self._key = config.api_key.get_secret_value() if config.api_key else None
        # httpcore's pool rescans every connection for every queued request, so one pool of
        # N connections costs O(N^2) per request; a few small pools, used in turn, keep the
        # client's CPU per request flat as concurrency grows (benchmarks/RESULTS.md).
        if http_client is not None:
            clients = [http_client]
        else:
            shards = -(-config.concurrency // POOL_SIZE)
            size = -(-config.concurrency // shards)
            limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
            tls = httpx.create_ssl_context()  # one context: building each costs ~40 ms
            clients = [
                openai.DefaultAsyncHttpxClient(limits=limits, verify=tls) for _ in range(shards)
            ]
        self._sdks = [
            openai.AsyncOpenAI(
                api_key=self._key or "no-key",  # local servers take any key; the SDK wants one
                base_url=config.base_url,
                max_retries=0,
                timeout=config.timeout,
                http_client=client,
            )
            for client in clients
        ]
        self._turn = itertools.cycle(self._sdks)
        self._told_unreachable = False
        self._mode: str = "json_schema" if config.output_mode == "auto" else config.output_mode

    @property
    def output_mode(self) -> str:
        """The mode the next request will use (after any step down)."""
        return self._mode

    async def aclose(self) -> None:
        for sdk in self._sdks:
            await sdk.close()

    async def complete(
        self,
        render: Callable[[str], Messages],
        *,
        schema_name: str,
        schema: dict[str, Any],
        extra: Sequence[dict[str, str]] = (),
    ) -> Completion:
        """Send `render(mode) + extra`, stepping down output modes as the server requires."""
        while True:
            mode = self._mode
            try:
                return await self._with_retries(
                    list(render(mode)) + list(extra), mode, schema_name, schema
                )
            except errors.BadRequestError as exc:
                if not self._step_down(mode, exc):
                    raise

    def _step_down(self, mode: str, exc: errors.BadRequestError) -> bool:
        if self.config.output_mode != "auto" or mode == "prompt":
            return False
        if not any(word in str(exc).lower() for word in _FORMAT_WORDS):
            return False
        if self._mode == mode:  # another task may have stepped down already
            self._mode = MODES[MODES.index(mode) + 1]
            log.warning("server refused output mode %s; using %s from now on", mode, self._mode)
        return True

    async def _with_retries(
        self, messages: Messages, mode: str, schema_name: str, schema: dict[str, Any]
    ) -> Completion:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.config.max_retries + 1),
            wait=RetryWait(self.config),
            retry=retry_if_exception(lambda e: isinstance(e, errors.ApiError) and e.transient),
            before_sleep=_log_retry,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await self._send(messages, mode, schema_name, schema)
        raise AssertionError("unreachable: tenacity reraises the last error")

    def request_body(
        self, messages: Messages, mode: str, schema_name: str, schema: dict[str, Any]
    ) -> dict[str, Any]:
        """The chat-completions body for one request; the batch files use the same body."""
        cfg = self.config
        body: dict[str, Any] = {
            "model": cfg.model or "",
            "messages": messages,
            "temperature": cfg.temperature,
            "max_tokens": cfg.max_tokens,
        }
        if cfg.seed is not None:
            body["seed"] = cfg.seed
        if cfg.top_p is not None:
            body["top_p"] = cfg.top_p
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            }
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    async def _send(
        self, messages: Messages, mode: str, schema_name: str, schema: dict[str, Any]
    ) -> Completion:
        body = self.request_body(messages, mode, schema_name, schema)
        started = time.perf_counter()
        try:
            # `post` rather than `chat.completions.create`: the body is already exactly what
            # the API takes, and reading the JSON ourselves skips the SDK's per-request
            # parameter transform and model construction (~1 ms of CPU a request).
            response = await next(self._turn).post(
                "/chat/completions", body=body, cast_to=httpx.Response
            )
            data = response.json()
        except openai.OpenAIError as exc:
            error = translate_error(exc, self._key)
            if isinstance(error, errors.ApiConnectionError):
                self._say_unreachable(error)
            raise error from None
        except ValueError as exc:  # a 200 whose body is not JSON
            raise errors.ServerError(f"unreadable reply body: {exc}") from None
        if not isinstance(data, Mapping):
            raise errors.ServerError("the reply body is not a JSON object")
        return completion_from(data, mode, (time.perf_counter() - started) * 1000)

    def _say_unreachable(self, error: errors.ApiError) -> None:
        # Retries of an unreachable endpoint take a while (backoff, every case); say what is
        # happening once instead of sitting silent until every case is an api_error.
        if not self._told_unreachable:
            self._told_unreachable = True
            log.warning(
                "cannot connect to %s (%s); each case is retried up to %d time(s), then "
                "recorded as an api_error; check --base-url",
                endpoint_of(self.config.base_url),
                error,
                self.config.max_retries,
            )


def served_models(config: JudgeConfig) -> list[str]:
    """The model ids the endpoint lists at `GET /models` (vLLM, llama.cpp and Ollama
    usually serve one). ApiError when the endpoint cannot be asked."""
    key = config.api_key.get_secret_value() if config.api_key else None
    sdk = openai.OpenAI(
        api_key=key or "no-key",
        base_url=config.base_url,
        max_retries=0,
        timeout=min(config.timeout, 30.0),
    )
    try:
        return sorted({model.id for model in sdk.models.list()})
    except openai.OpenAIError as exc:
        raise translate_error(exc, key) from None
    finally:
        sdk.close()


def completion_from(data: Mapping[str, Any], mode: str, latency_ms: float = 0.0) -> Completion:
    """A Completion from a chat.completion JSON body (online reply or batch result line)."""
    choices = data.get("choices")
    if not choices or not isinstance(choices[0], Mapping):
        raise errors.ServerError("the server answered with no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    usage = data.get("usage") or {}
    return Completion(
        text=_text(message.get("content")),
        finish_reason=choice.get("finish_reason"),
        refusal=message.get("refusal"),
        model=data.get("model") or "",
        system_fingerprint=data.get("system_fingerprint"),
        usage=Usage(
            prompt_tokens=usage.get("prompt_tokens") or 0,
            completion_tokens=usage.get("completion_tokens") or 0,
        ),
        output_mode=mode,
        latency_ms=latency_ms,
    )


def _text(content: Any) -> str:
    """Message content: a string, or (some servers) a list of text parts."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return content if isinstance(content, str) else ""


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


def parse_retry_after(headers: httpx.Headers | None) -> float | None:
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


def translate_error(exc: openai.OpenAIError, api_key: str | None = None) -> errors.ApiError:
    """Map an SDK exception to the project's error tree, with any key scrubbed out."""
    message = _scrub(getattr(exc, "message", None) or str(exc), api_key)
    if isinstance(exc, openai.APITimeoutError):
        return errors.ApiTimeoutError(f"request timed out: {message}")
    if isinstance(exc, openai.APIConnectionError):
        return errors.ApiConnectionError(f"connection failed: {message}")
    if not isinstance(exc, openai.APIStatusError):
        return errors.ApiError(message)
    status = exc.status_code
    retry_after = parse_retry_after(exc.response.headers)
    kind: type[errors.ApiError] = errors.ApiError
    if status in (401, 403):
        kind = errors.AuthError
        message = f"authentication failed ({message}); check OPENAI_API_KEY"
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


def _scrub(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    return text
