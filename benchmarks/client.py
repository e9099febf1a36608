"""The client's table (issue 22): `python -m benchmarks.client [--scale 0.5] [--server test]`.

For each (latency, concurrency C) row, the same N requests (N >= 2 C) against one server in
its own process, pinned to the last CPU (this process to the first, where the machine has
two), by four clients in one run:

- project: `grade_file` with the model judge (`LLMJudge`), cache off: the whole engine;
- openai SDK + httpx: `chat.completions.create` on one `DefaultAsyncHttpxClient` pool of C;
- SDK + aiohttp: the same on `DefaultAioHttpClient` (the `openai[aiohttp]` extra);
- raw aiohttp: `ClientSession.post(...).json()`, no SDK: the floor.

The server (`--server`): `minimal` (the default, the issue's table), the fixed-latency
`benchmarks.minimal_server`, which answers a precomputed completion and so leaves the
client as the only limit; or `test`, the judge's test server, which computes a rules
verdict per request in Python (its own CPU then limits the run at high rates).

efficiency = ideal / actual, ideal = N x latency / C, actual = the wall time from the first
request to the last reply: as the minimal server saw them (its `/stats` window: the
first request's arrival, the last reply's write), so no client's start-up or shut-down is
counted; against the test server, which keeps no such window, the client's whole run.
CPU per case = this process's CPU time (`time.process_time`, user + system) over the whole
run / N: start-up included, the server's not counted.

Then cProfile's top functions for the project at the profiled row, and `--concurrency auto`
against the test server's rate limit (`--rate R`): refused share and wall time against the
ideal N / R. Writes `benchmarks/CLIENT.md` (or `--output`). Figures, not tests: on a shared
machine they are noisy, so compare cells of one run, not runs.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import platform
import pstats
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.cases import case, write_cases
from benchmarks.server import ServerProcess
from judge.app.runs import settle_heap
from judge.config import JudgeConfig
from judge.engine.files import grade_file
from judge.engine.grader import Grader
from judge.engine.model import LLMJudge
from judge.rubric import load_rubric
from judge.schemas import Case

REPO = Path(__file__).resolve().parents[1]
MODEL = "judge-test-2024-01-01"
ROWS = [(1.0, 32), (1.0, 128), (1.0, 512), (0.2, 128)]  # the table
COLUMNS = ("project", "SDK + httpx", "SDK + aiohttp", "raw aiohttp")
SERVERS = {"minimal": "benchmarks.minimal_server", "test": "judge.testserver"}


@dataclass
class Cell:
    """One client's run of one row: wall time (first request to last reply), CPU seconds of
    this process, cases done, and the server's CPU seconds meanwhile (0 where unknown)."""

    wall: float
    cpu: float
    done: int
    server_cpu: float = 0.0

    def efficiency(self, latency: float, concurrency: int, n: int) -> float:
        """(N x latency / C) / wall: 1.0 when every round trip overlaps perfectly."""
        return (n * latency / concurrency) / self.wall

    def cpu_ms(self, n: int) -> float:
        """Client CPU per case, in milliseconds: CPU seconds / N x 1000."""
        return 1000 * self.cpu / n

    def text(self, latency: float, concurrency: int, n: int) -> str:
        done = f" ({self.done}/{n} done)" if self.done < n else ""
        efficiency = self.efficiency(latency, concurrency, n)
        return f"{efficiency:.2f}{done}, {self.cpu_ms(n):.2f} ms"


def pin(cpu: int) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {cpu})


def bodies(n: int) -> list[dict[str, Any]]:
    """The project's own request bodies for n benchmark cases (faithfulness, json_schema)."""
    config = JudgeConfig(model=MODEL, base_url="http://127.0.0.1:9/v1")
    judge = LLMJudge(config)
    ready = judge.prepared(load_rubric("faithfulness"))
    made = []
    for i in range(n):
        messages = ready.render(Case.model_validate(case(i)), "json_schema")
        made.append(
            judge.client.request_body(messages, "json_schema", ready.schema_name, ready.schema)
        )
    return made


async def gated(concurrency: int, jobs: list[Callable[[], Awaitable[object]]]) -> int:
    """Run `jobs`, `concurrency` at a time (that many workers taking the next job), and
    count those that succeeded. Workers rather than a task per job behind a semaphore:
    asyncio's Semaphore walks its woken waiters on every release, a quadratic cost in a
    burst of replies that would inflate the floor (judge.engine.grader.run_in_order)."""
    queue = iter(jobs)
    done = 0

    async def worker() -> None:
        nonlocal done
        for job in queue:
            try:
                await job()
            except Exception:  # a failed request is not counted; the run goes on
                continue
            done += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done


