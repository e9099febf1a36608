"""Held-out attacks on `judge traces pull` and `judge watch` (issue 45's check: other sizes,
names, depths and folders than its own tests): what is at the followed name (a FIFO, a
device, a folder), the watch's lock, checkpoint and records pre-made as a link, a folder or
a FIFO, a checkpoint of the right JSON and the wrong shape, copytruncate with a Collector's
common line start, waiting spans bounded by size, and who may read what the watch writes.
Each ends in bounded time with one line, never a traceback (test_attack_heldout_pull.py
has the rest)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.traces.mapping import TraceMapping
from judge.traces.sources import OtlpFileSource
from tests.helpers import ends as _ends
from tests.traces.test_watch_damaged import rag_line


def _write(path: Path, numbers: range, tag: str = "h") -> None:
    with path.open("a") as out:
        out.writelines(rag_line(n, tag) for n in numbers)


def _watch(path: Path, folder: Path, *extra: str) -> int:
    argv = ["watch", "--otlp", str(path), "--rubric", "faithfulness", "-o", str(folder)]
    return main([*argv, "--once", *extra])


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero_link(path: Path) -> None:
    path.symlink_to("/dev/zero")


@pytest.mark.parametrize("make", [_fifo, _zero_link], ids=["fifo", "dev-zero-link"])
def test_a_pull_of_what_is_no_regular_file_is_one_line(make, tmp_path, capsys) -> None:
    """A FIFO with no writer was waited on forever; a link to /dev/zero read forever."""
    path = tmp_path / "spans.otlp"
    make(path)
    rc = _ends(lambda: main(["traces", "pull", "--otlp", str(path), "-o", str(tmp_path / "c")]))
    assert rc == 2
    assert "not a regular file" in _one_error(capsys)


@pytest.mark.parametrize("make", [_fifo, _zero_link], ids=["fifo", "dev-zero-link"])
def test_a_followed_file_replaced_by_no_regular_file_is_one_line(make, tmp_path, capsys) -> None:
    path, folder = tmp_path / "collector.out", tmp_path / "watched"
    _write(path, range(2))
    assert _watch(path, folder) == 0
    path.rename(tmp_path / "collector.out.1")
    make(path)
    assert _ends(lambda: _watch(path, folder)) == 2
    assert "not a regular file" in _one_error(capsys)


def test_a_lock_pre_made_as_a_link_is_refused_and_its_target_kept(tmp_path, capsys) -> None:
    """The lock was opened through a link: the file it named was truncated and the pid
    written into it."""
    path, folder = tmp_path / "collector.out", tmp_path / "watched"
    _write(path, range(2))
    folder.mkdir()
    victim = tmp_path / "notes.txt"
    victim.write_text("keep me\n")
    (folder / ".watch.lock").symlink_to(victim)
    assert _watch(path, folder) == 2
    assert "a link" in _one_error(capsys)
    assert victim.read_text() == "keep me\n"
    assert not (folder / "faithfulness.jsonl").exists()


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_lock_pre_made_as_no_file_is_one_line(kind, tmp_path, capsys) -> None:
    path, folder = tmp_path / "collector.out", tmp_path / "watched"
    _write(path, range(2))
    folder.mkdir()
    lock = folder / ".watch.lock"
    lock.mkdir() if kind == "folder" else os.mkfifo(lock)
    assert _ends(lambda: _watch(path, folder)) == 2
    assert "watch lock" in _one_error(capsys)


def test_a_watch_folder_that_is_a_file_is_one_line(tmp_path, capsys) -> None:
    path, folder = tmp_path / "collector.out", tmp_path / "watched"
    _write(path, range(2))
    folder.write_text("not a folder\n")
    assert _watch(path, folder) == 2
    assert "watch lock" in _one_error(capsys)


@pytest.mark.parametrize("where", ["a-folder", "under-a-file"])
def test_a_pull_to_where_no_file_can_be_is_one_line(where, tmp_path, capsys) -> None:
    path = tmp_path / "spans.otlp"
    _write(path, range(2))
    (tmp_path / "plain").write_text("x\n")
    output = tmp_path if where == "a-folder" else tmp_path / "plain" / "cases.jsonl"
    assert main(["traces", "pull", "--otlp", str(path), "-o", str(output)]) == 2
    assert "cannot be written" in _one_error(capsys)


def _checkpoint(**changes: Any) -> dict[str, Any]:
    spend = {"hour": "2026-12-05T08", "day": "2026-12-05", "hour_cases": 1, "day_cases": 1}
    base = {"position": {}, "spend": spend, "windows": {}, "counts": {}, "recent": []}
    return {**base, **changes}


@pytest.mark.parametrize(
    "checkpoint",
    [
        _checkpoint(windows={"2026-12-05T08:00:00Z": {}}),  # a tally without its counts
        _checkpoint(windows={"2026-12-05T08:00:00Z": {"graded": 2, "passed": 7}}),
        _checkpoint(windows={"2026-12-05T08:00:00Z": {"graded": -3, "passed": 0}}),
        _checkpoint(spend={"day": "2026-12-05", "day_cases": -1_000_000}),  # lifts the budget
        _checkpoint(spend={"hour": "zzzz", "hour_cases": 50}),  # a window that never ends
        _checkpoint(counts={"graded": -1}),
    ],
    ids=["tally-empty", "more-passed", "negative-tally", "negative-spend", "bad-hour", "counts"],
)
def test_a_checkpoint_of_the_wrong_shape_is_one_line(checkpoint, tmp_path, capsys) -> None:
    path, folder = tmp_path / "collector.out", tmp_path / "watched"
    _write(path, range(2))
    folder.mkdir()
    (folder / "checkpoint.json").write_text(json.dumps(checkpoint))
    assert _watch(path, folder, "--max-cases-per-day", "5") == 2
    assert "not a watch checkpoint" in _one_error(capsys)
    assert not (folder / "faithfulness.jsonl").exists()


def test_a_nan_spend_does_not_lift_a_usd_budget(tmp_path, capsys) -> None:
    """NaN compares false with every limit: a NaN spend never reached one."""
    path, folder = tmp_path / "collector.out", tmp_path / "watched"
    _write(path, range(2))
    folder.mkdir()
    spend = {"day": "2026-12-05", "day_usd": float("nan")}
    (folder / "checkpoint.json").write_text(json.dumps(_checkpoint(spend=spend)))
    prices = ("--price-input", "1", "--price-output", "1", "--budget-usd-per-day", "1")
    assert _watch(path, folder, *prices) == 2
    assert "finite" in _one_error(capsys)


def test_what_the_watch_writes_is_private_to_its_user(tmp_path) -> None:
    """The records (the judge's reasons quote the case) were 0644 in a 0755 folder, whatever
    the umask allowed; the checkpoint's waiting spans hold case text too."""
    path, folder = tmp_path / "collector.out", tmp_path / "deep" / "watched"
    _write(path, range(3))
    old = os.umask(0o022)
    try:
        assert _watch(path, folder) == 0
    finally:
        os.umask(old)
    assert folder.stat().st_mode & 0o777 == 0o700
    written = [p for p in folder.iterdir() if p.is_file()]
    assert {p.name for p in written} >= {"faithfulness.jsonl", "checkpoint.json"}
    assert {p.name: p.stat().st_mode & 0o777 for p in written} == dict.fromkeys(
        (p.name for p in written), 0o600
    )


def test_records_that_cannot_be_a_file_are_one_line(tmp_path, capsys) -> None:
    path, folder = tmp_path / "collector.out", tmp_path / "watched"
    _write(path, range(2))
    (folder / "faithfulness.jsonl").mkdir(parents=True)
    assert _watch(path, folder) == 2
    assert "cannot be the watch's records" in _one_error(capsys)


def _collector_line(n: int, tag: str) -> str:
    """`rag_line` with the resource attributes every line of a Collector's file opens with:
    the first few hundred bytes of every line are the same."""
    data = json.loads(rag_line(n, tag))
    sdk = [
        {"key": f"telemetry.sdk.k{i}", "value": {"stringValue": "opentelemetry"}} for i in range(9)
    ]
    data["resourceSpans"][0] = {"resource": {"attributes": sdk}, **data["resourceSpans"][0]}
    return json.dumps(data) + "\n"


def test_copytruncate_then_regrown_past_the_offset_is_read_from_its_start(tmp_path) -> None:
    """logrotate's copytruncate keeps the inode; the file written again past the saved
    offset before the next poll had the same first 256 bytes, so it was read from the old
    offset: a torn line, and the requests before the offset never graded."""
    path, folder = tmp_path / "collector.out", tmp_path / "watched"
    path.write_text("".join(_collector_line(n, "c") for n in range(4)))
    assert _watch(path, folder) == 0
    (tmp_path / "collector.out.1").write_bytes(path.read_bytes())
    with path.open("r+") as handle:
        handle.truncate(0)
        handle.write("".join(_collector_line(n, "d") for n in range(100, 107)))
    assert _watch(path, folder) == 0
    graded = (folder / "faithfulness.jsonl").read_text().splitlines()
    assert len(graded) == 4 + 7


def test_waiting_spans_are_bounded_by_their_size(tmp_path) -> None:
    """Spans whose root never comes, each with a large attribute: a few were enough to
    hold (and rewrite each poll) any amount of memory, under the span count's bound."""
    path = tmp_path / "collector.out"
    lines = []
    for n in range(6):
        data = json.loads(rag_line(n))
        spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
        spans.pop(0)  # the root never comes
        big = {
            "key": "retrieval.documents.1.document.content",
            "value": {"stringValue": "x" * 40_000},
        }
        spans[0]["attributes"].append(big)
        lines.append(json.dumps(data) + "\n")
    path.write_text("".join(lines))
    source = OtlpFileSource(path, TraceMapping(), ("question",), max_pending_bytes=100_000)
    found = source.poll({}, datetime.now(UTC))
    assert len(json.dumps(found.position["pending"])) <= 100_000
    assert len(found.position["pending"]) == 2
    assert any("dropped 4 traces" in line for line in found.skipped)


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("checkpoint.json", _fifo),
        ("checkpoint.json", _zero_link),
        ("faithfulness.jsonl", _zero_link),
    ],
    ids=["checkpoint-fifo", "checkpoint-dev-zero", "records-dev-zero"],
)
def test_the_watch_state_as_no_regular_file_is_one_line(name, make, tmp_path, capsys) -> None:
    """A checkpoint that is a FIFO was waited on forever; one linked to /dev/zero, or
    records linked to it, were read until memory ran out."""
    path, folder = tmp_path / "collector.out", tmp_path / "watched"
    _write(path, range(2))
    folder.mkdir()
    make(folder / name)
    assert _ends(lambda: _watch(path, folder)) == 2
    assert "not a regular file" in _one_error(capsys)
