"""Verdicts planted in a shared cache folder are not trusted (issue 33, defect 3).

Every entry carries an HMAC-SHA256 of its cache key and record under a secret kept outside
the folder (`$JUDGE_CACHE_KEY`, else the user's own `~/.config/llm-judge/cache.key`, made
0600 on first use). A rewritten score, an entry re-signed under another secret, a genuine
entry moved to another case's key, or an unsigned entry of the older format, is a miss:
graded again, counted and logged. A genuine entry is a hit; users who share a secret share
hits. The replicas' cache in PostgreSQL (`PostgresVerdictCache`) applies the same check."""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import diskcache
import pytest

from judge.cli import main
from judge.engine.cache import VerdictCache, entry_mac
from judge.engine.cache_secret import cache_key_file, load_cache_secret
from judge.errors import UsageError
from judge.testing import FakeOpenAIServer
from tests.helpers import case, read_jsonl, write_jsonl

MODEL = "judge-test-2024-01-01"
SHARED = "team-secret-0123456789abcdef"


def grade(source: Path, out: Path, cache: Path, server: FakeOpenAIServer) -> int:
    env = {"OPENAI_BASE_URL": server.base_url, "JUDGE_MODEL": MODEL}
    args = ["grade", str(source), "--rubric", "faithfulness", "-o", str(out), "--overwrite"]
    return main([*args, "--cache-dir", str(cache)], env=env)


def rewrite(cache: Path, change: Any) -> int:
    """Apply `change(key, entry) -> entry` to every raw row (as someone with write access
    to the folder would), returning how many rows."""
    with diskcache.Cache(str(cache)) as raw:
        keys = [k for k in raw.iterkeys() if isinstance(k, str)]
        for key in keys:
            raw.set(key, json.dumps(change(key, json.loads(raw.get(key)))).encode())
    return len(keys)


def faithful_score(key: str, entry: dict[str, Any]) -> dict[str, Any]:
    """The forger's edit: every claim supported, score 1.0, MAC left as it was."""
    record = json.loads(entry["record"])
    for claim in record["verdict"]["claims"]:
        claim["verdict"] = "supported"
    record.update(score=1.0, label="faithful")
    return {**entry, "record": json.dumps(record, separators=(",", ":"))}


def resigned(secret: bytes) -> Any:
    def change(key: str, entry: dict[str, Any]) -> dict[str, Any]:
        edited = faithful_score(key, entry)
        return {**edited, "mac": entry_mac(secret, key, edited["record"].encode())}

    return change


def unsigned(key: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": "llm-judge-verdict/1",
        "record": json.loads(faithful_score(key, entry)["record"]),
    }


@pytest.fixture
def source(tmp_path: Path) -> Path:
    unfaithful = "The free trial lasts 90 days and costs 500 dollars."
    return write_jsonl(
        tmp_path / "in.jsonl", [case(f"c{i}", answer=unfaithful + f" ({i})") for i in range(3)]
    )


@pytest.mark.parametrize(
    "change",
    [faithful_score, resigned(b"someone else's secret 123456"), unsigned],
    ids=["rewritten-score", "re-signed-with-another-key", "unsigned-old-format"],
)
def test_a_planted_verdict_is_a_counted_miss(
    tmp_path: Path,
    source: Path,
    openai_server: FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
    change: Any,
) -> None:
    cache = tmp_path / "cache"
    assert grade(source, tmp_path / "first.jsonl", cache, openai_server) == 0
    first = read_jsonl(tmp_path / "first.jsonl")
    assert all(r["score"] < 1.0 for r in first)
    sent = openai_server.stats.requests
    assert rewrite(cache, change) == 3

    with caplog.at_level(logging.WARNING):
        assert grade(source, tmp_path / "second.jsonl", cache, openai_server) == 0
    second = read_jsonl(tmp_path / "second.jsonl")
    assert [r["cached"] for r in second] == [False] * 3  # no planted verdict came back
    assert [r["score"] for r in second] == [r["score"] for r in first]
    assert openai_server.stats.requests == 2 * sent  # graded again
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "does not vouch for" in said and "3 entries refused as not authentic" in said

    # the regraded entries are genuine again: a hit each
    assert grade(source, tmp_path / "third.jsonl", cache, openai_server) == 0
    assert [r["cached"] for r in read_jsonl(tmp_path / "third.jsonl")] == [True] * 3