async def sdk_run(url: str, sent: list[dict[str, Any]], concurrency: int, aio: bool) -> int:
    import openai

    from judge.client._http import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    http = (openai.DefaultAioHttpClient if aio else openai.DefaultAsyncHttpxClient)(limits=limits)
    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0, http_client=http)
    try:
        return await gated(
            concurrency, [lambda b=b: client.chat.completions.create(**b) for b in sent]
        )
    finally:
        await client.close()


async def aiohttp_run(url: str, sent: list[dict[str, Any]], concurrency: int) -> int:
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def post(body: dict[str, Any]) -> object:
            async with session.post(url + "/chat/completions", json=body) as response:
                return await response.json()

        return await gated(concurrency, [lambda b=b: post(b) for b in sent])


async def project_run(config: JudgeConfig, source: Path, output: Path) -> int:
    backend = LLMJudge(config)
    try:
        grader = Grader(backend, load_rubric("faithfulness"), concurrency=config.max_in_flight)
        settle_heap()  # as `judge grade` does before its first request (once a process)
        summary = await grade_file(grader, source, output, overwrite=True, use_cache=False)
        return int(summary["status"].get("ok", 0) + summary["status"].get("abstained", 0))
    finally:
        await backend.aclose()


def timed(
    make: Callable[[], Awaitable[int]],
    timeout: float,
    server: ServerProcess | None = None,
    *,
    window: bool = True,
) -> Cell:
    """Run `make` in a fresh event loop. The wall time is the server's window (first request
    to last reply) when `server` keeps one (`window`: the minimal server), else the whole
    run's; the server's CPU time is measured when there is a `server`."""
    window = window and server is not None
    if server is not None and window:
        server.reset()
    served = server_seconds(server)
    cpu, start = time.process_time(), time.perf_counter()

    async def bounded() -> int:
        try:
            return await asyncio.wait_for(make(), timeout)
        except TimeoutError:
            return -1

    done = asyncio.run(bounded())
    wall, used = time.perf_counter() - start, time.process_time() - cpu
    served = server_seconds(server) - served
    if server is not None and window:
        seen = server.stats()
        if seen.get("first") is not None and seen.get("last") is not None:
            wall = seen["last"] - seen["first"]
    return Cell(wall, used, max(done, 0), served)


def server_seconds(server: ServerProcess | None) -> float:
    """The server process's CPU time so far (Linux /proc; 0 elsewhere or without one)."""
    try:
        return server.cpu_seconds() if server is not None else 0.0
    except OSError:
        return 0.0


def config_for(url: str, concurrency: int | str, **more: Any) -> JudgeConfig:
    return JudgeConfig(model=MODEL, base_url=url, concurrency=concurrency, use_cache=False, **more)


def rounds_of(latency: float, scale: float) -> int:
    """Round trips per row: about 8 s of ideal time at scale 1, at least 2."""
    return max(2, round(8 * scale / latency))


def run_row(
    work: Path, latency: float, concurrency: int, n: int, server_cpu: int, kind: str = "minimal"
) -> dict[str, Cell]:
    """One row of the table: the four clients, one after another, on one server."""
    source = write_cases(work / f"rows-{concurrency}-{latency}.jsonl", n)
    sent = bodies(n)
    limit = 5 * n * latency / concurrency + 30
    warm = write_cases(work / "warm.jsonl", 32)
    with ServerProcess(latency=latency, cpu=server_cpu, module=SERVERS[kind]) as server:
        url = server.base_url
        # a warm-up first: imports, connections and caches are not measured
        timed(lambda: project_run(config_for(url, 32), warm, work / "w.jsonl"), 60)
        runs: dict[str, Callable[[], Awaitable[int]]] = {
            "project": lambda: project_run(
                config_for(url, concurrency), source, work / "records.jsonl"
            ),
            "SDK + httpx": lambda: sdk_run(url, sent, concurrency, aio=False),
            "SDK + aiohttp": lambda: sdk_run(url, sent, concurrency, aio=True),
            "raw aiohttp": lambda: aiohttp_run(url, sent, concurrency),
        }
        row = {}
        for name in COLUMNS:
            print(f"  {latency:g} s, C={concurrency}: {name} ...", file=sys.stderr, flush=True)
            row[name] = timed(runs[name], limit, server, window=kind == "minimal")
    return row


