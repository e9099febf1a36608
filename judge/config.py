"""The judge's configuration: explicit, frozen, passed as an argument (no globals)."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import unquote, urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr
from pydantic_core import PydanticCustomError

# What the openai SDK talks to when no base URL is given.
OPENAI_BASE_URL = "https://api.openai.com/v1"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_OPENAI_ENDPOINT = "https://api.openai.com:443"
OutputMode = Literal["auto", "json_schema", "json_object", "prompt"]
MAX_CONCURRENCY = 1024  # the ceiling of --concurrency, and where "auto" stops growing

# A model name pinned to a snapshot carries a date (2024-08-06, 20240806, 0613) or a version
# tag after a colon or an @ (ollama `llama3:8b-instruct-q4`, vertex `@001`).
_PINNED = re.compile(r"(\d{4}-\d{2}-\d{2}|\d{8}|-\d{4}$|[:@]\S+|-v\d+(\.\d+)*$)")
# A model the server names as a file (llama.cpp's `/models/x.gguf`): as pinned as a model gets.
_MODEL_FILE = re.compile(
    r"\.(gguf|ggml|bin|safetensors|pt|pth|onnx)$|^(/|~|\.{1,2}/|[A-Za-z]:\\)", re.I
)
# Hosted providers, whose model names are aliases they move to newer snapshots. Elsewhere (a
# loopback, private or self-hosted server) the model is what its operator loaded.
_HOSTED = (
    "openai.com",
    "azure.com",
    "anthropic.com",
    "googleapis.com",
    "mistral.ai",
    "groq.com",
    "together.xyz",
    "together.ai",
    "fireworks.ai",
    "openrouter.ai",
    "deepseek.com",
    "x.ai",
    "cohere.com",
)


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CACHE_HOME/llm-judge` when that is set to an absolute path (the XDG base
    directory rule: a relative one is ignored), else `~/.cache/llm-judge`."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CACHE_HOME") or ""
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "llm-judge"


def _in_range(value: int | str) -> int | str:
    """`concurrency`: "auto", or 1..MAX_CONCURRENCY (one error, said as pydantic says it)."""
    if value == "auto" or not isinstance(value, int):
        return value
    if value < 1:
        raise PydanticCustomError(
            "greater_than_equal", "Input should be greater than or equal to {ge}", {"ge": 1}
        )
    if value > MAX_CONCURRENCY:
        raise PydanticCustomError(
            "less_than_equal", "Input should be less than or equal to {le}", {"le": MAX_CONCURRENCY}
        )
    return value


# `concurrency`: requests in flight, or "auto" (a judge's and a juror's alike)
Concurrency = Annotated[int | Literal["auto"], AfterValidator(_in_range)]


class JudgeSettings(BaseModel):
    """The model and how it is asked: what a named judge in a service config also holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None
    base_url: str | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    seed: int | None = 42
    max_tokens: int = Field(default=1024, ge=16, le=32768)
    output_mode: OutputMode = "auto"
    # the alternatives asked for at each token (`logprobs` with `top_logprobs`), from which
    # a verdict's confidence is read (judge.engine.confidence); 0: logprobs are not asked
    top_logprobs: int = Field(default=10, ge=0, le=20)
    # replies per case (`--samples K`): the majority label is the verdict and the share
    # agreeing with it the confidence (judge.engine.votes); K > 1 changes the verdict
    samples: int = Field(default=1, ge=1, le=50)
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=5, ge=0, le=20)
    # "auto": learnt from the endpoint (AIMD on 429/503, its rate-limit headers:
    # judge.client._pacing), up to MAX_CONCURRENCY; `rpm` / `tpm` cap requests and tokens
    # a minute, for providers that send no rate-limit headers
    concurrency: Concurrency = 16
    rpm: int | None = Field(default=None, ge=1)
    tpm: int | None = Field(default=None, ge=1)

    @property
    def max_in_flight(self) -> int:
        """The most requests ever in flight: the number, or MAX_CONCURRENCY for "auto"."""
        return MAX_CONCURRENCY if self.concurrency == "auto" else self.concurrency


