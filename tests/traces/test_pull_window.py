"""A Phoenix pull holds a bounded window (issue 55): pages are spooled to disk as they
come, so a pull against an endless, repeated or slow cursor ends at its cap with one line
naming it, and the cases of the spans pulled before it are kept in the cases file."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from judge.traces.phoenix import Limits, PhoenixClient
from judge.traces.pull import pull_phoenix_into
from judge.traces.spool import SpanSpool
from tests.helpers import ends as _ends
from tests.traces.phoenix_fake import Answer, FakePhoenix, json_answer, phoenix_span

REPO = Path(__file__).resolve().parents[2]


def _endless(spans_per_page: int = 3, *, start: int = 0):
    """Pages of distinct one-span traces with a distinct next cursor, for ever."""
    counter = itertools.count(start)

    def route(method, path, query, body) -> Answer:
        n = next(counter)
        spans = [
            phoenix_span(f"{n:08x}{k:08x}", f"{n:016x}{k:016x}") for k in range(spans_per_page)
        ]
        return json_answer({"data": spans, "next_cursor": f"page-{n + 1}"})

    return route


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def test_an_endless_cursor_keeps_the_cases_pulled_before_its_cap(tmp_path) -> None:
    out = tmp_path / "cases.jsonl"
    with FakePhoenix(_endless()) as fake, PhoenixClient(fake.url, limits=Limits(pull_pages=7)) as c:
        streamed = _ends(lambda: pull_phoenix_into(c, "shop-bot", out))
    assert streamed.stopped is not None and "over 7 pages" in str(streamed.stopped)
    assert streamed.cases == 21  # 7 pages of 3 answered requests, every one kept
    assert _ids(out) == [f"{n:08x}{k:08x}" for n in range(7) for k in range(3)]


def test_the_command_says_the_cap_and_what_it_kept_in_one_line(
    tmp_path, capsys, monkeypatch
) -> None:
    import judge.app.traces as app
    from judge.cli import main

    real = app.phoenix_client
    monkeypatch.setattr(
        app, "phoenix_client", lambda *a: replace(real(*a), limits=Limits(pull_pages=4))
    )
    out = tmp_path / "cases.jsonl"
    with FakePhoenix(_endless(2)) as fake:
        argv = ["traces", "pull", "--phoenix", fake.url, "--project", "shop-bot", "-o", str(out)]
        code = _ends(lambda: main(argv))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1, err
    assert "over 4 pages in one pull" in err[0]
    assert f"the 8 cases of the spans pulled before it are in {out}" in err[0]
    assert len(_ids(out)) == 8


def test_a_cursor_that_comes_back_keeps_what_came_before(tmp_path) -> None:
    pages = iter(["c-1", "c-2", "c-1"])
    counter = itertools.count()

    def route(method, path, query, body) -> Answer:
        n = next(counter)
        span = phoenix_span(f"{n:016x}", f"{n:032x}")
        return json_answer({"data": [span], "next_cursor": next(pages, "c-2")})

    out = tmp_path / "cases.jsonl"
    with FakePhoenix(route) as fake, PhoenixClient(fake.url) as client:
        streamed = _ends(lambda: pull_phoenix_into(client, "shop-bot", out))
    assert "gave the cursor 'c-1' twice" in str(streamed.stopped)
    assert _ids(out) == [f"{n:016x}" for n in range(3)]


def test_a_slow_cursor_stops_at_the_pull_deadline_with_its_cases(tmp_path, monkeypatch) -> None:
    """Each page takes 100 s of a fake clock (no real waiting): a pull allowed 250 s keeps
    the two pages that came whole and stops on the third at its deadline."""
    import judge.traces.phoenix as phoenix

    clock = [0.0]
    monkeypatch.setattr(phoenix, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    counter = itertools.count()

    def route(method, path, query, body) -> Answer:
        n = next(counter)
        clock[0] += 100.0
        span = phoenix_span(f"{n:016x}", f"{n:032x}")
        return json_answer({"data": [span], "next_cursor": f"p{n}"})

    out = tmp_path / "cases.jsonl"
    limits = Limits(pull_seconds=250.0)
    with FakePhoenix(route) as fake, PhoenixClient(fake.url, limits=limits) as client:
        streamed = _ends(lambda: pull_phoenix_into(client, "shop-bot", out))
    assert "in time" in str(streamed.stopped) or "s in one pull" in str(streamed.stopped)
    assert streamed.cases == 2 and _ids(out) == [f"{n:016x}" for n in range(2)]


def test_spans_repeated_across_pages_are_kept_once(tmp_path) -> None:
    def route(method, path, query, body) -> Answer:
        n = int(query.get("cursor", ["0"])[0])
        spans = [phoenix_span(f"{k:016x}", f"{k:032x}") for k in range(5)]  # the same five
        return json_answer({"data": spans, "next_cursor": str(n + 1) if n < 9 else None})

    out = tmp_path / "cases.jsonl"
    with FakePhoenix(route) as fake, PhoenixClient(fake.url) as client:
        streamed = _ends(lambda: pull_phoenix_into(client, "shop-bot", out))
    assert streamed.stopped is None
    assert _ids(out) == [f"{k:016x}" for k in range(5)]


def test_a_trace_past_the_per_trace_bound_is_skipped_and_named(tmp_path, monkeypatch) -> None:
    import judge.traces.pull as pull
    import judge.traces.spool as spool

    monkeypatch.setattr(spool, "MAX_TRACE_BYTES", 4_000)
    monkeypatch.setattr(pull, "MAX_TRACE_BYTES", 4_000)
    big = "x" * 3_000

    def route(method, path, query, body) -> Answer:
        spans = [
            phoenix_span(f"{k:016x}", "f" * 32, attributes={"input.value": big}) for k in range(3)
        ]
        small = phoenix_span("e" * 16, "e" * 32)
        return json_answer({"data": [*spans, small], "next_cursor": None})

    out = tmp_path / "cases.jsonl"
    with FakePhoenix(route) as fake, PhoenixClient(fake.url) as client:
        streamed = pull_phoenix_into(client, "shop-bot", out)
    assert _ids(out) == ["e" * 16]
    assert streamed.tally.broken_count == 1
    assert streamed.tally.broken[0].startswith(f"trace {'f' * 32}: ")


def test_the_spool_is_private_and_gone_after(tmp_path) -> None:
    with SpanSpool() as spool:
        folder = Path(spool._folder.name)
        assert folder.stat().st_mode & 0o077 == 0
    assert not folder.exists()


@pytest.mark.slow
def test_resident_memory_stays_flat_while_a_pull_grows(tmp_path) -> None:
    """A child pulls 400 MiB of spans from an endless cursor to its byte cap
    (benchmarks/phoenix_pull.py); its peak resident memory stays far below what holding
    them takes (650 MB before), and every case it counted is written."""
    out = tmp_path / "cases.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.phoenix_pull", "--mib", "400", "--out", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert "in one pull" in figures["stopped"]
    assert figures["cases"] > 200_000
    with out.open() as handle:
        assert sum(1 for _ in handle) == figures["cases"]
    assert figures["peak_rss_mb"] < 300, figures
