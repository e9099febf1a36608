"""Which key reaches which juror, and what a juror's 401 says (issue 33, defects 2 and 9).

A juror is sent only the key its `api_key_env` names. With no `api_key_env`, it is sent
`$OPENAI_API_KEY` only when its endpoint is OpenAI's own (https to api.openai.com); a
juror at any other host gets no key, so one provider's key never reaches another's server.
Each test server records the Authorization header of every request. A juror's 401 names
that juror, its base_url and its api_key_env, never api.openai.com or OPENAI_API_KEY."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from pydantic import SecretStr

from judge.cli import main
from judge.config import JudgeConfig, is_openai
from judge.errors import UsageError
from judge.jury.config import Juror, juror_config
from judge.service.config import load_service_config
from judge.testing import FakeOpenAIServer
from tests.helpers import case, write_jsonl
from tests.test_service_support import InProcessService

# a jury end to end against juror servers (.ci/slow runs it)
pytestmark = pytest.mark.slow

OPENAI_KEY = "sk-openai-key-0123456789"
OTHER_KEY = "sk-other-provider-abcdef"
JUROR_KEY = "sk-juror-own-9876543210"
ENV = {"OPENAI_API_KEY": OPENAI_KEY, "OTHER_KEY": OTHER_KEY, "JUROR_KEY": JUROR_KEY}


def write_jury(path: Path, jurors: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"jurors": jurors}), "utf-8")
    return path


def grade(tmp_path: Path, jury: Path, env: dict[str, str], *extra: str) -> int:
    cases = write_jsonl(tmp_path / "in.jsonl", [case("c1"), case("c2")])
    args = ["grade", str(cases), "--rubric", "faithfulness", "--jury", str(jury)]
    args += ["-o", str(tmp_path / "out"), "--no-cache", "--overwrite", *extra]
    return main(args, env=env)


def keys_seen(server: FakeOpenAIServer) -> set[str]:
    return set(server.stats.authorizations)


def test_each_juror_gets_only_its_own_key(tmp_path: Path, server_factory: Any) -> None:
    # the README's shape: one juror with no api_key_env at a plain-HTTP host, one naming its key
    unnamed, named = server_factory(), server_factory()
    jury = write_jury(
        tmp_path / "jury.yaml",
        [
            {"name": "vllm", "model": unnamed.model, "base_url": unnamed.base_url},
            {
                "name": "own",
                "model": named.model,
                "base_url": named.base_url,
                "api_key_env": "JUROR_KEY",
            },
        ],
    )
    assert grade(tmp_path, jury, ENV) == 0
    for seen in (keys_seen(unnamed), keys_seen(named)):
        assert not any(OPENAI_KEY in s or OTHER_KEY in s for s in seen), seen
    assert keys_seen(named) == {f"Bearer {JUROR_KEY}"}
    assert not any(JUROR_KEY in s for s in keys_seen(unnamed))


def test_a_juror_inheriting_the_command_lines_endpoint_gets_no_unnamed_key(
    tmp_path: Path, server_factory: Any
) -> None:
    server = server_factory()
    jurors = [{"name": n, "model": server.model} for n in ("a", "b")]
    jury = write_jury(tmp_path / "jury.yaml", jurors)
    assert grade(tmp_path, jury, {**ENV, "OPENAI_BASE_URL": server.base_url}) == 0
    assert not any(OPENAI_KEY in s for s in keys_seen(server))


@pytest.mark.parametrize(
    ("base_url", "sent"),
    [
        (None, True),  # the SDK's default: OpenAI's
        ("https://api.openai.com/v1", True),
        ("https://API.openai.com:443/v1/", True),
        ("http://api.openai.com/v1", False),  # plain HTTP: not over the wire in clear
        ("https://api.openai.com.evil.example/v1", False),
        ("https://api.openai.com:8443/v1", False),
        ("http://vllm:8000/v1", False),
        ("https://litellm/v1", False),
    ],
)
def test_the_unnamed_key_goes_to_openai_only(base_url: str | None, sent: bool) -> None:
    base = JudgeConfig(model="m", api_key=SecretStr(OPENAI_KEY))
    config = juror_config(Juror(name="j", model="m", base_url=base_url), base, ENV)
    assert is_openai(base_url) is sent
    assert (config.api_key is not None and config.api_key.get_secret_value() == OPENAI_KEY) is sent


def test_a_named_key_is_the_only_key() -> None:
    base = JudgeConfig(model="m", api_key=SecretStr(OPENAI_KEY))
    juror = Juror(
        name="j", model="m", base_url="https://api.openai.com/v1", api_key_env="OTHER_KEY"
    )
    config = juror_config(juror, base, ENV)
    assert config.api_key is not None and config.api_key.get_secret_value() == OTHER_KEY
    with pytest.raises(UsageError, match=r"juror 'j': \$OTHER_KEY is not set"):
        juror_config(juror, base, {"OPENAI_API_KEY": OPENAI_KEY})


def test_a_jurors_401_names_the_juror_its_base_url_and_key_variable(
    tmp_path: Path, server_factory: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    good, locked = server_factory(), server_factory(api_key="the-right-key")
    jury = write_jury(
        tmp_path / "jury.yaml",
        [
            {"name": "good", "model": good.model, "base_url": good.base_url},
            {
                "name": "locked",
                "model": locked.model,
                "base_url": locked.base_url,
                "api_key_env": "JUROR_KEY",
            },
        ],
    )
    assert grade(tmp_path, jury, ENV) == 1
    err = capsys.readouterr().err
    assert "juror 'locked'" in err and locked.base_url in err and "$JUROR_KEY" in err
    assert "api.openai.com" not in err and "OPENAI_API_KEY" not in err
    assert JUROR_KEY not in err


def test_a_keyless_jurors_401_says_no_key_was_sent(
    tmp_path: Path, server_factory: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    good, locked = server_factory(), server_factory(api_key="the-right-key")
    jury = write_jury(
        tmp_path / "jury.yaml",
        [
            {"name": "good", "model": good.model, "base_url": good.base_url},
            {"name": "keyless", "model": locked.model, "base_url": locked.base_url},
        ],
    )
    assert grade(tmp_path, jury, ENV) == 1
    err = capsys.readouterr().err
    assert "juror 'keyless'" in err and locked.base_url in err and "no key was sent" in err
    assert "api.openai.com" not in err and OPENAI_KEY not in err


def test_the_service_sends_a_juror_its_own_key_only(tmp_path: Path, server_factory: Any) -> None:
    unnamed, named = server_factory(), server_factory()
    jury = write_jury(
        tmp_path / "jury.yaml",
        [
            {"name": "a", "model": unnamed.model, "base_url": unnamed.base_url},
            {
                "name": "b",
                "model": named.model,
                "base_url": named.base_url,
                "api_key_env": "JUROR_KEY",
            },
        ],
    )
    path = tmp_path / "service.yaml"
    config = {"judges": {"panel": {"jury": jury.name}}, "data_dir": str(tmp_path / "data")}
    path.write_text(yaml.safe_dump(config), "utf-8")
    service = load_service_config(path, ENV)
    with InProcessService(service) as running, httpx.Client(base_url=running.base_url) as api:
        response = api.post("/v1/grade", json={"rubric": "faithfulness", "cases": [case("c1")]})
        assert response.status_code == 200, response.text
    assert not any(OPENAI_KEY in s or JUROR_KEY in s for s in keys_seen(unnamed))
    assert keys_seen(named) == {f"Bearer {JUROR_KEY}"}
