"""The HTTP layer under the SDK (issue 20 item 11, issue 22 items 1-2), over loopback with
the real transports: a reply body is capped (a 300 MB reply fails its case cleanly with
memory bounded), a redirect is never followed (the prompt is not re-sent elsewhere), and
both transports (aiohttp, sharded httpx pools) give the same verdicts; `GET /models` too."""

from __future__ import annotations

import ssl
import tracemalloc
from collections.abc import Callable

import pytest

from judge import errors
from judge.client import served_models
from judge.client._http import SDK_MAJOR, aiohttp_available, chat_clients, httpx
from judge.config import JudgeConfig
from judge.engine.model import LLMJudge
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.testing import FakeOpenAIServer, Reply
from tests.helpers import case

_AIOHTTP = pytest.mark.skipif(not aiohttp_available(), reason="needs openai[aiohttp]")
# the SDK on httpx pools, the SDK on its aiohttp transport, and straight on aiohttp
TRANSPORTS = [
    "httpx",
    pytest.param("aiohttp", marks=_AIOHTTP),
    pytest.param("direct", marks=_AIOHTTP),
]


def config(server: FakeOpenAIServer, **more: object) -> JudgeConfig:
    options: dict[str, object] = {
        "model": server.model,
        "base_url": server.base_url,
        "api_key": "sk-x",
        "max_retries": 2,
        "backoff_initial": 0.0,
        "backoff_max": 0.0,
    }
    options.update(more)
    return JudgeConfig(**options)  # type: ignore[arg-type]


async def evaluate(server: FakeOpenAIServer, transport: str, **more: object):  # type: ignore[no-untyped-def]
    judge = LLMJudge(config(server, **more))
    judge.client = type(judge.client)(judge.config, transport=transport)
    try:
        return await judge.evaluate(load_rubric("faithfulness"), Case.model_validate(case()))
    finally:
        await judge.aclose()


def test_the_transport_is_the_installed_sdks() -> None:
    import openai

    assert int(openai.__version__.split(".")[0]) == SDK_MAJOR
    assert httpx.__name__ == ("httpx2" if SDK_MAJOR >= 3 else "httpx")
    for transport in ("httpx", "auto"):
        for client in chat_clients(64, transport=transport):
            assert client.follow_redirects is False


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_both_transports_grade_alike(
    server_factory: Callable[..., FakeOpenAIServer], transport: str
) -> None:
    server = server_factory()
    outcome = await evaluate(server, transport)
    assert outcome.status == "ok" and outcome.verdict is not None
    assert server.stats.requests == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("declared", [False, True], ids=["chunked", "content-length"])
async def test_a_300_mb_reply_fails_the_case_with_memory_bounded(
    server_factory: Callable[..., FakeOpenAIServer], transport: str, declared: bool
) -> None:
    """Before the fix the client read the whole body (300 MB replies took the service to
    8 GB); now the case is an api_error naming the cap, read no further than the cap, and
    not retried (the same server would say it again)."""
    server = server_factory()
    server.script(Reply(huge_body=300 * 1024 * 1024, declare_length=declared))
    tracemalloc.start()
    try:
        outcome = await evaluate(server, transport)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.status == "api_error"
    assert "reply body is larger than 16,777,216 bytes" in (outcome.error or "")
    assert server.stats.requests == 1  # refused unread, never retried
    assert peak < 80 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_a_redirect_is_not_followed(
    server_factory: Callable[..., FakeOpenAIServer], transport: str, status: int
) -> None:
    """Before the fix the SDK followed redirects (307/308 re-send the body): the prompt went
    to whatever URL the endpoint named."""
    elsewhere = server_factory()
    server = server_factory()
    target = f"{elsewhere.base_url}/chat/completions"
    server.script(Reply(status=status, headers={"location": target}, error_body={}))
    outcome = await evaluate(server, transport)
    assert outcome.status == "api_error"
    assert f"HTTP {status}, a redirect to {target}; redirects are not followed" in (
        outcome.error or ""
    )
    assert elsewhere.stats.requests_by_path == {}  # nothing reached the other URL
    assert server.stats.requests == 1  # and it is not retried


