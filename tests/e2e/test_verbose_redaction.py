"""`judge grade -v` never logs a password written into `--base-url` (issue 20, item 12).
Before the fix httpx's INFO line and the openai SDK's DEBUG lines showed
`http://user:PASSWORD@host/v1/chat/completions`; the chat transport of issue 22 logs the URL
without its user info."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from judge.cli import main
from judge.testing import FakeOpenAIServer
from tests.helpers import case, write_jsonl

PASSWORD = "s3cret-pw%21x"  # percent-encoded in the URL: `s3cret-pw!x` once decoded


@pytest.mark.parametrize("verbosity", ["-v", "-vv"])
def test_grade_verbose_logs_no_url_password(
    tmp_path: Path,
    openai_server: FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    verbosity: str,
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    url = openai_server.base_url.replace("http://", f"http://judge-user:{PASSWORD}@")
    args = ["grade", str(source), "--rubric", "faithfulness", "-o", str(tmp_path / "o.jsonl")]
    args += ["--base-url", url, "--model", "judge-test-2024-01-01", "--no-cache"]
    with caplog.at_level(logging.DEBUG):
        assert main([verbosity, *args], env={"OPENAI_API_KEY": "sk-test-key-0123456789"}) == 0
    logged = caplog.text + capsys.readouterr().err
    assert "HTTP Request" in logged  # the lines that used to carry it are there
    for secret in (PASSWORD, "s3cret-pw!x", "sk-test-key-0123456789"):
        assert secret not in logged
    # the chat requests go through judge.client._direct, whose line names the endpoint
    # without its user and password at all (httpx's, for the SDK's other requests, would
    # show them redacted: `judge-user:***@127.0.0.1`)
    assert f"POST {openai_server.base_url}/chat/completions" in logged
