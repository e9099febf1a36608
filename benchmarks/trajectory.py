"""`trajectory` at scale: the kind alone, `judge grade` as a whole process, and its memory.

    python benchmarks/trajectory.py [--kind-cases 20000] [--grade-cases 20000]
                                    [--memory-cases 100000] [--repeat 3] [--write]

1. The kind alone: `TrajectoryKind.rules_verdict` and `score` over conversations already
   read into `Case`s (the work a grader does per case once the file is read), median of
   `--repeat` runs, in this process: conversations a second.
2. `judge grade FILE --rubric trajectory --offline -o OUT` on `--grade-cases` conversations,
   in its own process, wall time from start to exit (interpreter start, reading and
   validating the file twice, grading, writing records and the summary): conversations a
   second, median of `--repeat` runs.
3. The same command on `--memory-cases` conversations: the child's peak RSS
   (`resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`, the largest of the children run so
   far, so it is run in a fresh process of its own).

Conversations are synthetic and seeded: a system and a user message, then 1-4 assistant
turns of 1-2 tool calls each with their tool results, a final answer; 1-5 expected calls
drawn from the calls made (sometimes with a changed argument or one left out, sometimes an
extra), so matches and mismatches both occur. About 1.6 KB a conversation. `--write` writes
benchmarks/trajectory.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from judge.rubric import load_rubric  # noqa: E402
from judge.schemas import Case  # noqa: E402

REPORT = REPO / "benchmarks" / "trajectory.md"
TOOLS = ("search_orders", "refund", "get_weather", "book_flight", "send_email", "lookup_user")
# the console script users run (it imports this tree when PYTHONPATH names it)
JUDGE = [shutil.which("judge") or "judge"]
CITIES = ("Paris", "Oslo", "Lisbon", "Rome", "Tokyo", "Lima")


def arguments(rng: random.Random) -> dict[str, Any]:
    return {
        "city": rng.choice(CITIES),
        "amount": rng.choice((10, 20.0, 35.5, 120)),
        "ids": [rng.randint(1, 99) for _ in range(rng.randint(0, 3))],
        "urgent": rng.random() < 0.3,
    }


def conversation(number: int, rng: random.Random) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are the support agent of an online shop."},
        {"role": "user", "content": f"Ticket {number}: please sort out my order and refund."},
    ]
    made = []
    for turn in range(rng.randint(1, 4)):
        calls = []
        for slot in range(rng.randint(1, 2)):
            name, args = rng.choice(TOOLS), arguments(rng)
            made.append((name, args))
            call_id = f"call_{turn}_{slot}"
            function = {"name": name, "arguments": json.dumps(args)}
            calls.append({"id": call_id, "type": "function", "function": function})
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for call in calls:
            result = f"result of {call['function']['name']}: ok, 3 items, total 42.50 euros"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    messages.append({"role": "assistant", "content": "All done: your refund is on its way."})
    expected = [{"name": n, "arguments": dict(a)} for n, a in made]
    if rng.random() < 0.3:
        expected[0]["arguments"]["city"] = "Berlin"
    if rng.random() < 0.2 and len(expected) > 1:
        expected.pop()
    if rng.random() < 0.2:
        expected.append({"name": "send_email", "arguments": {"to": "a@example.com"}})
    return {"id": f"conv-{number}", "messages": messages, "expected_tool_calls": expected}


def write_conversations(path: Path, count: int, seed: int = 43) -> int:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for number in range(count):
            out.write(json.dumps(conversation(number, rng)) + "\n")
    return path.stat().st_size


def kind_alone(count: int, repeat: int) -> tuple[float, float]:
    """Conversations a second through the kind's verdict and score (cases already read):
    by the wall clock, and by this process's CPU time (steadier on a shared machine)."""
    rng = random.Random(7)
    cases = [Case.model_validate(conversation(n, rng)) for n in range(count)]
    rubric = load_rubric("trajectory")
    kind = rubric.behaviour
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        for case in cases:
            kind.score(rubric, kind.rules_verdict(rubric, case))
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return count / statistics.median(times), count / statistics.median(cpu)


