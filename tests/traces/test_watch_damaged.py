"""`judge watch --otlp` when the world is not tidy: the followed file rotated or truncated,
torn lines, a second watcher on the same folder, damaged state, a clock stepped back, and
a checkpoint that must stay small however long the watch runs."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.traces.sampling import Budget, Spend


def rag_line(n: int, tag: str = "r") -> str:
    """One request as the Collector writes it: a CHAIN root and its RETRIEVER child. The
    answer is faithful for even n."""
    trace, root, child = f"{ord(tag[0]):02x}{n:030x}", f"{n:014x}a1", f"{n:014x}b2"
    days = 14 if n % 2 == 0 else 40

    def attrs(**values: str) -> list[dict[str, Any]]:
        return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]

    spans = [
        {
            "traceId": trace,
            "spanId": root,
            "name": "rag",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + n),
            "attributes": attrs(
                **{
                    "openinference.span.kind": "CHAIN",
                    "input.value": f"How long is plan {tag}{n}?",
                    "output.value": f"Plan {tag}{n} lasts {days} days.",
                }
            ),
        },
        {
            "traceId": trace,
            "spanId": child,
            "parentSpanId": root,
            "name": "retrieve",
            "attributes": attrs(
                **{
                    "openinference.span.kind": "RETRIEVER",
                    "retrieval.documents.0.document.content": f"Plan {tag}{n} lasts 14 days.",
                }
            ),
        },
    ]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n"


def root_id(n: int) -> str:
    return f"{n:014x}a1"


def _write(path: Path, numbers: range, tag: str = "r", mode: str = "a") -> None:
    with path.open(mode) as out:
        out.writelines(rag_line(n, tag) for n in numbers)


def _watch(path: Path, folder: Path, *extra: str) -> int:
    argv = ["watch", "--otlp", str(path), "--rubric", "faithfulness", "-o", str(folder)]
    return main([*argv, "--once", *extra])


def _ids(folder: Path) -> list[str]:
    path = folder / "faithfulness.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


# ---- item 4: rotation, truncation, torn lines ------------------------------------------


def test_a_rotated_file_is_followed(tmp_path) -> None:
    """logrotate moves the file away and the collector starts a new, shorter one: its
    requests are graded (and so are those of a new file already longer than the offset)."""
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    _write(path, range(4))
    assert _watch(path, folder) == 0
    path.rename(tmp_path / "otel.jsonl.1")
    _write(path, range(100, 102), tag="s")
    assert _watch(path, folder) == 0
    assert _ids(folder)[4:] == [root_id(100), root_id(101)]
    path.rename(tmp_path / "otel.jsonl.2")
    _write(path, range(200, 209), tag="t")  # longer than the offset saved
    assert _watch(path, folder) == 0
    assert _ids(folder)[6:] == [root_id(n) for n in range(200, 209)]


def test_a_file_away_for_a_poll_then_back_longer_is_read_from_its_start(tmp_path) -> None:
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    _write(path, range(3))
    assert _watch(path, folder) == 0
    path.rename(tmp_path / "otel.jsonl.1")
    assert _watch(path, folder) == 0  # between the move and the create
    _write(path, range(400, 410), tag="v")
    assert _watch(path, folder) == 0
    assert _ids(folder)[3:] == [root_id(n) for n in range(400, 410)]


def test_a_looping_trace_in_the_file_is_skipped(tmp_path, capsys) -> None:
    """A root, and two spans under it whose parents point at each other: said, and the
    watch goes on to the next request."""
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    data = json.loads(rag_line(0))
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    loop = [dict(spans[1], spanId="e1" * 8, parentSpanId="e2" * 8)]
    loop.append(dict(spans[1], spanId="e2" * 8, parentSpanId="e1" * 8))
    spans.extend(loop)
    path.write_text(json.dumps(data) + "\n")
    _write(path, range(1, 3))
    assert _watch(path, folder) == 0
    assert _ids(folder) == [root_id(1), root_id(2)]
    assert "parent links loop" in capsys.readouterr().err


def test_a_truncated_file_is_read_from_its_start(tmp_path, capsys) -> None:
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    _write(path, range(5))
    assert _watch(path, folder) == 0
    _write(path, range(300, 302), tag="u", mode="w")  # copytruncate, then new traffic
    assert _watch(path, folder) == 0
    assert _watch(path, folder) == 0  # and on every restart after
    assert _ids(folder)[5:] == [root_id(300), root_id(301)]
    assert "rotated or truncated" in capsys.readouterr().err


def test_torn_and_bad_lines_are_skipped_and_counted(tmp_path, capsys) -> None:
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    _write(path, range(2))
    with path.open("a") as out:
        out.write(rag_line(7)[:55] + "\n")  # the collector died mid-line
        out.write('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 1}]}]}]}\n')
        out.write("\xff not text\n")
    _write(path, range(2, 5))
    assert _watch(path, folder) == 0
    assert _ids(folder) == [root_id(n) for n in range(5)]
    captured = capsys.readouterr()
    assert "skipped 3" in captured.out and "Traceback" not in captured.err


# ---- item 5: one watcher a folder ------------------------------------------------------


def test_a_second_watcher_on_the_folder_is_refused(tmp_path, capsys) -> None:
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    _write(path, range(3))
    folder.mkdir()
    holder = os.open(folder / ".watch.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the first watcher
        assert _watch(path, folder) == 2
    finally:
        os.close(holder)
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert "another judge watch" in line and "one watch a folder" in line
    assert captured.out == ""
    assert _ids(folder) == []
    assert _watch(path, folder) == 0 and len(_ids(folder)) == 3  # the lock let go


# ---- item 9: bounded state ------------------------------------------------------------


def test_the_checkpoint_stays_small_with_the_same_once_only(tmp_path, monkeypatch) -> None:
    """Keep 40 recent ids: after 150 and after 450 requests the checkpoint is the same
    size; a run whose checkpoint is lost re-reads, and grades nothing twice."""
    monkeypatch.setattr("judge.traces.checkpoint.RECENT", 40)
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    rate = ("--sample-rate", "0.1")
    _write(path, range(150))
    assert _watch(path, folder, *rate) == 0
    checkpoint = folder / "checkpoint.json"
    small = len(checkpoint.read_bytes())
    saved = checkpoint.read_bytes()
    _write(path, range(150, 450))
    assert _watch(path, folder, *rate) == 0
    assert len(checkpoint.read_bytes()) <= small + 200
    state = json.loads(checkpoint.read_text())
    assert len(state["recent"]) == 40
    graded = _ids(folder)
    checkpoint.write_bytes(saved)  # killed before the second checkpoint was saved
    assert _watch(path, folder, *rate) == 0
    assert _ids(folder) == graded and len(graded) == len(set(graded)) > 20
    assert json.loads(checkpoint.read_text())["spend"]["day_cases"] == len(graded)


def test_a_first_form_checkpoint_is_read_without_counting_twice(tmp_path) -> None:
    """A checkpoint written before the bounded form (`decided`: every id, no records
    length): read, its spend not counted again, then saved in the bounded form."""
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    _write(path, range(6))
    assert _watch(path, folder) == 0
    checkpoint = folder / "checkpoint.json"
    state = json.loads(checkpoint.read_text())
    first = {k: state[k] for k in ("position", "spend", "windows", "counts")}
    first["decided"] = {root_id(n): "graded" for n in range(6)}
    checkpoint.write_text(json.dumps(first))
    _write(path, range(6, 8))
    assert _watch(path, folder) == 0
    state = json.loads(checkpoint.read_text())
    assert state["spend"]["day_cases"] == 8 and "decided" not in state
    assert _ids(folder) == [root_id(n) for n in range(8)]


# ---- item 15: damaged state ------------------------------------------------------------


def test_a_wrongly_typed_record_is_skipped(tmp_path, capsys) -> None:
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    _write(path, range(2))
    folder.mkdir()
    (folder / "faithfulness.jsonl").write_text('{"id": "zz", "status": 12, "score": "high"}\n')
    assert _watch(path, folder) == 0
    assert _ids(folder)[1:] == [root_id(0), root_id(1)]
    assert "not records skipped" in capsys.readouterr().err


@pytest.mark.parametrize("offset", ["12ab", -40, 3.5, None])
def test_a_bad_checkpoint_offset_is_one_line(offset, tmp_path, capsys) -> None:
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    _write(path, range(2))
    assert _watch(path, folder) == 0
    checkpoint = folder / "checkpoint.json"
    state = json.loads(checkpoint.read_text())
    state["position"]["offset"] = offset
    checkpoint.write_text(json.dumps(state))
    capsys.readouterr()
    assert _watch(path, folder) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
    assert "checkpoint.json" in line and "not a watch checkpoint" in line


@pytest.mark.parametrize("since", ["last tuesday", 1733390000, ["2026-12-01"]])
def test_a_bad_phoenix_position_is_one_line(since, tmp_path, capsys) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    state = {"position": {"since": since}, "spend": {}, "windows": {}, "counts": {}}
    (folder / "checkpoint.json").write_text(json.dumps(state))
    argv = ["watch", "--phoenix", "http://127.0.0.1:9", "--project", "p"]
    argv += ["--rubric", "faithfulness", "-o", str(folder), "--once"]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
    assert "not a watch checkpoint (since" in line


@pytest.mark.parametrize(
    "spend", [{"hour_usd": "lots"}, {"day_cases": [1]}, "none"], ids=["text", "list", "str"]
)
def test_a_wrongly_typed_checkpoint_is_one_line(spend, tmp_path, capsys) -> None:
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    _write(path, range(1))
    assert _watch(path, folder) == 0
    checkpoint = folder / "checkpoint.json"
    state = json.loads(checkpoint.read_text())
    state["spend"] = spend
    checkpoint.write_text(json.dumps(state))
    assert _watch(path, folder) == 2
    assert "not a watch checkpoint" in capsys.readouterr().err


def test_a_malformed_pending_span_is_dropped(tmp_path, capsys) -> None:
    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    _write(path, range(1))
    assert _watch(path, folder) == 0
    checkpoint = folder / "checkpoint.json"
    state = json.loads(checkpoint.read_text())
    state["position"]["pending"] = [{"trace_id": 3}, "x", {"span_id": "a", "colour": "red"}]
    checkpoint.write_text(json.dumps(state))
    _write(path, range(1, 3))
    assert _watch(path, folder) == 0
    assert _ids(folder) == [root_id(n) for n in range(3)]
    assert "dropped a waiting span" in capsys.readouterr().err


def test_waiting_spans_are_bounded(tmp_path) -> None:
    """Children whose root never comes: at most max_pending are kept between polls."""
    from judge.traces.mapping import TraceMapping
    from judge.traces.sources import OtlpFileSource

    path = tmp_path / "otel.jsonl"
    lines = []
    for n in range(30):
        data = json.loads(rag_line(n))
        data["resourceSpans"][0]["scopeSpans"][0]["spans"].pop(0)  # the root never comes
        lines.append(json.dumps(data) + "\n")
    path.write_text("".join(lines))
    source = OtlpFileSource(path, TraceMapping(), ("question",), max_pending=10)
    found = source.poll({}, datetime.now(UTC))
    assert len(found.position["pending"]) == 10
    assert any("dropped 20 traces" in line for line in found.skipped)


# ---- item 16: the clock stepped back ---------------------------------------------------


def test_a_spent_budget_stays_spent_when_the_clock_steps_back() -> None:
    spend, budget = Spend(), Budget(cases_per_hour=2, cases_per_day=5)
    spend.roll(datetime(2026, 12, 4, 16, 20, tzinfo=UTC))
    spend.add(0.0)
    spend.add(0.0)
    assert budget.spent(spend) == "2 cases this hour (limit 2)"
    spend.roll(datetime(2026, 12, 4, 15, 59, tzinfo=UTC))  # NTP stepped back 21 minutes
    assert budget.spent(spend) == "2 cases this hour (limit 2)"
    spend.roll(datetime(2026, 12, 3, 23, 0, tzinfo=UTC))  # a VM restored to yesterday
    assert budget.spent(spend) is not None and spend.day_cases == 2
    spend.roll(datetime(2026, 12, 4, 17, 0, tzinfo=UTC))  # time moves on: a new hour
    assert budget.spent(spend) is None and spend.day_cases == 2


def test_the_watch_keeps_a_spent_hour_across_a_step_back(tmp_path) -> None:
    from judge.api import open_grader
    from judge.config import JudgeConfig
    from judge.rubric import load_rubric
    from judge.traces.mapping import TraceMapping
    from judge.traces.sources import OtlpFileSource
    from judge.traces.watch import WatchOptions, watch

    path, folder = tmp_path / "otel.jsonl", tmp_path / "w"
    source = OtlpFileSource(path, TraceMapping(), ("question", "answer", "contexts"))
    times = iter(
        [datetime(2026, 12, 4, 10, 5, tzinfo=UTC), datetime(2026, 12, 4, 9, 55, tzinfo=UTC)]
    )

    async def run(now: datetime) -> None:
        options = WatchOptions(
            budget=Budget(cases_per_hour=3), once=True, clock=lambda: now, say=lambda _: None
        )
        async with open_grader(JudgeConfig(), load_rubric("faithfulness")) as grader:
            await watch(source, grader, folder, options)

    _write(path, range(4))
    asyncio.run(run(next(times)))
    _write(path, range(4, 8))
    asyncio.run(run(next(times)))
    assert len(_ids(folder)) == 3
