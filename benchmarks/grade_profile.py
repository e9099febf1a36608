"""Where `judge grade` spends its CPU: cProfile over the whole command, file passes included.

    python benchmarks/grade_profile.py FILE [--rubric trajectory] [--top 25]

`judge grade` runs its file passes (validation, the final order check, the summary) in
worker threads (`asyncio.to_thread`), which cProfile does not see; here they run in line,
so every function's time lands in one profile. Prints the functions by their own time
(`tottime`) and by cumulative time, and the process's CPU seconds (user + system, from
`resource.getrusage`). The figures and what they say are in benchmarks/grade_profile.md.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import resource
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from judge.cli import main as judge_main  # noqa: E402


async def _in_line(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    return function(*args, **kwargs)


def profile(source: Path, rubric: str, top: int) -> str:
    asyncio.to_thread = _in_line  # type: ignore[assignment]  # the passes in this thread
    with tempfile.TemporaryDirectory(prefix="judge-profile-") as folder:
        argv = ["grade", str(source), "--rubric", rubric, "--offline"]
        argv += ["-o", str(Path(folder) / "out.jsonl")]
        start = resource.getrusage(resource.RUSAGE_SELF)
        profiler = cProfile.Profile()
        profiler.enable()
        code = judge_main(argv, {})
        profiler.disable()
        end = resource.getrusage(resource.RUSAGE_SELF)
    cpu = end.ru_utime - start.ru_utime + end.ru_stime - start.ru_stime
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return f"exit {code}; CPU {cpu:.2f} s (profiled, so slower than a plain run)\n{text.getvalue()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("--rubric", default="trajectory")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    print(profile(args.source, args.rubric, args.top))


if __name__ == "__main__":
    main()
