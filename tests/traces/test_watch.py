"""`judge watch` over an OTLP JSON file that keeps growing: sampling, the budget, the
checkpoint (killed and restarted, it neither repeats nor skips a sampled trace), window
summaries and the metrics it counts."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judge.api import open_grader
from judge.cli import main
from judge.config import JudgeConfig
from judge.engine.metrics import GradingMetrics
from judge.rubric import load_rubric
from judge.traces.mapping import TraceMapping
from judge.traces.sampling import Budget, Sampling, Spend, wilson_interval, window_rows
from judge.traces.sources import OtlpFileSource
from judge.traces.watch import WatchOptions, watch
from tests.traces.otlp_support import Request, rag_provider, trace_request, write_otlp


def _requests(start: int, count: int) -> list[Request]:
    """Requests whose answers are faithful (even) or contradict the context (odd)."""
    out = []
    for n in range(start, start + count):
        days = 14 if n % 2 == 0 else 40
        out.append(
            Request(
                f"How long is trial {n}?",
                (f"Trial {n} lasts 14 days.",),
                f"Trial {n} lasts {days} days.",
            )
        )
    return out


class Traffic:
    """An app writing one line per request to an OTLP JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.provider, self.exporter = rag_provider()
        self.ids: list[str] = []
        self.sent = 0

    def send(self, count: int) -> None:
        for request in _requests(self.sent, count):
            self.ids.append(trace_request(self.provider, request)[1])
            write_otlp(self.path, self.exporter.get_finished_spans())
            self.exporter.clear()
        self.sent += count


def _watch(path: Path, folder: Path, *extra: str) -> int:
    argv = ["watch", "--otlp", str(path), "--rubric", "faithfulness", "-o", str(folder)]
    return main([*argv, "--once", *extra])


def _record_ids(folder: Path) -> list[str]:
    path = folder / "faithfulness.jsonl"
    return (
        [json.loads(line)["id"] for line in path.read_text().splitlines()] if path.exists() else []
    )


def _sampled(ids: list[str], rate: float, seed: int = 0) -> list[str]:
    from judge.schemas import Case

    sampling = Sampling(rate, seed=seed)
    return [i for i in ids if sampling.sampled(Case(id=i))]


def test_budget_stops_sampling_and_says_so(tmp_path, capsys) -> None:
    traffic = Traffic(tmp_path / "traces.jsonl")
    traffic.send(10)
    folder = tmp_path / "watch"
    assert _watch(traffic.path, folder, "--max-cases-per-day", "4") == 0
    assert _record_ids(folder) == traffic.ids[:4]
    err = capsys.readouterr()
    assert "budget spent: 4 cases today (limit 4); sampling stops until" in err.err
    assert "graded 4, over_budget 6" in err.out
    traffic.send(3)  # still today: the budget stays spent
    assert _watch(traffic.path, folder, "--max-cases-per-day", "4") == 0
    assert _record_ids(folder) == traffic.ids[:4]


def test_restarted_it_neither_repeats_nor_skips(tmp_path) -> None:
    """Runs over a growing file, and a run that died after writing records but before its
    checkpoint (the checkpoint restored from before it): every sampled trace graded once."""
    traffic = Traffic(tmp_path / "traces.jsonl")
    folder = tmp_path / "watch"
    rate = ["--sample-rate", "0.5"]
    traffic.send(6)
    assert _watch(traffic.path, folder, *rate) == 0
    before = folder / "checkpoint.json"
    saved = tmp_path / "checkpoint.before.json"
    shutil.copy(before, saved)
    traffic.send(6)
    assert _watch(traffic.path, folder, *rate) == 0
    shutil.copy(saved, before)  # the second run's checkpoint lost: as if killed mid-way
    traffic.send(6)
    assert _watch(traffic.path, folder, *rate) == 0
    ids = _record_ids(folder)
    assert len(ids) == len(set(ids))
    assert ids == _sampled(traffic.ids, 0.5)
    assert 0 < len(ids) < 18
    state = json.loads(before.read_text())
    assert state["spend"]["day_cases"] == len(ids)  # spend counted from the records