def table_rows(work: Path, scale: float, server_cpu: int, kind: str = "minimal") -> list[str]:
    heads = ["latency, C", "N", *COLUMNS, "server CPU / request"]
    lines = ["| " + " | ".join(heads) + " |", "|---" * len(heads) + "|"]
    for latency, concurrency in ROWS:
        n = concurrency * rounds_of(latency, scale)
        row = run_row(work, latency, concurrency, n, server_cpu, kind)
        texts = [row[name].text(latency, concurrency, n) for name in COLUMNS]
        served = max(cell.server_cpu for cell in row.values()) / n  # the busiest run's
        texts.append(f"{1000 * served:.3f} ms")
        lines.append(f"| {latency:g} s, {concurrency} | {n} | " + " | ".join(texts) + " |")
    return lines


def profile_project(
    work: Path, latency: float, concurrency: int, n: int, cpu: int, kind: str = "minimal"
) -> str:
    """cProfile of the project's run: the top functions by own time, then the project's
    own functions (judge/) by cumulative time."""
    source = write_cases(work / "profile.jsonl", n)
    with ServerProcess(latency=latency, cpu=cpu, module=SERVERS[kind]) as server:
        config = config_for(server.base_url, concurrency)
        timed(lambda: project_run(config_for(server.base_url, 32), source, work / "w.jsonl"), 60)
        # CPU time, not wall time: on a loaded machine time spent descheduled would be
        # charged to whichever function was running
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        asyncio.run(project_run(config, source, work / "records.jsonl"))
        profiler.disable()
    parts = []
    for order, pattern, count in (("tottime", "", 25), ("cumulative", "judge/", 20)):
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).sort_stats(order)
        stats.print_stats(*([pattern] if pattern else []), count)
        text = out.getvalue()
        start = text.find("   ncalls")
        parts.append(f"by {order}{' (judge/ only)' if pattern else ''}:\n{text[start:].rstrip()}")
    return "\n\n".join(parts).replace(str(REPO) + "/", "")


def pacing_row(
    work: Path, rate: float, latency: float, n: int, cpu: int, concurrency: int | str = "auto"
) -> list[str]:
    """`--concurrency auto` (or a fixed number) against a server allowing `rate` requests
    a second."""
    source = write_cases(work / "paced.jsonl", n)
    extra = ["--rate-limit", f"{rate:g}"]
    with ServerProcess(latency=latency, cpu=cpu, extra=extra) as server:
        config = config_for(server.base_url, concurrency)
        server.reset()
        backend = LLMJudge(config)

        async def run() -> int:
            try:
                rubric = load_rubric("faithfulness")
                grader = Grader(backend, rubric, concurrency=config.max_in_flight)
                summary = await grade_file(
                    grader, source, work / "paced.jsonl.out", overwrite=True, use_cache=False
                )
                return int(summary["cases"])
            finally:
                await backend.aclose()

        cell = timed(run, 10 * n / rate + 60)
        stats = server.stats()
    sent = backend.request_summary()
    chats = stats["requests_by_path"].get("/v1/chat/completions", 0)
    refused = stats["rate_limited"]
    ideal = n / rate
    return [
        "| rate limit | latency | N | ideal N / R | wall | wall / ideal | requests sent | "
        "refused (429) | refused share | window reached | most in flight |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        f"| {rate:g}/s | {latency:g} s | {n} | {ideal:.2f} s | {cell.wall:.2f} s | "
        f"{cell.wall / ideal:.3f} | {chats} | {refused} | {refused / max(chats, 1):.2%} | "
        f"{sent.get('window', {}).get('peak')} | {sent['peak_in_flight']} |",
    ]


def model_path_startup(work: Path, cpu: int) -> list[str]:
    """`judge grade` of one case through the model path (the minimal server, no latency):
    the process's wall and CPU time, medians of 3 after a warm-up, and its top imports
    (`python -X importtime`, `benchmarks.startup`)."""
    import resource

    from benchmarks.startup import run, top_imports

    def child_cpu() -> float:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime

    source = write_cases(work / "one.jsonl", 1)
    walls, cpus = [], []
    with ServerProcess(latency=0.0, cpu=cpu, module=SERVERS["minimal"]) as server:
        args = ["grade", str(source), "--rubric", "faithfulness", "--model", MODEL]
        args += ["--base-url", server.base_url, "--no-cache", "--overwrite"]
        args += ["-o", str(work / "one.out.jsonl")]
        run(args, work)  # warms the file cache
        for _ in range(3):
            before = child_cpu()
            walls.append(run(args, work)[0])
            cpus.append(child_cpu() - before)
        _, stderr = run(args, work, importtime=True)
    return [
        "`judge grade` of one case with `--model` and `--base-url` (the minimal server), "
        f"a fresh process: {statistics.median(walls):.2f} s of wall time and "
        f"{statistics.median(cpus):.2f} s of CPU (medians of 3). Its top imports "
        "(`python -X importtime`, cumulative ms, each top-level package with what it pulled "
        "in; under load these grow with the wall time)"
        + (
            ", with PYTHONDONTWRITEBYTECODE set, so the project's own modules are compiled "
            "at every start:"
            if os.environ.get("PYTHONDONTWRITEBYTECODE")
            else ":"
        ),
        "",
        "| import | ms |",
        "|---|---|",
        *(f"| {name} | {ms:.0f} |" for name, ms in top_imports(stderr, 8)),
    ]


