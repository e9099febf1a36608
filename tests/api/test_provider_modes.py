"""README's notes on Anthropic's and Google's OpenAI-compatible endpoints, checked through
the test server standing in for each: Google's refuses a JSON schema it cannot take (auto
falls back to json_object), Anthropic's ignores response_format (so the README says to use
--output-mode prompt, which sends none)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from judge.cli import main
from judge.testing import FakeOpenAIServer
from tests.helpers import REPO, read_jsonl

CASES = REPO / "examples" / "cases.jsonl"


def grade(server: FakeOpenAIServer, out: Path, *flags: str) -> list[dict]:
    args = ["grade", str(CASES), "--rubric", "faithfulness", "-o", str(out), "--no-cache"]
    args += ["--model", "m-2024-01-01", "--base-url", server.base_url, "--limit", "5", *flags]
    assert main(args, env={"OPENAI_API_KEY": "sk-test"}) == 0
    return read_jsonl(out)


def test_a_refused_schema_falls_back_to_json_object_as_on_googles_endpoint(
    server_factory: Callable[..., FakeOpenAIServer], tmp_path: Path
) -> None:
    server = server_factory(reject_response_format={"json_schema"})
    records = grade(server, tmp_path / "g.jsonl", "--output-mode", "auto")
    assert {r["status"] for r in records} == {"ok"}
    assert server.stats.requests_by_mode["json_object"] == 5


def test_prompt_mode_sends_no_response_format_as_anthropics_endpoint_needs(
    server_factory: Callable[..., FakeOpenAIServer], tmp_path: Path
) -> None:
    server = server_factory(reject_response_format={"json_schema", "json_object"})
    records = grade(server, tmp_path / "a.jsonl", "--output-mode", "prompt")
    assert {r["status"] for r in records} == {"ok"}
    assert dict(server.stats.requests_by_mode) == {"prompt": 5}
    assert {r["judge"]["output_mode"] for r in records} == {"prompt"}
