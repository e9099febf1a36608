"""Messages that lead somewhere (issue 37): the advice of a cut-off reply, a larger
`--max-tokens`, is a rerun that works (the failed cases asked again, nothing refused);
a resume refused for a real difference names only that difference (an output mode `auto`
that resolved to `json_schema` is none) and prints the one command to run, which works.
Against the loopback test server, which cuts off every reply to a request whose
`max_tokens` is under 100 (finish_reason "length")."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.cli import main
from judge.testing import FakeOpenAIServer
from judge.testing.server import ChatRequest, Reply
from tests.helpers import REPO, read_jsonl

ENOUGH = 100


def cut_off_when_short(chat: ChatRequest) -> Reply:
    if chat.body.get("max_tokens", 0) < ENOUGH:
        return Reply(content='{"rationale": "the answer', finish_reason="length")
    return Reply()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=cut_off_when_short, model="smollm2") as s:
        yield s


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    lines = (REPO / "examples" / "cases.jsonl").read_text().splitlines()[:3]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def run(args: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "OPENAI_API_KEY": "sk-test"}
    code = main([str(a) for a in args], env=env)
    return code, capsys.readouterr().err


def command_in(err: str) -> list[str]:
    """The arguments of the one command the error says to run."""
    line = next(x for x in err.splitlines() if x.startswith("judge: to run it: judge "))
    return shlex.split(line.removeprefix("judge: to run it: judge "))


def test_raising_max_tokens_as_advised_reruns_the_cut_off_cases(
    server: FakeOpenAIServer, cases: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    grade = ["grade", cases, "--rubric", "relevance", "--model", server.model]
    grade += ["--base-url", server.base_url, "-o", out]
    code, err = run([*grade, "--max-tokens", "20"], tmp_path, capsys)
    assert code == 1
    assert "hit max_tokens 20" in err and "rerun with a larger --max-tokens" in err
    assert "not pinned" not in err  # a loopback server: pinning means nothing there
    code, err = run([*grade, "--max-tokens", "200"], tmp_path, capsys)
    assert code == 0, err
    records = read_jsonl(out)
    assert [r["status"] for r in records] == ["ok"] * 3
    assert {r["judge"]["max_tokens"] for r in records} == {200}
    assert server.stats.requests == 6


def test_a_refused_resume_names_only_real_differences_and_the_command(
    server: FakeOpenAIServer, cases: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    grade = ["grade", cases, "--rubric", "relevance", "--model", server.model]
    grade += ["--base-url", server.base_url, "-o", out, "--max-tokens", "200"]
    assert run(grade, tmp_path, capsys)[0] == 0
    assert {r["judge"]["output_mode"] for r in read_jsonl(out)} == {"json_schema"}
    code, err = run([*grade, "--temperature", "0.5"], tmp_path, capsys)
    assert code == 2
    assert "temperature 0.0 -> 0.5" in err
    assert "output_mode" not in err and "judge_id" not in err  # auto resolved: no difference
    again = command_in(err)
    assert again[-1] == "--overwrite"
    code, err = run(again, tmp_path, capsys)
    assert code == 0, err
    assert {r["judge"]["temperature"] for r in read_jsonl(out)} == {0.5}


def test_a_jury_rerun_with_more_tokens_is_told_to_retry_failed(
    server: FakeOpenAIServer, cases: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jurors = [{"name": n, "model": server.model, "base_url": server.base_url} for n in "ab"]
    jury = tmp_path / "jury.yaml"
    jury.write_text(yaml.safe_dump({"jurors": jurors}), "utf-8")
    out = tmp_path / "panel"
    grade = ["grade", cases, "--rubric", "relevance", "--jury", jury, "-o", out]
    code, _ = run([*grade, "--max-tokens", "20"], tmp_path, capsys)
    assert code == 1
    code, err = run([*grade, "--max-tokens", "200"], tmp_path, capsys)
    assert code == 2 and "max_tokens 20 -> 200" in err
    again = command_in(err)
    assert again[-1] == "--retry-failed"
    code, err = run(again, tmp_path, capsys)
    assert code == 0, err
    panel = [json.loads(line) for line in (out / "relevance.jsonl").read_text().splitlines()]
    assert [r["status"] for r in panel] == ["ok"] * 3
