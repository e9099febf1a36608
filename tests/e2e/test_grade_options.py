"""Issue 16 items 5, 6, 7 and 10: the sample's seed is not the judge's, prices are never
guessed as zero, `--base-url` alone asks the endpoint for its model, the cache follows
XDG_CACHE_HOME and never chmods a folder it did not create, and an export with nothing
to send says so."""

from __future__ import annotations

import argparse
import json
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.app.runs import prices_from_args
from judge.cli import main
from judge.config import JudgeConfig, default_cache_dir
from judge.engine.files import summarise_file
from judge.rubric import load_rubric
from judge.testing import FakeOpenAIServer
from tests.helpers import REPO, case, read_jsonl, write_jsonl

MODEL = "judge-test-2024-01-01"
EXAMPLES = REPO / "examples" / "cases.jsonl"


def server_env(server: FakeOpenAIServer, **more: str) -> dict[str, str]:
    return {"OPENAI_BASE_URL": server.base_url, "JUDGE_MODEL": MODEL, **more}


def grade(source: Path, out: Path, *extra: str, env: dict[str, str] | None = None) -> int:
    args = ["grade", str(source), "--rubric", "faithfulness", "-o", str(out), *extra]
    return main(args, env=env or {})


# ---- item 5: --seed is the judge's, --sample-seed the sample's ----


