"""`judge calibrate` at 1 million and 10 million pass/fail pairs: CPU time and peak RSS.

    python benchmarks/calibrate_scale.py [--sizes 1000000 10000000] [--rows N ...]
        [--graded N ...] [--write]

For each size, two label CSVs (`id,label`, the judge agreeing on 80%: kappa about 0.6,
benchmarks/bootstrap_scale.py's generator) are written, then `judge calibrate JUDGE HUMAN
-o REPORT` runs with its default settings (2,000 bootstrap resamples, every interval) in a
child process: its CPU seconds (user + system) and peak RSS from `os.wait4`'s rusage (the
child alone), and the kappa and interval it wrote. `--rows N ...` also runs the row reader (the path
before issue 54; the same command with the columnar reader turned off) at those sizes, for
the same kappa. `--graded N ...` runs the way calibrate is used most: the judge side is a
graded-records JSONL file as `judge grade -o` writes it (every field of the records
contract, about 660 bytes a record; 2% of the records `parse_error` or `api_error`, with
no label: excluded and counted), against the same human CSV; its kappa is scikit-learn's
on the pairs whose record is ok. `--write` writes benchmarks/calibrate_scale.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from benchmarks.bootstrap_scale import write_pairs  # noqa: E402

REPORT = REPO / "benchmarks" / "calibrate_scale.md"
# the CLI with the columnar reader turned off: the row reader of before, for comparison
ROWS = (
    "import sys; import calibration.pairs.prepare as p; "
    "p.read_label_columns = lambda *a, **k: None; "
    "from judge.cli import main; sys.exit(main(sys.argv[1:]))"
)


def measured(argv: list[str]) -> tuple[float, float]:
    """(CPU seconds, peak RSS in MB) of one child process, read by `os.wait4`."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 3):
        raise RuntimeError(f"{argv} failed:\n{err.decode()}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def reference_kappa(n: int, seed: int = 0) -> float:
    """Cohen's kappa of the generated pairs by scikit-learn, from the generator's own arrays
    (`write_pairs`' draws, repeated): the figure both readers must give."""
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(seed)
    human = rng.random(n) < 0.5
    judge = np.where(rng.random(n) < 0.8, human, ~human)
    return float(cohen_kappa_score(human, judge))


# one graded record as `judge grade -o` writes it (the records contract in DESIGN.md)
RECORD = (
    '{"id": "c%d", "rubric": "pass_fail", "rubric_version": 1, "rubric_sha256": "'
    + "3f" * 32
    + '", "judge": {"model": "gpt-4o-mini", "temperature": 0.0, "seed": 0, "max_tokens": 1024, '
    '"output_mode": "json_schema", "system_fingerprint": "fp_1"}, "status": "%s", '
    '"verdict": %s, "score": %s, "label": %s, "error": %s, "raw": null, "cached": false, '
    '"usage": {"prompt_tokens": 812, "completion_tokens": 41}, "latency_ms": %.1f, '
    '"graded_at": "2026-12-07T18:00:00Z", "inputs_sha256": "%064x"}\n'
)
FAILED = 0.02  # the share of records that failed (half parse_error, half api_error)


def graded_statuses(n: int) -> np.ndarray:
    """Each record's status: 0 ok, 1 parse_error, 2 api_error (seeded)."""
    draw = np.random.default_rng(1).random(n)
    return np.where(draw < FAILED / 2, 1, np.where(draw < FAILED, 2, 0))


def write_graded(folder: Path, n: int) -> Path:
    """The judge's labels of `write_pairs` (same draws) as a graded-records JSONL file."""
    rng = np.random.default_rng(0)
    human = rng.random(n) < 0.5
    judge = np.where(rng.random(n) < 0.8, human, ~human)
    statuses = graded_statuses(n)
    path = folder / f"graded_{n}.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for start in range(0, n, 100_000):
            out.writelines(
                _record(start + i, bool(judge[start + i]), int(statuses[start + i]))
                for i in range(min(100_000, n - start))
            )
    return path


def _record(k: int, passed: bool, status: int) -> str:
    label = "pass" if passed else "fail"
    if status:
        name = ("parse_error", "api_error")[status - 1]
        return RECORD % (k, name, "null", "null", "null", f'"{name}: no verdict"', 0.0, k)
    verdict = f'{{"verdict": "{label}", "rationale": "It follows [the] reference, {{1}}."}}'
    return RECORD % (k, "ok", verdict, "1.0" if passed else "0.0", f'"{label}"', "null", 412.5, k)


def graded_kappa(n: int) -> float:
    """scikit-learn's kappa of the generated pairs whose record is ok."""
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    human = rng.random(n) < 0.5
    judge = np.where(rng.random(n) < 0.8, human, ~human)
    ok = graded_statuses(n) == 0
    return float(cohen_kappa_score(human[ok], judge[ok]))


def calibrate(judge: Path, human: Path, out: Path, rows: bool) -> dict[str, object]:
    command = [sys.executable, "-c", ROWS] if rows else [sys.executable, "-m", "judge.cli"]
    cpu, rss = measured([*command, "calibrate", str(judge), str(human), "-o", str(out)])
    result = json.loads((out / "calibration.json").read_text())
    return {"cpu_s": cpu, "rss_mb": rss, "kappa": result["kappa"], "ci": result["kappa_ci95"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000_000, 10_000_000])
    parser.add_argument("--rows", type=int, nargs="*", default=[], help="sizes for the row reader")
    parser.add_argument(
        "--graded", type=int, nargs="*", default=[], help="sizes with a graded-records judge file"
    )
    parser.add_argument(
        "--graded-rows", type=int, nargs="*", default=[], help="the same, by the row reader"
    )
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    lines = []
    with tempfile.TemporaryDirectory(prefix="calibrate-scale-") as folder:
        for n in sorted({*args.graded, *args.graded_rows}):
            lines += graded_run(Path(folder), n, n in args.graded_rows)
        for n in sorted({*args.sizes, *args.rows}):
            judge, human = write_pairs(Path(folder), n)
            kappa = reference_kappa(n)
            print(f"{n:,}: scikit-learn's kappa {kappa!r}", flush=True)
            lines.append(f"| {n:,} | scikit-learn on the generated arrays | | | {kappa!r} | |")
            for rows in (False, True):
                if n not in (args.rows if rows else args.sizes):
                    continue
                figures = calibrate(judge, human, Path(folder) / f"report-{n}-{rows}", rows)
                reader = "row reader (before)" if rows else "columnar (DuckDB)"
                line = (
                    f"| {n:,} | {reader} | {figures['cpu_s']:.1f} | {figures['rss_mb']:,.0f} | "
                    f"{figures['kappa']!r} | {figures['ci']} |"
                )
                print(line, flush=True)
                lines.append(line)
            for path in (judge, human):
                path.unlink()
    if args.write:
        write_report(args, lines)


def graded_run(folder: Path, n: int, rows: bool) -> list[str]:
    """The graded-records JSONL judge file against the human CSV, columnar and (``rows``)
    by the row reader."""
    judge = write_graded(folder, n)
    _, human = write_pairs(folder, n)
    kappa = graded_kappa(n)
    size = judge.stat().st_size / 1e9
    print(f"{n:,} graded ({size:.1f} GB): scikit-learn's kappa {kappa!r}", flush=True)
    lines = [f"| {n:,} graded | scikit-learn on the ok pairs | | | {kappa!r} | |"]
    for by_rows in (False, True) if rows else (False,):
        figures = calibrate(judge, human, folder / f"report-graded-{n}-{by_rows}", by_rows)
        reader = "row reader" if by_rows else "columnar"
        line = (
            f"| {n:,} graded | {reader}, JSONL records ({size:.1f} GB) + CSV | "
            f"{figures['cpu_s']:.1f} | {figures['rss_mb']:,.0f} | {figures['kappa']!r} | "
            f"{figures['ci']} |"
        )
        print(line, flush=True)
        lines.append(line)
    for path in folder.glob(f"*_{n}.*"):
        path.unlink()
    return lines


def write_report(args: argparse.Namespace, lines: list[str]) -> None:
    rows = " ".join(map(str, args.rows))
    REPORT.write_text(
        f"""# `judge calibrate` at scale (`benchmarks/calibrate_scale.py`)

Command: `nice python benchmarks/calibrate_scale.py --sizes {" ".join(map(str, args.sizes))}\
{f" --rows {rows}" if rows else ""} --write` (from the repository root).
Machine: {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs shared with other \
work (load average {os.getloadavg()[0]:.1f} at the end), Python {platform.python_version()}.

`judge calibrate JUDGE HUMAN -o REPORT` with its default settings (2,000 bootstrap
resamples, every interval), pass/fail `id,label` CSVs with the judge agreeing on 80%; CPU
seconds (user + system) and peak RSS of the child process (`os.wait4`). Bars: 10 million
pairs within 2 GB and 150 CPU-seconds, the same kappa.

| pairs | reader | CPU s | peak RSS MB | kappa | kappa 95% interval |
|---|---|---|---|---|---|
{chr(10).join(lines)}
""",
        "utf-8",
    )


if __name__ == "__main__":
    main()
