"""Start-up time of the `judge` command: wall time (median of 5 runs) and the imports that
cost the most (`python -X importtime`, cumulative microseconds). Figures, not a test.

    python -m benchmarks.startup            # a Markdown table, then the top imports

Each command runs as a fresh `python -m judge.cli` process from a temporary folder, so
nothing is warm but the operating system's file cache (the first, discarded run warms it).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNS = 5
_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$")


def commands(folder: Path) -> dict[str, list[str]]:
    case = folder / "one.jsonl"
    first = (REPO / "examples" / "cases.jsonl").read_text("utf-8").splitlines()[0]
    case.write_text(first + "\n", "utf-8")
    grade = ["grade", str(case), "--rubric", "faithfulness", "--offline"]
    return {
        "judge --help": ["--help"],
        "judge --version": ["--version"],
        "judge rubrics": ["rubrics"],
        "judge grade --offline (1 case)": [*grade, "-o", str(folder / "g.jsonl"), "--overwrite"],
    }


def run(args: list[str], folder: Path, *, importtime: bool = False) -> tuple[float, str]:
    """Seconds of wall time for one process, and its stderr."""
    flags = ["-X", "importtime"] if importtime else []
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_"))}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *flags, "-m", "judge.cli", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"judge {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return elapsed, done.stderr


def median_seconds(args: list[str], folder: Path, runs: int = RUNS) -> str:
    try:
        run(args, folder)  # warm the file cache
    except RuntimeError as exc:  # a command this version lacks
        return f"n/a ({str(exc).splitlines()[-1]})"
    return f"{statistics.median(run(args, folder)[0] for _ in range(runs)):.2f} s"


def top_imports(stderr: str, limit: int = 12) -> list[tuple[str, float]]:
    """Top-level packages by import time in ms: the cumulative time of each import of one
    of its modules from outside the package, summed (`judge` counts what it pulled in)."""
    lines = [m for m in map(_LINE.match, stderr.splitlines()) if m]
    rows: dict[str, float] = {}
    stack: list[tuple[int, str]] = []  # (depth, top-level package) of the enclosing imports
    for match in reversed(lines):  # importtime prints children first; reversed = parents first
        depth, package = len(match[3]), match[4].split(".")[0]
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if not stack or stack[-1][1] != package:
            rows[package] = rows.get(package, 0.0) + int(match[2]) / 1000
        stack.append((depth, package))
    return sorted(rows.items(), key=lambda item: -item[1])[:limit]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS, help="runs per command (5)")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="judge-startup-"))
    try:
        table = commands(folder)
        print(
            f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}"
        )
        print(f"\n| command | median of {args.runs} runs |\n|---|---|")
        for label, command in table.items():
            print(f"| `{label}` | {median_seconds(command, folder, args.runs)} |")
        for label in ("judge --help", "judge grade --offline (1 case)"):
            _, stderr = run(table[label], folder, importtime=True)
            print(f"\n`python -X importtime`, `{label}`: top cumulative imports\n")
            print("| import | ms |\n|---|---|")
            for name, ms in top_imports(stderr):
                print(f"| {name} | {ms:.0f} |")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
