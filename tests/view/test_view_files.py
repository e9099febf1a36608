"""The viewer under the file defects of issue 45 (items 1, 2, 7, 10, 12), on held-out
variants: files that change, vanish or cannot be read beside good runs; links to devices
and FIFOs; deep nesting; the index's permissions. Every answer
is a 2xx or a 4xx with one line, never a 500, and every good run is still served."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from fastapi.testclient import TestClient

from judge.cli import main
from judge.view import open_viewer
from tests.view.defects import AUTH, bounded, listed, one_line_error, record, run_file, serve
from tests.view.defects import viewer_of as viewer_of  # the fixture
from tests.view.support import read_jsonl, write_jsonl

# ---- item 1: a records file that changes while served, with several runs --------------------


def test_a_run_that_grows_while_served_keeps_every_run_listed(
    tmp_path: Path, viewer_of: Callable[..., TestClient]
) -> None:
    files = [run_file(tmp_path / "runs" / f"p{i}" / f"r{i}.jsonl", 3 + i) for i in range(4)]
    client = viewer_of(tmp_path / "runs")
    assert {r["n"] for r in listed(client).values()} == {3, 4, 5, 6}
    for round_ in range(3):  # each file grows in turn: the resumed grade's appended line
        grown = files[round_ % 2]
        with grown.open("a") as handle:
            handle.write(json.dumps(record(f"more-{round_}")) + "\n")
        runs = listed(client)
        for file in files:
            assert runs[file.name]["n"] == len(read_jsonl(file))
            page = client.get(f"/api/runs/{runs[file.name]['id']}/records", headers=AUTH)
            assert page.json()["total"] == len(read_jsonl(file))


# ---- item 2: one unreadable file ----------------------------------------------------------------


def test_one_unreadable_file_is_listed_with_its_error_and_the_others_served(
    tmp_path: Path, viewer_of: Callable[..., TestClient]
) -> None:
    root = tmp_path / "runs"
    good = run_file(root / "good" / "faithfulness.jsonl", 5)
    write_jsonl(root / "good" / "cases.jsonl", [{"id": f"case-{i:03d}", "question": "q?",
                                                  "answer": "a."} for i in range(5)])  # fmt: skip
    with duckdb.connect() as db:  # the cases table `judge grade cases.parquet` leaves beside
        db.execute(
            f"COPY (SELECT 'c' || i AS id, 'q' AS question FROM range(4) t(i)) "
            f"TO '{root / 'good' / 'inputs.parquet'}' (FORMAT parquet)"
        )
    (root / "bad").mkdir()
    (root / "bad" / "garbage.parquet").write_bytes(b"PAR1" + os.urandom(300))
    valid = root / "bad" / "whole.parquet"
    with duckdb.connect() as db:
        db.execute(f"COPY (SELECT 1 AS id) TO '{valid}' (FORMAT parquet)")
    (root / "bad" / "truncated.parquet").write_bytes(valid.read_bytes()[:-9])
    huge = run_file(root / "huge" / "relevance.jsonl", 2)
    with huge.open("a") as handle:  # a line past DuckDB's 16 MiB object limit
        handle.write(json.dumps(record("huge") | {"raw": "x" * (17 << 20)}) + "\n")
    gone = run_file(root / "gone" / "faithfulness.jsonl", 4)
    client = viewer_of(root)
    runs = listed(client)
    assert runs["faithfulness.jsonl"]["n"] in (4, 5)
    gone.rename(tmp_path / "elsewhere.jsonl")  # moved away while served
    by_path = {r["path"]: r for r in client.get("/api/runs", headers=AUTH).json()}
    assert by_path[str(good)]["n"] == 5 and by_path[str(good)].get("error") is None
    assert "error" in by_path[str(gone)] and "\n" not in by_path[str(gone)]["error"]
    for path, entry in by_path.items():
        if path != str(good):
            assert entry.get("error"), entry  # every other file here is unreadable or not a run
        if entry.get("error"):
            one_line_error(client.get(f"/api/runs/{entry['id']}/records", headers=AUTH))
    page = client.get(f"/api/runs/{by_path[str(good)]['id']}/records", headers=AUTH)
    assert page.json()["total"] == 5
    inputs = str(root / "good" / "inputs.parquet")
    assert inputs not in by_path or by_path[inputs].get("error")


# ---- item 7: the index is private ---------------------------------------------------------------


def test_the_index_and_its_folders_are_private(tmp_path: Path) -> None:
    run_file(tmp_path / "runs" / "faithfulness.jsonl", 3)
    index = tmp_path / "cache" / "deeper" / "view-index"
    old = os.umask(0o022)
    try:
        viewer = open_viewer([tmp_path / "runs"], index_dir=index)
        listed(serve(viewer))
        viewer.engine.close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(index.stat().st_mode) == 0o700
    files = [p for p in index.rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


# ---- items 10 and 12: devices, FIFOs, deep nesting ---------------------------------------------


def test_links_to_devices_fifos_and_deep_nesting_are_passed_over(
    tmp_path: Path, viewer_of: Callable[..., TestClient]
) -> None:
    root = tmp_path / "runs"
    run_file(root / "pass" / "faithfulness.jsonl", 3)
    (root / "pass" / "endless.json").symlink_to("/dev/zero")
    (root / "pass" / "endless.jsonl").symlink_to("/dev/urandom")
    os.mkfifo(root / "pass" / "pipe.jsonl")
    os.mkfifo(root / "pass" / "summary.json")
    (root / "pass" / "deep.jsonl").write_text("[" * 60_000 + "]" * 60_000 + "\n")
    (root / "pass" / "deep.json").write_text('{"a":' * 40_000 + "1" + "}" * 40_000)
    client = viewer_of(root)
    runs = listed(client)
    assert runs["faithfulness.jsonl"]["n"] == 3
    assert {name for name, r in runs.items() if not r.get("error")} == {"faithfulness.jsonl"}


def test_a_fifo_given_as_the_path_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "records.jsonl"
    os.mkfifo(fifo)
    code = bounded(lambda: main(["view", str(fifo), "--port", "0"]))
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
