"""`judge drift` within bounds (issue 52, items 5 and 6): a window too thin for a verdict is
not bootstrapped, a window that gets one is bootstrapped in one vectorised pass, the number
of windows has a cap named in a one-line refusal (the command and the viewer), a resample
count past its cap is a one-line usage error, and a FIFO (labels or records, whatever its
name) is refused in one line instead of waited on. Timing is the benchmark's, not these
tests': they count what is done."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from calibration.agreement.coefficients import ac1_from_confusion, ac1_from_confusions
from calibration.agreement.metrics import kappa_from_confusion, kappa_from_confusions
from calibration.drift import DriftOptions, Window, count_windows, drift_report
from calibration.drift.windows import MAX_WINDOWS
from calibration.inference import intervals
from calibration.inference.intervals import MAX_RESAMPLES
from calibration.pairs import analysis
from judge.cli import main
from tests.e2e.test_drift_cli import write_stream
from tests.helpers import REPO


@pytest.mark.parametrize("k", [2, 3, 5])
def test_the_stacked_coefficients_equal_the_one_table_ones(k: int) -> None:
    rng = np.random.default_rng(k)
    tables = rng.multinomial(rng.integers(0, 12), np.full(k * k, 1 / (k * k)), size=400)
    tables = tables.reshape(-1, k, k)
    tables[:3] = 0  # empty tables: undefined
    tables[3:6] = np.diag(np.r_[7, np.zeros(k - 1)])  # one class on both sides: undefined
    values = np.arange(k) * 2.0 + 1
    for stacked, single in (
        (kappa_from_confusions(tables), [kappa_from_confusion(t) for t in tables]),
        (ac1_from_confusions(tables), [ac1_from_confusion(t) for t in tables]),
        (
            kappa_from_confusions(tables, weights="quadratic", values=values),
            [kappa_from_confusion(t, weights="quadratic", values=values) for t in tables],
        ),
    ):
        np.testing.assert_allclose(stacked, single, rtol=0, atol=1e-12, equal_nan=True)


def labelled(n: int, seed: int) -> tuple[list[str], list[str], list[str]]:
    rng = np.random.default_rng(seed)
    human = rng.choice(["pass", "fail"], size=n).tolist()
    judge = [h if rng.random() < 0.8 else ("fail" if h == "pass" else "pass") for h in human]
    return [f"x{i}" for i in range(n)], human, judge


def test_only_windows_with_a_verdict_are_bootstrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bool] = []
    real = intervals.bootstrap_table_ci

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(kwargs.get("batched") is not None)
        return real(*args, **kwargs)

    monkeypatch.setattr(analysis, "bootstrap_table_ci", counted)
    ids, human, judge = labelled(3 * 40 + 70 * 3, seed=5)
    # three windows of 40 (a verdict each), then seventy of 3 (too thin for one)
    windows = count_windows(120, 40) + [
        Window(f"t{i}", tuple(range(120 + 3 * i, 123 + 3 * i))) for i in range(70)
    ]
    report = drift_report(ids, human, judge, windows, DriftOptions(min_labels=30, n_bootstrap=300))
    thin = [r for r in report["windows"] if r["n"] == 3]
    assert len(thin) == 70 and all(r["agreement_ci95"] is None for r in thin)
    assert all(r["needs"] == "3 labels, needs 30 (27 more)" for r in thin)
    assert len(calls) == 3 * 2 and all(calls)  # kappa and AC1 of the three, vectorised
    assert all(r["agreement_ci95"] is not None for r in report["windows"][:3])


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(["drift", *args], env={})
    except SystemExit as exc:  # argparse refuses a flag's value itself, with 2
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("per_window", [1, 2])
def test_windows_past_the_cap_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], per_window: int
) -> None:
    size = MAX_WINDOWS * per_window + 7
    graded, labels = write_stream(tmp_path, [0.7], size=size, seed=3)
    code, err = run([str(graded), "--labels", str(labels), "--window", str(per_window)], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"over the cap of {MAX_WINDOWS:,}" in lines[0], err
    assert f"--window {per_window + 1}" in lines[0]  # what would fit


def test_days_past_the_cap_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, labels = write_stream(tmp_path, [0.7] * (MAX_WINDOWS // 7 + 2), size=2, seed=4)
    # two labels a week, a minute apart: by day, one window a week; by month they fit
    code, err = run([str(graded), "--labels", str(labels), "--by", "day"], capsys)
    assert code in (0, 4), err  # 4: too few labels in a window to tell
    many = tmp_path / "many"
    graded, labels = write_stream(many, [0.7] * (MAX_WINDOWS + 3), size=1, seed=4)
    code, err = run([str(graded), "--labels", str(labels), "--by", "week"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--by" in err, err


@pytest.mark.parametrize("count", [str(MAX_RESAMPLES + 1), "1000000000", "99999999999999999999"])
def test_a_resample_count_past_the_cap_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], count: str
) -> None:
    graded, labels = write_stream(tmp_path, [0.7] * 2, size=40, seed=6)
    code, err = run(
        [str(graded), "--labels", str(labels), "--window", "40", "--bootstrap", count], capsys
    )
    assert code == 2 and "Traceback" not in err
    [line] = err.strip().splitlines()
    assert f"--bootstrap {count}: resamples 0 to at most {MAX_RESAMPLES:,}" in line, err


@pytest.mark.parametrize("command", ["calibrate", "gate"])
def test_calibrate_and_gate_refuse_it_too(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:  # argparse, as for their other flags
        main([command, "a.jsonl", "b.jsonl", "--bootstrap", "500000000"], env={})
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].endswith(
        f"argument --bootstrap: 500000000 resamples: at most {MAX_RESAMPLES:,}"
    )


def in_a_process(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "judge.cli", "drift", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("which", ["labels", "records-unnamed", "records-jsonl"])
def test_a_fifo_is_refused_in_one_line(tmp_path: Path, which: str) -> None:
    graded, labels = write_stream(tmp_path, [0.7] * 2, size=40, seed=7)
    fifo = (
        tmp_path
        / {"labels": "people", "records-unnamed": "stream", "records-jsonl": "s.jsonl"}[which]
    )
    os.mkfifo(fifo)
    args = (
        [str(graded), "--labels", str(fifo)]
        if which == "labels"
        else [str(fifo), "--labels", str(labels)]
    )
    done = in_a_process([*args, "--window", "40"])
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "a FIFO, not a regular file" in lines[0] and str(fifo) in lines[0]