def grade_process(source: Path, out: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of `judge grade` as a whole process. On a
    shared machine the CPU time is the steadier figure: the wall time adds the waits for a
    core that other work holds."""
    out.unlink(missing_ok=True)
    command = [*JUDGE, "grade", str(source), "--rubric", "trajectory", "--offline", "-o", str(out)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def peak_rss_mb(source: Path, out: Path) -> float:
    """Peak RSS of one `judge grade` run, in a fresh child that runs it (so the figure is
    that run's, not the largest of earlier children)."""
    code = (
        "import resource, subprocess, sys;"
        "subprocess.run(sys.argv[1:], check=True, capture_output=True);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out.unlink(missing_ok=True)
    command = [sys.executable, "-c", code, *JUDGE, "grade", str(source)]
    command += ["--rubric", "trajectory", "--offline", "-o", str(out)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(command, check=True, env=env, capture_output=True, text=True)
    return int(done.stdout.strip()) / 1024  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind-cases", type=int, default=20_000)
    parser.add_argument("--grade-cases", type=int, default=20_000)
    parser.add_argument("--memory-cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    wall, cpu = kind_alone(args.kind_cases, args.repeat)
    figures: dict[str, Any] = {"kind_per_s": wall, "kind_per_cpu_s": cpu}
    print(f"kind alone: {wall:,.0f} conversations/s ({cpu:,.0f} a CPU-second)", flush=True)
    with tempfile.TemporaryDirectory(prefix="judge-trajectory-") as folder:
        source, out = Path(folder) / "conversations.jsonl", Path(folder) / "graded.jsonl"
        figures["grade_bytes"] = write_conversations(source, args.grade_cases)
        runs = [grade_process(source, out) for _ in range(args.repeat)]
        seconds = statistics.median(wall for wall, _ in runs)
        cpu = statistics.median(cpu for _, cpu in runs)
        figures |= {"grade_s": seconds, "grade_per_s": args.grade_cases / seconds}
        figures |= {"grade_cpu_s": cpu, "grade_per_cpu_s": args.grade_cases / cpu}
        print(
            f"judge grade {args.grade_cases:,}: {seconds:.2f} s wall = "
            f"{figures['grade_per_s']:,.0f} conversations/s; {cpu:.2f} s CPU = "
            f"{figures['grade_per_cpu_s']:,.0f} conversations/CPU-s",
            flush=True,
        )
        figures["memory_bytes"] = write_conversations(source, args.memory_cases)
        figures["rss_mb"] = peak_rss_mb(source, out)
        print(f"judge grade {args.memory_cases:,}: peak RSS {figures['rss_mb']:.0f} MB")
    if args.write:
        write_report(args, figures)


def write_report(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    load = os.getloadavg()[0]
    REPORT.write_text(
        f"""# `trajectory` at scale (`benchmarks/trajectory.py`)

Command: `nice python benchmarks/trajectory.py --kind-cases {args.kind_cases} --grade-cases \
{args.grade_cases} --memory-cases {args.memory_cases} --repeat {args.repeat} --write` \
(from the repository root).
Machine: {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs shared with other \
work (load average {load:.1f} at the end), Python {platform.python_version()}.

| measure | figure | bar |
|---|---|---|
| the kind alone (verdict + score, cases already read), median of {args.repeat} | \
{figures["kind_per_s"]:,.0f} conversations/s ({figures["kind_per_cpu_s"]:,.0f} a CPU-second, \
one core) | >= 5,000 |
| `judge grade` of {args.grade_cases:,} conversations ({figures["grade_bytes"] / 1e6:.1f} MB) \
offline, the whole process, median of {args.repeat} | {figures["grade_s"]:.2f} s wall = \
{figures["grade_per_s"]:,.0f} conversations/s ({figures["grade_cpu_s"]:.2f} s CPU = \
{figures["grade_per_cpu_s"]:,.0f} a CPU-second) | >= 1,000 |
| `judge grade` of {args.memory_cases:,} conversations ({figures["memory_bytes"] / 1e6:.0f} MB), \
peak RSS | {figures["rss_mb"]:.0f} MB | < 500 MB |

Conversations are synthetic and seeded (the script's docstring): 1-4 assistant turns of
1-2 tool calls with their results, expected calls drawn from those made with changes.
""",
        "utf-8",
    )


if __name__ == "__main__":
    main()
