"""The verdict cache holds data, never objects (issue 20, items 6 and 15).

Anyone who can write a cache folder (a shared `--cache-dir`, the service's `cache_dir`)
used to run code as the next user who graded a cached case: diskcache's default `Disk`
unpickles what it reads. A row the cache did not write in its own JSON format is a miss,
graded again and rewritten; a cache database that SQLite cannot read is a miss with one
warning, never a crash.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import diskcache
import pytest

from judge.cli import main
from judge.engine.cache import VerdictCache
from judge.testing import FakeOpenAIServer
from tests.helpers import case, read_jsonl, write_jsonl

MODEL = "judge-test-2024-01-01"


def cases(*ids: str) -> list[dict[str, object]]:
    """Cases with different answers (the id is not in the cache key)."""
    return [case(i, answer=f"The free trial lasts 14 days ({i}).") for i in ids]


class Payload:
    """What an attacker plants: unpickling it creates `marker` (a stand-in for `id`)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def grade(source: Path, out: Path, cache: Path, server: FakeOpenAIServer) -> int:
    env = {"OPENAI_BASE_URL": server.base_url, "JUDGE_MODEL": MODEL}
    args = ["grade", str(source), "--rubric", "faithfulness", "-o", str(out)]
    return main([*args, "--cache-dir", str(cache)], env=env)


def plant(cache: Path, value: object) -> int:
    """Overwrite every row of the cache with `value`, as diskcache's default Disk stores it
    (a pickle); returns how many rows."""
    with diskcache.Cache(str(cache)) as planted:
        keys = list(planted)
        for key in keys:
            planted.set(key, value)
    return len(keys)


def test_a_planted_pickle_runs_nothing_and_is_a_miss(
    tmp_path: Path, openai_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before the fix the second run unpickled the payload (the marker appeared) and
    served the rows as hits."""
    source = write_jsonl(tmp_path / "in.jsonl", cases("c0", "c1", "c2"))
    cache, marker = tmp_path / "cache", tmp_path / "pwned"
    assert grade(source, tmp_path / "first.jsonl", cache, openai_server) == 0
    sent = len(openai_server.stats.bodies)
    assert plant(cache, Payload(marker)) == 3
    capsys.readouterr()

    assert grade(source, tmp_path / "second.jsonl", cache, openai_server) == 0
    assert not marker.exists()
    records = read_jsonl(tmp_path / "second.jsonl")
    assert [r["cached"] for r in records] == [False] * 3  # each planted row was a miss
    assert len(openai_server.stats.bodies) == 2 * sent  # and was graded again
    assert "cached: 0" in capsys.readouterr().out

    # the misses were rewritten as data: a third run is served from the cache
    assert grade(source, tmp_path / "third.jsonl", cache, openai_server) == 0
    assert [r["cached"] for r in read_jsonl(tmp_path / "third.jsonl")] == [True] * 3
    assert len(openai_server.stats.bodies) == 2 * sent
    assert not marker.exists()


def test_a_cache_written_by_an_older_version_is_regraded_once(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    """Earlier versions pickled each entry (a dict): such a row is not ours now, so it is a
    miss once, graded and rewritten; nothing crashes."""
    source = write_jsonl(tmp_path / "in.jsonl", cases("a", "b"))
    cache = tmp_path / "cache"
    assert grade(source, tmp_path / "first.jsonl", cache, openai_server) == 0
    first = read_jsonl(tmp_path / "first.jsonl")
    with VerdictCache(cache) as store:
        keys = store.keys()
    with diskcache.Cache(str(cache)) as old:  # as the old code stored them: pickled dicts
        for key, record in zip(keys, first, strict=True):
            old.set(key, {k: v for k, v in record.items() if k not in ("id", "slices")})
    assert grade(source, tmp_path / "second.jsonl", cache, openai_server) == 0
    assert [r["cached"] for r in read_jsonl(tmp_path / "second.jsonl")] == [False, False]
    assert grade(source, tmp_path / "third.jsonl", cache, openai_server) == 0
    third = read_jsonl(tmp_path / "third.jsonl")
    assert [r["cached"] for r in third] == [True, True]
    assert [r["verdict"] for r in third] == [r["verdict"] for r in first]


@pytest.mark.parametrize(
    "value",
    [
        b"not json",
        b'["a", "list"]',
        json.dumps({"format": "someone-else/1", "record": {}}).encode(),
        json.dumps({"format": "llm-judge-verdict/1", "record": {"status": "ok", "id": 7}}).encode(),
        "a text value",
        12345,
    ],
    ids=["not-json", "a-list", "another-format", "a-bad-record", "text", "an-int"],
)
def test_a_row_that_is_not_ours_is_a_miss(
    tmp_path: Path, openai_server: FakeOpenAIServer, value: object
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", cases("a"))
    cache = tmp_path / "cache"
    assert grade(source, tmp_path / "first.jsonl", cache, openai_server) == 0
    plant(cache, value)
    assert grade(source, tmp_path / "second.jsonl", cache, openai_server) == 0
    assert read_jsonl(tmp_path / "second.jsonl")[0]["cached"] is False


def test_entries_are_stored_as_json_bytes(tmp_path: Path) -> None:
    """What the cache writes is JSON in the database row itself (no pickle, no file)."""
    with VerdictCache(tmp_path / "cache") as store:
        store.set("k", {"status": "ok", "score": 0.5})
        assert store.get("k") == {"status": "ok", "score": 0.5}
    with diskcache.Cache(str(tmp_path / "cache")) as raw:
        stored = raw.get("k")
    assert isinstance(stored, bytes)
    assert json.loads(json.loads(stored)["record"]) == {"status": "ok", "score": 0.5}
    assert [p.name for p in (tmp_path / "cache").iterdir() if p.is_dir()] == []


def test_a_cache_database_that_cannot_be_opened_is_one_line_exit_2(
    tmp_path: Path, openai_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cache.db that is not a database at all: a clear error before anything is sent."""
    source = write_jsonl(tmp_path / "in.jsonl", cases("a"))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "cache.db").write_bytes(b"this is not an SQLite database" * 100)
    assert grade(source, tmp_path / "out.jsonl", cache, openai_server) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"error: cannot use the cache folder {cache}: ")
    assert "--no-cache" in err
    assert len(openai_server.stats.bodies) == 0


def test_a_cache_database_that_fails_once_open_is_a_miss_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Corrupted under a running server (item 15): reads are misses, writes are skipped,
    one warning says so; nothing raises."""
    with VerdictCache(tmp_path / "cache") as store:
        store.set("k", {"status": "ok"})
        folder = tmp_path / "cache"
        for name in ("cache.db-wal", "cache.db-shm"):
            (folder / name).unlink(missing_ok=True)
        (folder / "cache.db").write_bytes(b"\x00garbage" * 4096)
        store._store.close()  # diskcache connects again, per thread: the new one reads this
        with caplog.at_level(logging.WARNING):
            assert store.get("k") is None
            assert store.get("other") is None
            store.set("k2", {"status": "ok"})
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "grading without it" in warnings[0], warnings
