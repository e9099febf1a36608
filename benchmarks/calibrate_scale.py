"""`judge calibrate` at 1 million and 10 million pass/fail pairs: CPU time and peak RSS.

    python benchmarks/calibrate_scale.py [--sizes 1000000 10000000] [--rows] [--write]

For each size, two label CSVs (`id,label`, the judge agreeing on 80%: kappa about 0.6,
benchmarks/bootstrap_scale.py's generator) are written, then `judge calibrate JUDGE HUMAN
-o REPORT` runs with its default settings (2,000 bootstrap resamples, every interval) in a
child process: its CPU seconds (user + system) and peak RSS from `os.wait4`'s rusage (the
child alone), and the kappa and interval it wrote. `--rows N ...` also runs the row reader (the path
before issue 54; the same command with the columnar reader turned off) at those sizes, for
the same kappa. `--write`
writes benchmarks/calibrate_scale.md.
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


def calibrate(judge: Path, human: Path, out: Path, rows: bool) -> dict[str, object]:
    command = [sys.executable, "-c", ROWS] if rows else [sys.executable, "-m", "judge.cli"]
    cpu, rss = measured([*command, "calibrate", str(judge), str(human), "-o", str(out)])
    result = json.loads((out / "calibration.json").read_text())
    return {"cpu_s": cpu, "rss_mb": rss, "kappa": result["kappa"], "ci": result["kappa_ci95"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--rows", type=int, nargs="*", default=[], help="sizes for the row reader")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    lines = []
    with tempfile.TemporaryDirectory(prefix="calibrate-scale-") as folder:
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