@pytest.mark.slow
def test_killed_mid_run_and_restarted(tmp_path) -> None:
    """A real SIGKILL while the watch polls a file the app keeps writing; restarted with
    --once after more traffic: each sampled trace has exactly one record."""
    traffic = Traffic(tmp_path / "traces.jsonl")
    folder = tmp_path / "watch"
    traffic.send(8)
    argv = [sys.executable, "-m", "judge.cli", "watch", "--otlp", str(traffic.path)]
    argv += ["--rubric", "faithfulness", "-o", str(folder), "--sample-rate", "0.7"]
    process = subprocess.Popen(
        [*argv, "--poll-seconds", "0.05"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while len(_record_ids(folder)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        traffic.send(4)
        time.sleep(0.2)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    traffic.send(4)
    done = subprocess.run([*argv, "--once"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ids = _record_ids(folder)
    assert len(ids) == len(set(ids))
    assert ids == _sampled(traffic.ids, 0.7)


def test_stratified_sampling_by_slice(tmp_path) -> None:
    from judge.schemas import Case

    sampling = Sampling(0.0, {"premium": 1.0})
    assert sampling.sampled(Case(id="a", slices=["premium"]))
    assert not sampling.sampled(Case(id="a", slices=["free"]))
    with pytest.raises(Exception, match="must be in 0..1"):
        Sampling(1.5)


def test_windows_pass_rate_interval_and_drop() -> None:
    rows = window_rows(
        {
            "2026-12-03T09:00:00Z": {"graded": 40, "passed": 36},
            "2026-12-03T10:00:00Z": {"graded": 40, "passed": 20},
            "2026-12-03T11:00:00Z": {"graded": 5, "passed": 4},
        }
    )
    assert [r["drop"] for r in rows] == [False, True, False]
    assert rows[1]["baseline"] == 0.9 and rows[1]["pass_rate"] == 0.5
    low, high = rows[1]["interval95"]
    assert low < 0.5 < high < 0.9


def test_wilson_interval_matches_statsmodels() -> None:
    from statsmodels.stats.proportion import proportion_confint

    for passed, n in [(0, 10), (7, 10), (10, 10), (36, 40)]:
        ours = wilson_interval(passed, n)
        theirs = proportion_confint(passed, n, alpha=0.05, method="wilson")
        assert ours == pytest.approx(theirs, abs=1e-6)
    assert wilson_interval(0, 0) is None


def test_usd_budget_per_hour_rolls_over() -> None:
    spend = Spend()
    budget = Budget(usd_per_hour=1.0)
    spend.roll(datetime(2026, 12, 3, 10, 5, tzinfo=UTC))
    spend.add(0.6)
    assert budget.spent(spend) is None
    spend.add(0.6)
    assert budget.spent(spend) == "1.20 USD this hour (limit 1.00)"
    assert spend.until(budget, datetime(2026, 12, 3, 10, 5, tzinfo=UTC)) == "2026-12-03T11:00Z"
    spend.roll(datetime(2026, 12, 3, 11, 0, tzinfo=UTC))
    assert budget.spent(spend) is None and spend.day_usd == pytest.approx(1.2)


def test_a_usd_budget_needs_prices(tmp_path, capsys) -> None:
    traffic = Traffic(tmp_path / "traces.jsonl")
    traffic.send(1)
    assert _watch(traffic.path, tmp_path / "w", "--budget-usd-per-day", "5") == 2
    assert "a USD budget needs prices" in capsys.readouterr().err


def test_metrics_count_what_was_graded(tmp_path) -> None:
    traffic = Traffic(tmp_path / "traces.jsonl")
    traffic.send(6)
    metrics = GradingMetrics()
    rubric = load_rubric("faithfulness")
    source = OtlpFileSource(traffic.path, TraceMapping(), ("question", "answer", "contexts"))
    lines: list[str] = []
    options = WatchOptions(
        budget=Budget(cases_per_hour=5), once=True, metrics=metrics, say=lines.append
    )

    async def run() -> None:
        async with open_grader(JudgeConfig(), rubric) as grader:
            await watch(source, grader, tmp_path / "w", options)

    asyncio.run(run())
    text = metrics.exposition().decode()
    assert 'judge_cases_graded_total{rubric="faithfulness",status="ok"} 5.0' in text
    assert 'judge_pass_rate{rubric="faithfulness"} 0.6' in text  # 3 of 5 faithful
    assert any("budget spent: 5 cases this hour" in line for line in lines)
    rows = [json.loads(x) for x in (tmp_path / "w" / "windows.jsonl").read_text().splitlines()]
    assert [(r["graded"], r["passed"]) for r in rows] == [(5, 3)]