def test_the_sample_seed_does_not_move_the_judge(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    """Before the fix `--sample 20 --seed 1` put seed 1 in the records and the requests."""
    source = write_jsonl(tmp_path / "in.jsonl", [case(f"c{i:02d}") for i in range(30)])
    env = server_env(openai_server)
    default, seeded = tmp_path / "default.jsonl", tmp_path / "seeded.jsonl"
    assert grade(source, default, "--sample", "20", "--no-cache", env=env) == 0
    assert grade(source, seeded, "--sample", "20", "--sample-seed", "1", "--no-cache",
                 env=env) == 0  # fmt: skip
    assert {r["judge"]["seed"] for r in read_jsonl(seeded)} == {42}  # the judge's default
    assert {b.get("seed") for b in openai_server.stats.bodies} == {42}
    assert [r["id"] for r in read_jsonl(seeded)] != [r["id"] for r in read_jsonl(default)]
    judged = tmp_path / "judged.jsonl"
    assert grade(source, judged, "--sample", "20", "--seed", "1", "--no-cache", env=env) == 0
    assert {r["judge"]["seed"] for r in read_jsonl(judged)} == {1}
    assert [r["id"] for r in read_jsonl(judged)] == [r["id"] for r in read_jsonl(default)]


# ---- item 6: unknown prices, --base-url alone, XDG_CACHE_HOME ----


def price_args(*values: float | None) -> argparse.Namespace:
    return argparse.Namespace(price_input=values[0], price_output=values[1])


def test_an_unknown_price_is_unknown_never_zero(
    tmp_path: Path, openai_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reported figure: $0.0000 beside 18,232 tokens, the rules judge's zero price put
    on a model judge's tokens. Tokens with no known price are `unknown`; a run that spent
    nothing costs $0."""
    out = tmp_path / "model.jsonl"
    assert grade(EXAMPLES, out, "--cache-dir", str(tmp_path / "c"),
                 env=server_env(openai_server)) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "estimated cost: unknown (pass --price-input/--price-output)" in printed
    rules_prices = prices_from_args(price_args(None, None), JudgeConfig())
    summary = summarise_file(out, load_rubric("faithfulness"), rules_prices)
    assert summary["tokens"]["prompt"] > 0 and summary["estimated_cost_usd"] is None
    assert grade(EXAMPLES, tmp_path / "rules.jsonl") == 0
    assert "estimated cost: $0.0000" in capsys.readouterr().out  # no tokens spent
    # the list price applies at OpenAI's endpoint only, not to a model name served elsewhere
    at = {"model": "gpt-4o-2024-08-06"}
    assert prices_from_args(price_args(None, None), JudgeConfig(**at)) == (2.5, 10.0)
    local = JudgeConfig(**at, base_url="http://127.0.0.1:8000/v1")
    assert prices_from_args(price_args(None, None), local) is None
    assert prices_from_args(price_args(1.0, 2.0), local) == (1.0, 2.0)


def test_one_price_flag_alone_is_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    assert grade(source, tmp_path / "o.jsonl", "--price-input", "2.5") == 2
    assert "give both --price-input and --price-output" in capsys.readouterr().err


def test_base_url_alone_grades_with_the_one_model_it_serves(
    tmp_path: Path,
    server_factory: Callable[..., FakeOpenAIServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before the fix this graded with the rules judge, without a word."""
    server = server_factory(model="qwen2.5-7b-instruct")
    out = tmp_path / "o.jsonl"
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    assert grade(source, out, "--base-url", server.base_url, "--no-cache") == 0
    assert read_jsonl(out)[0]["judge"]["model"] == "qwen2.5-7b-instruct"
    assert server.stats.requests_by_path["/v1/models"] == 1
    assert server.stats.bodies[0]["model"] == "qwen2.5-7b-instruct"
    assert "serves one model: grading with 'qwen2.5-7b-instruct'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("served", "says"),
    [
        (["llama-3-8b", "qwen2.5-7b"], "serves 2 models (llama-3-8b, qwen2.5-7b); pick one"),
        ([], "lists no model at /models; pass --model"),
    ],
)
def test_base_url_serving_several_or_no_models_is_usage(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    server_factory: Callable[..., FakeOpenAIServer],
    served: list[str],
    says: str,
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    server = server_factory(served_models=served)
    code = grade(source, tmp_path / "o.jsonl", "--base-url", server.base_url)
    assert server.stats.requests_by_path == {"/v1/models": 1}  # asked, nothing graded
    assert code == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()


def test_the_default_cache_follows_xdg_cache_home(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    assert default_cache_dir({"XDG_CACHE_HOME": "/srv/cache"}) == Path("/srv/cache/llm-judge")
    home = default_cache_dir({})
    assert default_cache_dir({"XDG_CACHE_HOME": "relative/dir"}) == home  # XDG: ignored
    assert home.parts[-2:] == (".cache", "llm-judge")
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    xdg = tmp_path / "xdg"
    env = server_env(openai_server, XDG_CACHE_HOME=str(xdg))
    assert grade(source, tmp_path / "o.jsonl", env=env) == 0
    assert (xdg / "llm-judge").is_dir() and any((xdg / "llm-judge").iterdir())


# ---- item 10: a cache folder that exists is not ours to chmod ----


def test_an_existing_cache_dir_keeps_its_mode(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    """Before the fix, --cache-dir on an existing folder chmodded it to 0700."""
    existing = tmp_path / "existing"
    existing.mkdir()
    existing.chmod(0o755)
    fresh = tmp_path / "fresh" / "cache"
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    env = server_env(openai_server)
    assert grade(source, tmp_path / "1.jsonl", "--cache-dir", str(existing), env=env) == 0
    assert stat.S_IMODE(existing.stat().st_mode) == 0o755
    assert grade(source, tmp_path / "2.jsonl", "--cache-dir", str(fresh), env=env) == 0
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700  # the one we made is private


def test_a_cache_dir_that_is_a_file_is_usage(
    tmp_path: Path, openai_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    (tmp_path / "file").write_text("x")
    args = ("--cache-dir", str(tmp_path / "file"))
    assert grade(source, tmp_path / "o.jsonl", *args, env=server_env(openai_server)) == 2
    assert "is not a folder" in capsys.readouterr().err


# ---- item 7: an export with nothing to send ----


def test_export_when_every_case_is_cached_says_so_and_points_at_no_cache(
    tmp_path: Path, openai_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a"), case("b", answer="No.")])
    cache = ("--cache-dir", str(tmp_path / "cache"))
    env = server_env(openai_server)
    assert grade(source, tmp_path / "o.jsonl", *cache, env=env) == 0
    requests = tmp_path / "requests.jsonl"
    capsys.readouterr()
    assert grade(source, tmp_path / "x.jsonl", *cache, "--export-batch", str(requests),
                 env=env) == 0  # fmt: skip
    captured = capsys.readouterr()
    assert not requests.exists() and captured.out == ""
    assert "nothing to export: all 2 selected case(s) are answered from the cache" in captured.err
    assert "--no-cache exports every case" in captured.err
    # a request file from an earlier export is named as stale, not silently left to be sent
    requests.write_text(
        json.dumps(
            {"custom_id": "old", "method": "POST", "url": "/v1/chat/completions", "body": {}}
        )
        + "\n"
    )
    assert grade(source, tmp_path / "x.jsonl", *cache, "--export-batch", str(requests),
                 env=env) == 0  # fmt: skip
    assert f"{requests} is left as it was, from an earlier export" in capsys.readouterr().err
    assert grade(source, tmp_path / "x.jsonl", *cache, "--export-batch", str(requests),
                 "--no-cache", env=env) == 0  # fmt: skip
    assert len(requests.read_text().splitlines()) == 2