class JudgeConfig(JudgeSettings):
    """Everything that decides how a case is judged, and how hard we try.

    `model=None` selects the offline rules judge. The API key is a secret: it is never
    written to a record, the cache, a log or a report.
    """

    api_key: SecretStr | None = Field(default=None, repr=False, exclude=True)
    retry_after_cap: float = Field(default=60.0, ge=0)
    backoff_initial: float = Field(default=0.5, ge=0)
    backoff_max: float = Field(default=30.0, ge=0)
    cache_dir: Path | None = None
    use_cache: bool = True

    @property
    def offline(self) -> bool:
        return self.model is None

    @property
    def is_pinned(self) -> bool:
        return self.model is None or bool(_PINNED.search(self.model))

    @property
    def may_drift(self) -> bool:
        """Whether verdicts may drift under the same model name: an alias (not pinned) at
        a hosted provider. A loopback, private or self-hosted server runs what its operator
        loaded, and a model it names as a file is as pinned as a model gets."""
        if self.is_pinned or _MODEL_FILE.search(self.model or ""):
            return False
        return is_hosted(self.base_url)


def is_hosted(base_url: str | None) -> bool:
    """Whether the endpoint is a hosted provider's (no base URL: OpenAI's); never a
    server named by its IP address (loopback, private or not), `localhost`, or a host
    outside the known providers (a self-hosted vLLM, Ollama or llama.cpp).

    >>> is_hosted(None), is_hosted("http://127.0.0.1:8080/v1"), is_hosted("http://10.0.0.5/v1")
    (True, False, False)
    """
    host = (urlsplit(base_url or OPENAI_BASE_URL).hostname or "").lower().rstrip(".")
    try:
        ipaddress.ip_address(host)
        return False  # an address, not a provider's name: a server someone runs
    except ValueError:
        return any(host == h or host.endswith(f".{h}") for h in _HOSTED)


def endpoint_of(base_url: str | None) -> str:
    """`scheme://host:port/path` of an endpoint: case-folded, default port made explicit,
    no trailing slash; never the user name, password, query or fragment.

    >>> endpoint_of("HTTPS://user:pw@API.openai.com/v1/")
    'https://api.openai.com:443/v1'
    """
    parts = urlsplit(base_url or OPENAI_BASE_URL)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:  # a port that is not a number: keep the text, the SDK will refuse it
        port = None
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    where = f"{host}:{port}" if port else host
    return f"{scheme}://{where}{parts.path.rstrip('/')}"


def is_openai(base_url: str | None) -> bool:
    """Whether an endpoint is OpenAI's own API (https to api.openai.com, port 443; no URL is
    the SDK's default, OpenAI's): the one endpoint `$OPENAI_API_KEY` may be sent to unnamed.

    >>> is_openai("https://API.openai.com/v1"), is_openai("http://api.openai.com/v1")
    (True, False)
    """
    where = endpoint_of(base_url)
    return where == _OPENAI_ENDPOINT or where.startswith(_OPENAI_ENDPOINT + "/")


def without_userinfo(base_url: str | None) -> str | None:
    """The URL with any `user:password@` removed (what may be written to a file or a log).

    >>> without_userinfo("https://user:pw@host:8000/v1")
    'https://host:8000/v1'
    """
    if not base_url:
        return base_url
    parts = urlsplit(base_url)
    if not (parts.username or parts.password):
        return base_url
    netloc = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=netloc).geturl()


def secrets_of(config: JudgeConfig) -> list[str]:
    """The secrets a judge config holds: its API key and a password written into its URL."""
    found = [config.api_key.get_secret_value()] if config.api_key else []
    password = urlsplit(config.base_url).password if config.base_url else None
    if password:
        found += [password, unquote(password)]
    return [s for s in found if s]


class Redactor:
    """Replaces the server's secrets, anything shaped like an API key, and the user
    information of any URL (`https://user:password@host` -> `https://***@host`) with `***`."""

    _KEYLIKE = re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_\-*]{8,}|\bBearer\s+[A-Za-z0-9._\-~+/]+=*")
    _USERINFO = re.compile(r"(?<=://)[^/?#@\s]+@")

    def __init__(self, secrets: list[str]) -> None:
        self._secrets = sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        text = self._USERINFO.sub("***@", text)
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return self._KEYLIKE.sub("***", text)
