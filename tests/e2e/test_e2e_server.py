"""End to end against a real OpenAI-compatible server on 127.0.0.1: provenance, cache,
fatal errors, secrets, and a run killed with SIGKILL then resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.rubric import DEFAULT_RUBRICS_DIR, load_rubric
from judge.testing import FakeOpenAIServer, Reply
from tests.helpers import REPO, StallAfter, case, pair, read_jsonl, wait_for_lines, write_jsonl

SECRET = "sk-live-SECRET-4f9a2b7c1d"
ANSWERED_BEFORE_KILL = 12
CONCURRENCY = 4


def env_for(server: FakeOpenAIServer) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": SECRET,
        "JUDGE_MODEL": "judge-test-2024-01-01",
    }


def grade(
    server: FakeOpenAIServer,
    source: Path,
    out: Path,
    cache: Path,
    *extra: str,
    rubric: str = "faithfulness",
) -> int:
    args = [
        "grade",
        str(source),
        "--rubric",
        rubric,
        "-o",
        str(out),
        "--cache-dir",
        str(cache),
        *extra,
    ]
    return main(args, env=env_for(server))


@pytest.mark.parametrize(
    ("rubric", "rows"),
    [
        ("faithfulness", [case("f1"), case("f2", answer="The trial lasts 40 days.")]),
        ("relevance", [case("r1")]),
        ("pairwise", [pair("p1")]),
    ],
)
def test_verdicts_become_records_with_full_provenance(
    openai_server: FakeOpenAIServer, tmp_path: Path, rubric: str, rows: list[dict[str, object]]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    assert grade(openai_server, source, out, tmp_path / "cache", rubric=rubric) == 0
    loaded = load_rubric(rubric)
    records = read_jsonl(out)
    assert [r["id"] for r in records] == [r["id"] for r in rows]
    for record in records:
        assert record["status"] == "ok"
        assert (record["rubric"], record["rubric_version"], record["rubric_sha256"]) == (
            rubric,
            1,
            loaded.sha256,
        )
        assert record["judge"] == {
            "model": "judge-test-2024-01-01",
            "temperature": 0.0,
            "seed": 42,
            "max_tokens": 1024,
            "output_mode": "json_schema",
            "system_fingerprint": "fp_test",
        }
        assert record["usage"]["prompt_tokens"] > 0 and record["usage"]["completion_tokens"] > 0
        assert record["cached"] is False and record["score"] is not None
    assert openai_server.stats.requests == len(rows)


def test_cache_hits_and_every_key_part_misses(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    rows = [case("a"), case("b", answer="The free trial lasts 14 days.")]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    cache = tmp_path / "cache"
    out = tmp_path / "out.jsonl"
    assert grade(openai_server, source, out, cache) == 0
    assert openai_server.stats.requests == 2

    def requests_for(
        *extra: str, rows_=rows, env_change: Callable[[dict[str, str]], None] | None = None
    ) -> int:
        openai_server.reset_stats()
        src = write_jsonl(tmp_path / "again.jsonl", rows_)
        args = [
            "grade",
            str(src),
            "--rubric",
            extra[0],
            "-o",
            str(tmp_path / "again.out.jsonl"),
            "--cache-dir",
            str(cache),
            "--overwrite",
            *extra[1:],
        ]
        env = env_for(openai_server)
        if env_change:
            env_change(env)
        assert main(args, env=env) == 0
        return openai_server.stats.requests

    assert requests_for("faithfulness") == 0  # identical: all from the cache
    assert all(r["cached"] for r in read_jsonl(tmp_path / "again.out.jsonl"))
    changed = [case("a"), case("b", answer="The free trial lasts 14 days!")]
    assert requests_for("faithfulness", rows_=changed) == 1  # one character of one answer
    assert requests_for("faithfulness", "--temperature", "0.2") == 2
    assert (
        requests_for(
            "faithfulness", env_change=lambda e: e.update(JUDGE_MODEL="judge-test-2024-02-02")
        )
        == 2
    )
    assert requests_for("faithfulness", "--model", "judge-test-2024-01-01", "--seed", "7") == 2
    # a new rubric version is a different question (a user's rubric: built-in ids are theirs)
    rubrics = tmp_path / "rubrics"
    (rubrics / "faith").mkdir(parents=True)
    text = (DEFAULT_RUBRICS_DIR / "faithfulness" / "v1.yaml").read_text()
    text = text.replace("id: faithfulness", "id: faith")
    (rubrics / "faith" / "v1.yaml").write_text(text)
    (rubrics / "faith" / "v2.yaml").write_text(text.replace("version: 1", "version: 2"))
    in_folder = {"env_change": lambda e: e.update(JUDGE_RUBRICS_DIR=str(rubrics))}
    assert requests_for("faith@1", **in_folder) == 2
    assert requests_for("faith@2", **in_folder) == 2
    assert requests_for("faith@1", **in_folder) == 0
    # --no-cache reads nothing
    assert requests_for("faithfulness", "--no-cache") == 2


def test_failures_are_not_cached(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    openai_server.script(Reply(content="{broken"), Reply(content="{still broken"))
    # every case failed: exit 1 since issue 16 (was 0); the record is kept
    assert (
        grade(openai_server, source, tmp_path / "o.jsonl", tmp_path / "cache", "--concurrency", "1")
        == 1
    )
    assert read_jsonl(tmp_path / "o.jsonl")[0]["status"] == "parse_error"
    openai_server.reset_stats()
    assert grade(openai_server, source, tmp_path / "o.jsonl", tmp_path / "cache") == 0
    assert openai_server.stats.requests == 1
    assert read_jsonl(tmp_path / "o.jsonl")[0]["status"] == "ok"


def test_401_is_fatal_exit_1_and_sends_nothing_more(
    openai_server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case(f"c{i}") for i in range(40)])
    body = {
        "error": {
            "message": f"Incorrect API key provided: {SECRET}",
            "type": "invalid_request_error",
        }
    }
    openai_server.script(*[Reply(status=401, error_body=body)] * 40)
    code = grade(
        openai_server, source, tmp_path / "o.jsonl", tmp_path / "cache", "--concurrency", "2"
    )
    assert code == 1
    assert openai_server.stats.requests <= 2  # only what was already in flight
    err = capsys.readouterr().err
    assert "authentication failed" in err and SECRET not in err


def test_no_api_key_is_written_anywhere(
    server_factory: Callable[..., FakeOpenAIServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("DEBUG")
    openai_server = server_factory(api_key=SECRET)  # answers 401 unless the key is sent
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    cache = tmp_path / "cache"
    openai_server.script(Reply(status=429, headers={"Retry-After": "0"}))
    out, summary = tmp_path / "o.jsonl", tmp_path / "s.json"
    assert grade(openai_server, source, out, cache, "--summary", str(summary)) == 0
    assert openai_server.stats.requests == 2 and read_jsonl(out)[0]["status"] == "ok"
    files = [out, summary, *[p for p in cache.rglob("*") if p.is_file()]]
    assert len(files) > 2
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err + caplog.text
    # the key did travel (the server checked it), in the Authorization header only
    assert openai_server.stats.bodies and SECRET not in str(list(openai_server.stats.bodies))


def test_cache_folder_is_private(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    assert grade(openai_server, source, tmp_path / "o.jsonl", tmp_path / "cache") == 0
    assert (tmp_path / "cache").stat().st_mode & 0o077 == 0


@pytest.mark.slow
def test_sigkill_mid_run_then_resume(
    server_factory: Callable[..., FakeOpenAIServer], tmp_path: Path
) -> None:
    stall = StallAfter(ANSWERED_BEFORE_KILL)  # the kill lands after exactly these answers
    server = server_factory(responder=stall)
    ids = [f"k{i:03d}" for i in range(60)]
    source = write_jsonl(
        tmp_path / "in.jsonl",
        [case(i, answer=f"The free trial lasts 14 days. Case {i}.") for i in ids],
    )
    out = tmp_path / "out.jsonl"
    command = [
        sys.executable,
        "-m",
        "judge.cli",
        "grade",
        str(source),
        "--rubric",
        "faithfulness",
        "-o",
        str(out),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--concurrency",
        str(CONCURRENCY),
    ]
    env = {**os.environ, **env_for(server), "PYTHONPATH": str(REPO)}
    env.pop("CI", None)
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for_lines(out, stall.at_least(CONCURRENCY), process)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    written = out.read_text().count("\n")
    assert stall.at_least(CONCURRENCY) <= written <= ANSWERED_BEFORE_KILL  # the rest were held
    first_requests = server.stats.requests
    assert first_requests <= ANSWERED_BEFORE_KILL + CONCURRENCY  # at most the held ones more
    stall.release()
    resumed = subprocess.run(command, env=env, capture_output=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr.decode()
    records = read_jsonl(out)
    assert [r["id"] for r in records] == ids
    assert all(r["status"] == "ok" for r in records)
    # the second run re-sent at most what was in flight when the first one died
    assert server.stats.requests - len(ids) <= CONCURRENCY, (first_requests, server.stats.requests)


def test_no_cache_neither_reads_nor_writes(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    cache = tmp_path / "cache"
    assert grade(openai_server, source, tmp_path / "o1.jsonl", cache, "--no-cache") == 0
    assert grade(openai_server, source, tmp_path / "o2.jsonl", cache) == 0
    assert openai_server.stats.requests == 2  # the first run left nothing in the cache