def test_a_genuine_entry_moved_to_another_key_is_a_miss(tmp_path: Path) -> None:
    secret = b"a-secret-of-at-least-16-chars"
    with VerdictCache(tmp_path / "cache", secret=secret) as store:
        store.set("case-a", {"status": "ok", "score": 1.0})
        store.set("case-b", {"status": "ok", "score": 0.0})
        assert store.get("case-a") == {"status": "ok", "score": 1.0}
    with diskcache.Cache(str(tmp_path / "cache")) as raw:
        raw.set("case-b", raw.get("case-a"))
    with VerdictCache(tmp_path / "cache", secret=secret) as store:
        assert store.get("case-b") is None and store.rejected == 1
        assert store.get("case-a") == {"status": "ok", "score": 1.0}


def test_users_who_share_the_secret_share_hits(
    tmp_path: Path, source: Path, openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "team-cache"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "alice"))
    assert grade(source, tmp_path / "alice.jsonl", cache, openai_server) == 0
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "bob"))  # another user's own key
    assert grade(source, tmp_path / "bob.jsonl", cache, openai_server) == 0
    assert [r["cached"] for r in read_jsonl(tmp_path / "bob.jsonl")] == [False] * 3

    monkeypatch.setenv("JUDGE_CACHE_KEY", SHARED)  # the team's secret, for both of them
    assert grade(source, tmp_path / "bob2.jsonl", cache, openai_server) == 0
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "alice"))
    assert grade(source, tmp_path / "alice2.jsonl", cache, openai_server) == 0
    assert [r["cached"] for r in read_jsonl(tmp_path / "alice2.jsonl")] == [True] * 3


def test_the_key_file_is_made_private_and_kept(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    path = cache_key_file(env)
    assert path == tmp_path / "config" / "llm-judge" / "cache.key"
    secret = load_cache_secret(env)
    assert len(secret) == 64 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_cache_secret(env) == secret  # the same key on every run
    assert load_cache_secret({**env, "JUDGE_CACHE_KEY": SHARED}) == SHARED.encode()
    assert not str(path).startswith(str(tmp_path / "cache"))


def test_a_key_file_others_can_read_or_a_short_secret_is_refused(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    load_cache_secret(env)
    os.chmod(cache_key_file(env), 0o644)
    with pytest.raises(UsageError, match="can be read or written by others.*chmod 600"):
        load_cache_secret(env)
    with pytest.raises(UsageError, match="too short"):
        load_cache_secret({"JUDGE_CACHE_KEY": "short"})


def test_a_readable_key_file_stops_the_cli_in_one_line(
    tmp_path: Path,
    source: Path,
    openai_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    load_cache_secret()
    os.chmod(cache_key_file(), 0o664)
    assert grade(source, tmp_path / "out.jsonl", tmp_path / "cache", openai_server) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cache key" in err[0] and "chmod 600" in err[0]


class _Rows:
    """Just enough of a psycopg pool for PostgresVerdictCache: a dict of rows."""

    def __init__(self) -> None:
        self.rows: dict[str, bytes] = {}

    @contextmanager
    def connection(self) -> Iterator[_Rows]:
        yield self

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> _Rows:
        self._found: dict[str, Any] | None = None
        if sql.startswith("SELECT entry"):
            entry = self.rows.get(params[0])
            self._found = None if entry is None else {"entry": entry}
        elif sql.startswith("INSERT"):
            self.rows[params[0]] = params[1]
        return self

    def fetchone(self) -> dict[str, Any] | None:
        return self._found


def test_the_replicas_database_cache_refuses_planted_rows_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("psycopg")
    from judge.service.stores.verdicts import PostgresVerdictCache

    monkeypatch.setenv("JUDGE_CACHE_KEY", SHARED)
    rows = _Rows()
    cache = PostgresVerdictCache(rows, "postgresql://db/jobs")  # type: ignore[arg-type]
    cache.set("k", {"status": "ok", "score": 0.25})
    assert cache.get("k") == {"status": "ok", "score": 0.25}
    other_replica = PostgresVerdictCache(rows, "postgresql://db/jobs")  # type: ignore[arg-type]
    assert other_replica.get("k") == {"status": "ok", "score": 0.25}  # same secret: shared
    entry = json.loads(rows.rows["k"])
    entry["record"] = entry["record"].replace("0.25", "1.0")
    rows.rows["k"] = json.dumps(entry).encode()  # planted by someone with database access
    assert cache.get("k") is None and cache.rejected == 1