def load() -> str:
    """The load average (1, 5, 15 minutes), as `uptime` shows it."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def how_measured(kind: str) -> list[str]:
    """The table's legend: what each cell's two figures are and where they come from."""
    if kind == "minimal":
        server = (
            "Server: `benchmarks.minimal_server`, a fixed-latency OpenAI-compatible server on "
            "raw asyncio (keep-alive; each reply precomputed, a valid faithfulness verdict). "
            "Wall time: from the first request's arrival to the last reply's write, as that "
            "server saw them (its `/stats` window), so no client's start-up is counted."
        )
    else:
        server = (
            "Server: the judge's test server (`judge.testserver`, a rules verdict computed "
            "per request, in Python). Wall time: each client's whole run."
        )
    return [
        "Each cell: efficiency = (N x latency / C) / wall time, then client CPU per case = "
        "this process's CPU time (user + system, `time.process_time`) over the whole run / N. "
        "The server runs in its own process pinned to one CPU, the client to the other (where "
        "there are two); the server's CPU is not counted there. The last column is the "
        "server's CPU time per request (the busiest of the row's four runs): it shows the "
        "server is not what limits the row. " + server,
        "",
        "On a shared machine the figures are noisy (see the load average): compare cells of "
        "one run.",
    ]


def machine() -> str:
    import openai

    from judge.client._http import httpx

    cpus = os.cpu_count()
    versions = f"openai {openai.__version__}, {httpx.__name__} {httpx.__version__}"
    try:
        import aiohttp

        versions += f", aiohttp {aiohttp.__version__}"
    except ImportError:
        pass
    return f"{platform.platform()}, {cpus} CPUs; Python {platform.python_version()}, {versions}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.client", description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="N per row x this (0.25: quick)")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "CLIENT.md")
    parser.add_argument("--rate", type=float, default=200.0, help="the rate-limited row's R/s")
    parser.add_argument("--skip-table", action="store_true", help="only the profile and pacing")
    parser.add_argument(
        "--server",
        choices=sorted(SERVERS),
        default="minimal",
        help="the table's and the profile's server (minimal: fixed latency, the issue's)",
    )
    args = parser.parse_args(argv)
    started, load_before = time.perf_counter(), load()
    cpus = os.cpu_count() or 1
    server_cpu = cpus - 1 if cpus > 1 else -1
    pin(0)
    with tempfile.TemporaryDirectory(prefix="judge-client-bench-") as tmp:
        work = Path(tmp)
        lines: list[str] = []
        if not args.skip_table:
            print("running: the table ...", file=sys.stderr, flush=True)
            lines = table_rows(work, args.scale, server_cpu, args.server)
        print("running: the profile ...", file=sys.stderr, flush=True)
        profile_n = max(2 * 512, int(2048 * args.scale))  # >= 2 rounds
        profile = profile_project(work, 1.0, 512, profile_n, server_cpu, args.server)
        print("running: --concurrency auto against a rate limit ...", file=sys.stderr, flush=True)
        paced_n = max(1000, int(20 * args.rate * args.scale))  # >= 20 s at 50/s
        paced = pacing_row(work, args.rate, 0.2, paced_n, server_cpu)
        print("running: one case through the model path ...", file=sys.stderr, flush=True)
        startup = model_path_startup(work, server_cpu)
    command = "python -m benchmarks.client" + "".join(
        f" {a}" for a in map(shlex.quote, argv if argv is not None else sys.argv[1:])
    )
    took = time.perf_counter() - started
    text = "\n".join(
        [
            "# Client benchmark (issue 22)",
            "",
            f"Command: `{command}` (from the repository root; took {took:.0f} s)",
            f"Machine: {machine()}",
            f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average (1, 5, 15 min) "
            f"{load_before} at the start, {load()} at the end",
            "",
            *how_measured(args.server),
            "",
            *lines,
            "",
            f"## Where the project's CPU goes (cProfile on CPU time, 1 s latency, C = 512, "
            f"N = {profile_n})",
            "",
            "```",
            profile.rstrip(),
            "```",
            "",
            "## `--concurrency auto` against the test server's rate limit",
            "",
            *paced,
            "",
            "## One case through the model path",
            "",
            *startup,
            "",
        ]
    )
    args.output.write_text(text, "utf-8")
    print(text)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
