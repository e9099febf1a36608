"""Issue 16 items 1 and 3: a resumed run keeps only verdicts of the same rubric file and the
same judge (model, endpoint, settings), and the cache key carries the endpoint."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import JudgeConfig, endpoint_of
from judge.engine.cache import cache_key
from judge.engine.model import model_identity
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.testing import FakeOpenAIServer
from tests.helpers import REPO, case, read_jsonl, write_jsonl

EXAMPLES = REPO / "examples" / "cases.jsonl"
MODEL = "gpt-4o-2024-08-06"


def model_env(server: FakeOpenAIServer) -> dict[str, str]:
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}


def grade(source: Path, out: Path, *extra: str, env: dict[str, str] | None = None) -> int:
    args = ["grade", str(source), "--rubric", "faithfulness", "-o", str(out), *extra]
    return main(args, env=env or {})


@pytest.fixture
def model_server(server_factory: Callable[..., FakeOpenAIServer]) -> FakeOpenAIServer:
    return server_factory(model=MODEL)


@pytest.fixture
def model_graded(tmp_path: Path, model_server: FakeOpenAIServer) -> Path:
    """The README's example set graded by a model judge on a loopback server: 43 records."""
    out = tmp_path / "model-graded.jsonl"
    extra = ("--model", MODEL, "--cache-dir", str(tmp_path / "cache"))
    assert grade(EXAMPLES, out, *extra, env=model_env(model_server)) == 0
    assert len(read_jsonl(out)) == 43
    return out


def test_the_rules_judge_does_not_resume_a_model_judges_file(
    model_graded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mix = tmp_path / "mix.jsonl"
    shutil.copy(model_graded, mix)
    before = mix.read_bytes()
    capsys.readouterr()
    assert grade(EXAMPLES, mix) == 2  # before the fix: 0, keeping all 43 model records
    err = capsys.readouterr().err
    assert mix.read_bytes() == before
    assert "43 record(s) from another judge" in err and repr(MODEL) in err
    assert "the rules judge" in err and "--overwrite" in err and "-o another file" in err
    assert grade(EXAMPLES, mix, "--overwrite") == 0
    assert {r["judge"]["model"] for r in read_jsonl(mix)} == {"rules"}


def test_another_model_or_setting_or_endpoint_does_not_resume(
    model_graded: Path, tmp_path: Path, server_factory: Callable[..., FakeOpenAIServer]
) -> None:
    server = server_factory(model=MODEL)  # the same model name at another address
    cache = ("--cache-dir", str(tmp_path / "cache"))
    before = model_graded.read_bytes()
    other = server_factory(model="judge-other-2024-01-01")
    assert grade(EXAMPLES, model_graded, "--model", "judge-other-2024-01-01", *cache,
                 env=model_env(other)) == 2  # fmt: skip
    assert grade(EXAMPLES, model_graded, "--model", MODEL, "--seed", "7", *cache,
                 env=model_env(server)) == 2  # fmt: skip
    # the same model name on another server is another judge
    assert grade(EXAMPLES, model_graded, "--model", MODEL, *cache, env=model_env(server)) == 2
    assert model_graded.read_bytes() == before
    assert server.stats.requests == other.stats.requests == 0


def test_the_same_judge_resumes(model_graded: Path, model_server: FakeOpenAIServer) -> None:
    """Same model, settings and endpoint: the records are kept, the rest graded."""
    lines = model_graded.read_text().splitlines(keepends=True)
    model_graded.write_text("".join(lines[:20]))  # as if killed after 20 records
    model_server.reset_stats()
    args = ("--model", MODEL, "--no-cache")
    assert grade(EXAMPLES, model_graded, *args, env=model_env(model_server)) == 0
    assert model_server.stats.requests == 23
    assert [r["id"] for r in read_jsonl(model_graded)] == [json.loads(x)["id"] for x in lines]


def test_a_different_rubric_is_refused_and_the_file_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rules.jsonl"
    assert grade(EXAMPLES, out) == 0
    before = out.read_bytes()
    args = ["grade", str(EXAMPLES), "--rubric", "relevance", "-o", str(out)]
    assert main(args, env={}) == 2  # before the fix: 0, every record replaced
    assert out.read_bytes() == before
    assert "another rubric file (faithfulness@1" in capsys.readouterr().err


def test_records_without_a_judge_id_are_a_mismatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "old.jsonl"
    assert grade(EXAMPLES, out) == 0
    old = [{k: v for k, v in r.items() if k != "judge_id"} for r in read_jsonl(out)]
    out.write_text("".join(json.dumps(r) + "\n" for r in old))
    before = out.read_bytes()
    assert grade(EXAMPLES, out) == 2
    assert out.read_bytes() == before
    assert "without a judge_id (written by an older llm-judge)" in capsys.readouterr().err


def test_rules_resume_keeps_the_rules_records(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case(f"c{i}") for i in range(5)])
    out = tmp_path / "out.jsonl"
    assert grade(source, out) == 0
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:3]))
    assert grade(source, out) == 0
    again = out.read_text().splitlines(keepends=True)
    assert again[:3] == lines[:3]  # kept whole, their graded_at included
    # the two graded again are the same records, stamped when they were graded again
    unstamped = [{k: v for k, v in json.loads(line).items() if k != "graded_at"} for line in again]
    assert unstamped == [
        {k: v for k, v in json.loads(line).items() if k != "graded_at"} for line in lines
    ]