def test_models_are_capped_and_not_redirected(
    server_factory: Callable[..., FakeOpenAIServer],
) -> None:
    server = server_factory(served_models=["a-model", "b-model"])
    assert served_models(config(server)) == ["a-model", "b-model"]
    cfg = config(server, base_url=server.base_url.replace("/v1", "/nowhere"))
    with pytest.raises(errors.ApiError):
        served_models(cfg)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_key_is_sent_and_a_refusal_is_the_sdks_error(
    server_factory: Callable[..., FakeOpenAIServer], transport: str
) -> None:
    server = server_factory(api_key="sk-right")
    outcome = await evaluate(server, transport, api_key="sk-right")
    assert outcome.status == "ok"
    with pytest.raises(errors.AuthError, match="Incorrect API key provided"):
        await evaluate(server, transport, api_key="sk-wrong")
    server.script(Reply(status=500, headers={"retry-after": "0"}))
    outcome = await evaluate(server, transport, api_key="sk-right", max_retries=0)
    assert outcome.status == "api_error"
    # the SDK's own wording on every path (3.x says the message, 2.x the whole body)
    assert (outcome.error or "").startswith("HTTP 500: Error code: 500 - ")
    assert "scripted HTTP 500" in (outcome.error or "")


def test_the_direct_path_takes_its_proxy_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from judge.client._direct import proxy_for

    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    assert proxy_for("https://api.openai.com/v1/chat/completions") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.test:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert proxy_for("https://api.openai.com/v1/chat/completions") == "http://proxy.test:3128"
    assert proxy_for("http://127.0.0.1:8000/v1/chat/completions") is None
    assert proxy_for("http://judge.test/v1/chat/completions") is None  # no HTTP_PROXY


# not the SDK's own aiohttp transport ("aiohttp", used only when asked for): it sends the
# key and the URL's credentials both, which aiohttp refuses
@pytest.mark.parametrize("transport", ["httpx", pytest.param("direct", marks=_AIOHTTP)])
async def test_a_password_in_the_base_url_is_basic_auth_as_httpx_does(
    server_factory: Callable[..., FakeOpenAIServer], transport: str
) -> None:
    """Before the fix the direct path sent both (aiohttp refuses) and said 'unreadable'."""
    server = server_factory()
    url = server.base_url.replace("http://", "http://judgeuser:pw-77@")
    outcome = await evaluate(server, transport, base_url=url)
    assert outcome.status == "ok"


def test_an_encoded_reply_is_inflated_no_further_than_the_cap() -> None:
    """A gzip bomb (20 MiB of zeros in ~20 kB) is refused, not inflated whole."""
    import gzip

    from judge.client._direct import _inflate
    from judge.client._http import ReplyTooLarge

    def request() -> httpx.Request:
        return httpx.Request("POST", "http://judge.test/v1/chat/completions")

    small = gzip.compress(b'{"choices": []}')
    assert _inflate(small, "gzip", 1024, request) == b'{"choices": []}'
    bomb = gzip.compress(b"\0" * (20 * 1024 * 1024))
    assert len(bomb) < 64 * 1024
    with pytest.raises(ReplyTooLarge):
        _inflate(bomb, "gzip", 16 * 1024 * 1024, request)


async def test_judges_share_one_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CA bundle is loaded once a process, not once for every judge's client (~40 ms
    each: the service and the benchmark build many); every client still verifies."""
    from judge.client import _http

    built: list[object] = []
    real = httpx.create_ssl_context

    def counting() -> object:
        built.append(real())
        return built[-1]

    _http.default_tls.cache_clear()
    monkeypatch.setattr(httpx, "create_ssl_context", counting)
    try:
        judges = [
            LLMJudge(JudgeConfig(model="m", base_url="http://127.0.0.1:9/v1")) for _ in range(3)
        ]
        for judge in judges:
            await judge.aclose()
        clients = chat_clients(64, transport="httpx")
        assert len(built) == 1
        assert all(_http.default_tls() is built[0] for _ in clients)
        assert built[0].verify_mode == ssl.CERT_REQUIRED and built[0].check_hostname  # type: ignore[attr-defined]
        for client in clients:
            await client.aclose()
    finally:
        _http.default_tls.cache_clear()
