"""`trajectory` at scale, side by side: `judge grade`, the streaming API and agentevals.

    python benchmarks/trajectory.py [--kind-cases 20000] [--grade-cases 20000]
        [--memory-cases 100000] [--repeat 3] [--agentevals /tmp/agentevals-venv/bin/python]
        [--write]

1. The kind alone: `TrajectoryKind.rules_verdict` and `score` over conversations already
   read into `Case`s (the work a grader does per case once the file is read), median of
   `--repeat` runs, in this process: conversations a CPU-second.
2. Side by side on the same file of `--grade-cases` conversations, `--repeat` rounds, each
   contender in a process of its own, CPU seconds (user + system, `resource.getrusage`;
   the machine is shared, so not the wall clock), median of the rounds:
   - `judge grade FILE --rubric trajectory --offline -o OUT`, the whole process
     (interpreter start, reading, validating, grading, writing records and the summary);
   - the streaming API, `judge.iter_grade(FILE, "trajectory")` consumed in a loop: the
     whole process, and the loop alone;
   - a plain agentevals loop (`benchmarks/agentevals_loop.py`: `json.loads` a line,
     `create_trajectory_match_evaluator(trajectory_match_mode="superset",
     tool_args_match_mode="exact")`, the built-in rubric's mode), run by `--agentevals`,
     the Python of agentevals' own environment (not a project dependency:
     `python -m venv /tmp/agentevals-venv && /tmp/agentevals-venv/bin/pip install
     agentevals`): the whole process, and the loop alone.
   Conversations per CPU-second, and `judge grade`'s ratio to the agentevals loop alone
   (its import left out: the stricter comparison).
3. Peak RSS on `--memory-cases` conversations: `judge grade`, and the streaming API over
   the same file, each in a fresh process (`ru_maxrss` of that child alone).

Conversations are synthetic and seeded: a system and a user message, then 1-4 assistant
turns of 1-2 tool calls each with their tool results (JSON text, as real tools return:
brackets inside strings, which the depth guard must skip), a final answer; 1-5 expected
calls drawn from the calls made (sometimes with a changed argument or one left out,
sometimes an extra), so matches and mismatches both occur. About 3.6 KB a conversation.
`--write` writes benchmarks/trajectory.md.
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


def tool_result(name: str, rng: random.Random) -> dict[str, Any]:
    items = [{"sku": f"A{k}", "qty": k, "tags": ["x", "y"]} for k in range(rng.randint(3, 12))]
    return {"tool": name, "status": "ok", "items": items, "total": {"amount": 42.5}}


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
            result = json.dumps(tool_result(call["function"]["name"], rng))
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


def child_cpu(command: list[str], **env: str) -> tuple[float, str]:
    """(CPU seconds of the child process, user + system; its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        command, check=True, env={**os.environ, **env}, capture_output=True, text=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, done.stdout


def judge_grade(source: Path, out: Path) -> list[str]:
    out.unlink(missing_ok=True)
    return [*JUDGE, "grade", str(source), "--rubric", "trajectory", "--offline", "-o", str(out)]


# the streaming API in a child: every record consumed, the loop's own CPU and peak RSS said
STREAM = """
import json, resource, sys, time
import judge
start = time.process_time()
count = sum(1 for _ in judge.iter_grade(sys.argv[1], "trajectory"))
loop = time.process_time() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"conversations": count, "loop_cpu_s": loop, "rss_mb": rss}))
"""


def round_of(source: Path, out: Path, agentevals: str | None) -> dict[str, float]:
    """One round of every contender on `source`: CPU seconds each."""
    figures: dict[str, float] = {}
    figures["grade"], _ = child_cpu(judge_grade(source, out), PYTHONPATH=str(REPO))
    cpu, said = child_cpu([sys.executable, "-c", STREAM, str(source)], PYTHONPATH=str(REPO))
    figures["api"], figures["api_loop"] = cpu, json.loads(said)["loop_cpu_s"]
    if agentevals:
        script = str(REPO / "benchmarks" / "agentevals_loop.py")
        clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            [agentevals, script, str(source)],
            check=True,
            env=clean,
            capture_output=True,
            text=True,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        figures["agentevals"] = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        figures["agentevals_loop"] = json.loads(done.stdout)["loop_cpu_s"]
    return figures


def peak_rss_mb(command: list[str]) -> float:
    """Peak RSS of one command, in a fresh child that runs it (so the figure is that run's,
    not the largest of earlier children)."""
    code = (
        "import resource, subprocess, sys;"
        "subprocess.run(sys.argv[1:], check=True, capture_output=True);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code, *command],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    return int(done.stdout.strip()) / 1024  # KiB on Linux


def side_by_side(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    source, out = folder / "conversations.jsonl", folder / "graded.jsonl"
    figures: dict[str, Any] = {"grade_bytes": write_conversations(source, args.grade_cases)}
    rounds = [round_of(source, out, args.agentevals) for _ in range(args.repeat)]
    for name in rounds[0]:
        cpu = statistics.median(r[name] for r in rounds)
        figures[f"{name}_cpu_s"] = cpu
        figures[f"{name}_per_cpu_s"] = args.grade_cases / cpu
        print(f"{name}: {cpu:.2f} CPU-s = {args.grade_cases / cpu:,.0f} conversations/CPU-s")
    if args.agentevals:
        for name in ("agentevals", "agentevals_loop"):
            ratio = figures["grade_per_cpu_s"] / figures[f"{name}_per_cpu_s"]
            figures[f"ratio_{name}"] = ratio
            print(f"judge grade / {name}: {ratio:.2f}x", flush=True)
    figures["memory_bytes"] = write_conversations(source, args.memory_cases)
    figures["grade_rss_mb"] = peak_rss_mb(judge_grade(source, out))
    figures["api_rss_mb"] = peak_rss_mb([sys.executable, "-c", STREAM, str(source)])
    print(
        f"{args.memory_cases:,} conversations: judge grade peak RSS "
        f"{figures['grade_rss_mb']:.0f} MB, iter_grade {figures['api_rss_mb']:.0f} MB"
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind-cases", type=int, default=20_000)
    parser.add_argument("--grade-cases", type=int, default=20_000)
    parser.add_argument("--memory-cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--agentevals", help="the Python of an environment with agentevals")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    wall, cpu = kind_alone(args.kind_cases, args.repeat)
    figures: dict[str, Any] = {"kind_per_s": wall, "kind_per_cpu_s": cpu}
    print(f"kind alone: {cpu:,.0f} conversations a CPU-second", flush=True)
    with tempfile.TemporaryDirectory(prefix="judge-trajectory-") as folder:
        figures |= side_by_side(args, Path(folder))
    if args.write:
        write_report(args, figures)


def write_report(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    load = os.getloadavg()[0]
    n, f = args.grade_cases, figures

    def row(name: str, what: str) -> str:
        return f"| {what} | {f[name + '_cpu_s']:.2f} | {f[name + '_per_cpu_s']:,.0f} |"

    peers = [row("grade", "`judge grade --rubric trajectory --offline`, whole process")]
    peers += [row("api", "`judge.iter_grade(FILE, 'trajectory')`, whole process")]
    peers += [row("api_loop", "`judge.iter_grade`, the loop alone")]
    if args.agentevals:
        peers += [row("agentevals", "agentevals superset/exact loop, whole process")]
        peers += [row("agentevals_loop", "agentevals loop alone (imports left out)")]
    ratio = (
        f"`judge grade` as a whole process: **{f['ratio_agentevals_loop']:.2f}x** the "
        f"conversations per CPU-second of the agentevals loop alone, "
        f"{f['ratio_agentevals']:.2f}x its whole process (bar: >= 1.5x)."
        if args.agentevals
        else "agentevals not run (no --agentevals)."
    )
    table = "\n".join(peers)
    REPORT.write_text(
        f"""# `trajectory` at scale, side by side (`benchmarks/trajectory.py`)

Command: `nice python benchmarks/trajectory.py --kind-cases {args.kind_cases} --grade-cases \
{n} --memory-cases {args.memory_cases} --repeat {args.repeat} --agentevals \
{args.agentevals} --write` (from the repository root; agentevals in its own venv:
`python -m venv /tmp/agentevals-venv && /tmp/agentevals-venv/bin/pip install agentevals`).
Machine: {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs shared with other \
work (load average {load:.1f} at the end), Python {platform.python_version()}. CPU seconds
(user + system of each child, `resource.getrusage`), median of {args.repeat} rounds, the
contenders interleaved in each round on the same file.

The same file of {n:,} conversations ({f["grade_bytes"] / 1e6:.1f} MB, tool results as JSON
text):

| contender | CPU s | conversations per CPU-second |
|---|---|---|
{table}

{ratio}

The kind alone (verdict + score, cases already read): {f["kind_per_cpu_s"]:,.0f} conversations
a CPU-second.

Peak RSS on {args.memory_cases:,} conversations ({f["memory_bytes"] / 1e6:.0f} MB), each in a
fresh process: `judge grade` {f["grade_rss_mb"]:.0f} MB; the streaming API
(`judge.iter_grade` over the file, every record consumed) {f["api_rss_mb"]:.0f} MB (bar:
300 MB).

Conversations are synthetic and seeded (the script's docstring). Where `judge grade`'s time
goes, before and after reading the file once: benchmarks/grade_profile.md.
""",
        "utf-8",
    )


if __name__ == "__main__":
    main()