def test_batch_import_refuses_another_judges_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rules.jsonl"
    assert grade(EXAMPLES, out) == 0
    before = out.read_bytes()
    results = tmp_path / "results.jsonl"
    results.write_text("")
    args = ("--model", MODEL, "--import-batch", str(results), "--no-cache")
    assert grade(EXAMPLES, out, *args) == 2
    assert out.read_bytes() == before
    assert "from another judge" in capsys.readouterr().err


# ---- item 3: the endpoint is part of the judge identity and the cache key ----


def test_endpoint_normal_form_never_holds_credentials() -> None:
    assert endpoint_of(None) == "https://api.openai.com:443/v1"
    assert endpoint_of("https://api.openai.com/v1/") == endpoint_of(None)
    assert endpoint_of("HTTP://User:Secret@LocalHost:8000/v1?x=1") == "http://localhost:8000/v1"
    assert endpoint_of("http://[::1]:9/v1") == "http://[::1]:9/v1"


def test_cache_key_differs_by_endpoint_and_never_by_key() -> None:
    rubric = load_rubric("faithfulness")
    one = Case(**case("a"))

    def key(**options: object) -> str:
        return cache_key(rubric, model_identity(JudgeConfig(model=MODEL, **options)), one)

    openai = key()
    assert key(base_url="https://api.openai.com/v1") == openai
    assert key(base_url="http://127.0.0.1:8000/v1") != openai
    assert key(base_url="http://127.0.0.1:8001/v1") != key(base_url="http://127.0.0.1:8000/v1")
    assert key(api_key="sk-one") == key(api_key="sk-two") == openai


def test_a_cached_verdict_from_one_server_is_not_served_for_another(
    tmp_path: Path, server_factory: Callable[..., FakeOpenAIServer]
) -> None:
    """Before the fix, a loopback server's verdicts under a model name were served later
    for that model name at another endpoint (the reported case: OpenAI's)."""
    source = write_jsonl(tmp_path / "in.jsonl", [case("a"), case("b")])
    cache = ("--cache-dir", str(tmp_path / "cache"), "--model", MODEL)
    first, second = server_factory(model=MODEL), server_factory(model=MODEL)
    assert grade(source, tmp_path / "1.jsonl", *cache, env=model_env(first)) == 0
    assert grade(source, tmp_path / "2.jsonl", *cache, env=model_env(second)) == 0
    assert second.stats.requests == 2
    assert not any(r["cached"] for r in read_jsonl(tmp_path / "2.jsonl"))
    assert grade(source, tmp_path / "3.jsonl", *cache, env=model_env(first)) == 0
    assert all(r["cached"] for r in read_jsonl(tmp_path / "3.jsonl"))
