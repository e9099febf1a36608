"""Chat completions, pinned to one model and its settings: straight on aiohttp
(`judge.client._direct`) when it is installed and no `http_client` is given, else through
the `openai` SDK; the SDK's errors either way. `--concurrency auto` and the --rpm/--tpm
caps pace the requests here (`judge.client._pacing`).

It asks for structured output with the verdict's JSON schema and steps down to JSON mode,
then to the schema in the prompt, when a server refuses `response_format` (only in `auto`
mode). Retries and error translation are `judge.client._retry`'s, shared with the Batch
API calls.

Log-probabilities: each request asks for them (`logprobs` with `top_logprobs`, the config's
number; 0 asks none), for the verdict's confidence (judge.engine.confidence). A server that
refuses them (a 400 naming logprobs) or answers without them is said once, in one warning,
and asked no more; the run goes on without them.

Timeouts: `--timeout` bounds each read, so on a plain reply it bounds the whole generation
and on a streamed reply the silence between two chunks. Replies are plain (streaming costs
client CPU a fast endpoint does not need) until a request times out; from then on this
client asks for streamed replies (on the direct aiohttp path), so a slow server that is
making progress, such as a CPU model, finishes its generation instead of being abandoned
and asked again. A timed-out request is re-sent at most once, whatever `--max-retries`
says: each re-send of a deterministic request asks the server for the same generation.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import openai
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from calibration.io.jsontext import loads_bounded
from judge import errors
from judge.client._http import aiohttp_available, chat_clients, httpx, sync_client
from judge.client._logprobs import TokenLogprob, read_logprobs
from judge.client._pacing import Pacer, Pacing, Slot
from judge.client._retry import (
    api_key,
    async_sdk,
    parse_retry_after,
    redactor,
    retrying,
    translate_error,
)
from judge.config import JudgeConfig, endpoint_of
from judge.schemas import Usage

if TYPE_CHECKING:
    from judge.client._direct import DirectChat

log = logging.getLogger(__name__)

MODES = ("json_schema", "json_object", "prompt")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "structured", "guided")

Messages = list[dict[str, str]]


AUTO_START = 16  # where --concurrency auto starts (judge.client._pacing)


@dataclass
class RequestStats:
    """Requests sent, refused (429/503), in flight now and at most."""

    sent: int = 0
    refused: int = 0
    in_flight: int = 0
    peak: int = 0

    def started(self) -> None:
        self.sent += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def finished(self) -> None:
        self.in_flight -= 1


class _Unpaced:
    """The slot of a request no pacer holds back: reports go nowhere."""

    def succeeded(self, headers: Mapping[str, str] | None = None) -> None:
        return None

    def refused(self, retry_after: float | None, headers: Mapping[str, str] | None = None) -> None:
        return None


AnySlot = _Unpaced | Slot


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
    #: the reply's tokens with their log-probabilities, where the server gave them
    tokens: tuple[TokenLogprob, ...] | None = None


class ChatClient:
    """An async chat client pinned to one model and one set of sampling parameters."""

    def __init__(
        self,
        config: JudgeConfig,
        *,
        http_client: httpx.AsyncClient | None = None,
        transport: str = "auto",
        stream: bool | None = None,
    ):
        if config.model is None:
            raise errors.UsageError("ChatClient needs a model; the rules judge needs no client")
        self.config = config
        self._redact = redactor(config)
        # straight on aiohttp (judge.client._direct) when it is installed and no client is
        # given; else the SDK, on the aiohttp pool or a few small httpx pools used in turn
        # (judge.client._http)
        self._direct: DirectChat | None = None
        direct = transport == "direct" or (transport == "auto" and aiohttp_available())
        if http_client is not None:
            self._sdks = [async_sdk(config, http_client=http_client)]
        elif direct:
            from judge.client._direct import DirectChat

            self._sdks = [async_sdk(config)]  # builds the errors; sends nothing
            self._direct = DirectChat(
                self._sdks[0], concurrency=config.max_in_flight, timeout=config.timeout
            )
        else:
            clients = chat_clients(config.max_in_flight, transport=transport)
            self._sdks = [async_sdk(config, http_client=client) for client in clients]
        self._turn = itertools.cycle(self._sdks)
        self._told_unreachable = False
        # None: plain replies until the first timeout, streamed ones after (module docstring)
        self._stream_choice = stream
        self._stream = bool(stream) and self._direct is not None
        self._mode: str = "json_schema" if config.output_mode == "auto" else config.output_mode
        # asked until the server refuses them or answers without them (module docstring)
        self._logprobs = config.top_logprobs > 0
        self.logprobs_refused: str | None = None
        self.requests = RequestStats()
        self._encoded: dict[tuple[str, str, int, bool, int, bool], tuple[str, dict[str, Any]]] = {}
        auto = config.concurrency == "auto"
        self._pacer: Pacer | None = None
        if auto or config.rpm or config.tpm:
            start = AUTO_START if auto else config.max_in_flight
            pacing = Pacing(
                start=start,
                ceiling=config.max_in_flight,
                adaptive=auto,
                rpm=config.rpm,
                tpm=config.tpm,
            )
            self._pacer = Pacer(pacing)

    @property
    def output_mode(self) -> str:
        """The mode the next request will use (after any step down)."""
        return self._mode

    async def aclose(self) -> None:
        if self._direct is not None:
            await self._direct.aclose()
        for sdk in self._sdks:
            await sdk.close()

    async def complete(
        self,
        render: Callable[[str], Messages],
        *,
        schema_name: str,
        schema: dict[str, Any],
        extra: Sequence[dict[str, str]] = (),
        sample: int = 0,
    ) -> Completion:
        """Send `render(mode) + extra`, stepping down output modes as the server requires.
        `sample` > 0 asks for another sample of the same request: the seed plus `sample`
        (judge.engine.votes)."""
        while True:
            mode, logprobs = self._mode, self._logprobs
            try:
                reply = await self._with_retries(
                    list(render(mode)) + list(extra), mode, schema_name, schema, sample
                )
            except errors.BadRequestError as exc:
                if logprobs and "logprob" in str(exc).lower():
                    self._without_logprobs(f"it refused them: {exc}")
                    continue
                if not self._step_down(mode, exc):
                    raise
                continue
            if logprobs and reply.tokens is None and reply.text:
                self._without_logprobs("it answered without them")
            return reply

    def _without_logprobs(self, why: str) -> None:
        """Ask no more logprobs, and say so once (module docstring)."""
        if self._logprobs:
            self._logprobs = False
            self.logprobs_refused = why
            log.warning(
                "%s gives no logprobs (%s); verdicts carry no confidence from them",
                endpoint_of(self.config.base_url),
                why,
            )

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
        self,
        messages: Messages,
        mode: str,
        schema_name: str,
        schema: dict[str, Any],
        sample: int = 0,
    ) -> Completion:
        # The first attempt runs outside tenacity: it is the only one almost every request
        # makes, and setting up tenacity's loop cost more CPU than the rest of the client's
        # work on a case (benchmarks/CLIENT.md). A transient failure then enters the same
        # loop as its first attempt (re-raised there, not sent again), so the waits, the
        # log lines and the number of attempts are tenacity's exactly as before.
        try:
            return await self._send(messages, mode, schema_name, schema, sample)
        except errors.ApiError as exc:
            if not exc.transient:  # tenacity's retry predicate (judge.client._retry)
                raise
            failed: errors.ApiError | None = exc
        timed_out = isinstance(failed, errors.ApiTimeoutError)
        async for attempt in retrying(self.config):
            with attempt:
                if failed is not None:
                    error, failed = failed, None
                    raise error
                try:
                    return await self._send(messages, mode, schema_name, schema, sample)
                except errors.ApiTimeoutError as exc:
                    if timed_out:  # re-sent once already: not again (module docstring)
                        exc.transient = False
                    timed_out = True
                    raise
        raise AssertionError("unreachable: tenacity reraises the last error")

    def request_body(
        self,
        messages: Messages,
        mode: str,
        schema_name: str,
        schema: dict[str, Any],
        sample: int = 0,
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
            body["seed"] = cfg.seed + sample
        if cfg.top_p is not None:
            body["top_p"] = cfg.top_p
        if self._logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = cfg.top_logprobs
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            }
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    async def _send(
        self,
        messages: Messages,
        mode: str,
        schema_name: str,
        schema: dict[str, Any],
        sample: int = 0,
    ) -> Completion:
        streamed = self._stream
        content = self._encode(messages, mode, schema_name, schema, stream=streamed, sample=sample)
        if self._pacer is None:
            return await self._post(content, mode, _Unpaced(), streamed)
        # what a provider counts against a token limit: the prompt (~4 bytes a token) and
        # the completion it may have to make room for (max_tokens)
        tokens = len(content) / 4 + self.config.max_tokens if self.config.tpm else 0.0
        async with self._pacer.slot(tokens) as slot:
            return await self._post(content, mode, slot, streamed)

    def _encode(
        self,
        messages: Messages,
        mode: str,
        schema_name: str,
        schema: dict[str, Any],
        *,
        stream: bool = False,
        sample: int = 0,
    ) -> bytes:
        """`request_body` as JSON bytes: all but the messages (model, sampling, the schema)
        encoded once per mode, schema, sample and whether logprobs are asked, the messages
        per request; with `stream` on when the reply is to stream (the reply's form
        changes, not the generation)."""
        key = (mode, schema_name, id(schema), stream, sample, self._logprobs)
        fixed = self._encoded.get(key)
        if fixed is None:
            rest = self.request_body([], mode, schema_name, schema, sample)
            del rest["messages"]
            if stream:
                rest["stream"] = True
                rest["stream_options"] = {"include_usage": True}
            # the schema is held with its text, so its id() is not reused while cached
            fixed = self._encoded[key] = (json.dumps(rest)[1:], schema)
        return ('{"messages": ' + json.dumps(messages) + ", " + fixed[0]).encode()

    async def _post(
        self, content: bytes, mode: str, slot: AnySlot, streamed: bool = False
    ) -> Completion:
        sent = self.requests
        sent.started()
        started = time.perf_counter()
        try:
            # `post` rather than `chat.completions.create`: the body is already exactly what
            # the API takes (encoded once, above), and reading the JSON ourselves skips the
            # SDK's per-request parameter transform and model construction.
            if self._direct is not None:
                post = self._direct.post_stream if streamed else self._direct.post
                headers, body = await post(content)
            else:
                response = await next(self._turn).post(
                    "/chat/completions",
                    content=content,
                    cast_to=httpx.Response,
                    options={"follow_redirects": False},  # even on a caller's own http_client
                )
                headers, body = response.headers, response.content
            slot.succeeded(headers)
            data = loads_bounded(body)  # a body nested too deep is a ValueError too
        except openai.APIStatusError as exc:
            if exc.status_code in (429, 503):
                sent.refused += 1
                headers = exc.response.headers
                slot.refused(parse_retry_after(headers), headers)
            raise translate_error(exc, self._redact) from None
        except openai.APITimeoutError:
            raise self._timed_out(streamed) from None
        except openai.OpenAIError as exc:
            error = translate_error(exc, self._redact)
            if isinstance(error, errors.ApiConnectionError):
                self._say_unreachable(error)
            raise error from None
        except ValueError as exc:  # a 200 whose body is not JSON
            raise errors.ServerError(f"unreadable reply body: {exc}") from None
        finally:
            sent.finished()
        if not isinstance(data, Mapping):
            raise errors.ServerError("the reply body is not a JSON object")
        return completion_from(data, mode, (time.perf_counter() - started) * 1000)

    def request_summary(self) -> dict[str, Any]:
        """What the summary says about the requests: sent, refused (429/503), the most in
        flight, and for `--concurrency auto` the window it reached."""
        out: dict[str, Any] = {
            "concurrency": self.config.concurrency,
            "sent": self.requests.sent,
            "refused": self.requests.refused,
            "peak_in_flight": self.requests.peak,
        }
        if self.logprobs_refused is not None:
            out["logprobs_refused"] = self.logprobs_refused
        if self._pacer is not None and self.config.concurrency == "auto":
            out["window"] = {
                "peak": self._pacer.stats.peak_limit,
                "final": self._pacer.stats.final_limit,
            }
        return out

    def _timed_out(self, streamed: bool) -> errors.ApiTimeoutError:
        """The error of a request that timed out, naming --timeout; the first one turns
        streamed replies on (module docstring)."""
        timeout = f"--timeout {self.config.timeout:g}"
        if streamed:
            return errors.ApiTimeoutError(
                f"request timed out: the streamed reply was silent for {timeout} s"
            )
        if self._stream_choice is None and self._direct is not None and not self._stream:
            self._stream = True
            log.warning(
                "%s sent no reply within %s s; asking for streamed replies from now on, so "
                "that %s bounds the silence between chunks, not the whole generation",
                endpoint_of(self.config.base_url),
                timeout,
                timeout,
            )
        return errors.ApiTimeoutError(
            f"request timed out: no reply within {timeout} s (a slow server, such as a "
            "local CPU model, may need a larger --timeout)"
        )

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
    sdk = openai.OpenAI(
        api_key=api_key(config) or "no-key",
        base_url=config.base_url,
        max_retries=0,
        timeout=min(config.timeout, 30.0),
        http_client=sync_client(),
    )
    try:
        return sorted({model.id for model in sdk.models.list()})
    except openai.OpenAIError as exc:
        raise translate_error(exc, redactor(config)) from None
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
        tokens=read_logprobs(choice),
    )


def checked_completion(data: Mapping[str, Any], mode: str) -> Completion:
    """`completion_from` a body first validated as a chat.completion (batch result lines,
    read once each, where a clear message beats the online path's speed)."""
    try:
        ChatCompletion.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise errors.ServerError(f"unreadable response body ({where}: {first['msg']})") from None
    return completion_from(data, mode)


def _text(content: Any) -> str:
    """Message content: a string, or (some servers) a list of text parts."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return content if isinstance(content, str) else ""
