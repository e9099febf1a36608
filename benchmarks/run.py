"""Speed, cost and scale figures (issue 6 item 4, issue 3): `python -m benchmarks [--quick]`.

Prints a table and writes `benchmarks/RESULTS.md` with the machine and the command. These
are figures, not pass/fail tests: every target is reported, met or not, with what was
measured. Inputs are generated into a temporary folder; the timed runs talk to the test
server in its own process, so the client's CPU time never includes the server's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.cases import write_cases
from benchmarks.server import ServerProcess
from benchmarks.tokens import o200k_counter
from judge.config import JudgeConfig
from judge.engine.files import grade_file
from judge.engine.grader import Grader
from judge.engine.model import LLMJudge
from judge.rubric import load_rubric
from judge.schemas import GradedRecord
from judge.testing import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[1]
PEERS = REPO / "tests" / "data" / "peers" / "cases.jsonl"
MODEL = "judge-test-2024-01-01"
# tests/data/peers/SOURCE.md: requests and median prompt tokens per case
PEER_FIGURES = {
    "faithfulness": "Ragas 2 req, 1,265-1,694 tok; DeepEval 4 req, 1,636 tok",
    "relevance": "Ragas 1 req + 2 embeddings, 394-536 tok; DeepEval 3 req, 1,206 tok",
}


@dataclass
class Row:
    name: str
    measured: str
    target: str
    met: bool | None  # None: no target, a figure only

    @property
    def verdict(self) -> str:
        return {True: "met", False: "NOT met", None: "-"}[self.met]


@dataclass
class Timed:
    wall: float
    client_cpu: float
    server_cpu: float
    stats: dict[str, Any]
    summary: dict[str, Any]


def judge_config(base_url: str, concurrency: int, cache_dir: Path | None) -> JudgeConfig:
    return JudgeConfig(
        model=MODEL,
        base_url=base_url,
        concurrency=concurrency,
        cache_dir=cache_dir,
        use_cache=cache_dir is not None,
    )


async def grade_once(
    config: JudgeConfig, source: Path, output: Path, rubric: str
) -> dict[str, Any]:
    backend = LLMJudge(config)
    cache = None
    if config.use_cache and config.cache_dir is not None:
        from judge.engine.cache import VerdictCache

        cache = VerdictCache(config.cache_dir)
    try:
        grader = Grader(backend, load_rubric(rubric), cache=cache, concurrency=config.max_in_flight)
        return await grade_file(grader, source, output, overwrite=True, use_cache=config.use_cache)
    finally:
        await backend.aclose()
        if cache is not None:
            cache.close()


def timed_run(server: ServerProcess, config: JudgeConfig, source: Path, work: Path) -> Timed:
    """One grading run in this process, timed, with the server's counters reset first."""
    server.reset()
    server_cpu, cpu, start = server.cpu_seconds(), time.process_time(), time.perf_counter()
    summary = asyncio.run(grade_once(config, source, work / "records.jsonl", "faithfulness"))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return Timed(wall, cpu, server.cpu_seconds() - server_cpu, server.stats(), summary)


def warm_up(server: ServerProcess, work: Path) -> None:
    """Imports, connections and caches of the first run are not what we measure."""
    source = write_cases(work / "warm.jsonl", 64)
    asyncio.run(
        grade_once(
            judge_config(server.base_url, 32, None), source, work / "w.jsonl", "faithfulness"
        )
    )


# ---- the benchmarks --------------------------------------------------------------------


def bench_concurrency(work: Path, cases: int) -> tuple[list[Row], dict[str, Any]]:
    """Efficiency = ideal / actual wall time at 100 ms latency, concurrency 32; and the client's
    CPU per case (the server runs in another process, so none of its time is counted)."""
    source = write_cases(work / "conc.jsonl", cases)
    with ServerProcess(latency=0.1) as server:
        warm_up(server, work)
        run = timed_run(server, judge_config(server.base_url, 32, None), source, work)
    ideal = cases * 0.1 / 32
    efficiency = ideal / run.wall
    per_case_ms = 1000 * run.client_cpu / cases
    rows = [
        Row(
            f"concurrency efficiency ({cases} cases, 100 ms, concurrency 32)",
            f"{efficiency:.2f} (ideal {ideal:.2f} s, actual {run.wall:.2f} s, "
            f"peak in flight {run.stats['peak_concurrency']})",
            ">= 0.90",
            efficiency >= 0.90,
        ),
        Row(
            "client CPU per case (server excluded)",
            f"{per_case_ms:.2f} ms (server used {1000 * run.server_cpu / cases:.2f} ms/case apart)",
            "<= 2 ms",
            per_case_ms <= 2.0,
        ),
    ]
    return rows, {"requests": run.stats["requests"], "status": run.summary["status"]}


async def _bare_requests(url: str, bodies: list[dict[str, Any]], sdk: bool) -> None:
    """The same requests with no engine around them: the openai SDK alone, or httpx alone
    (the SDK's own: httpx2 under openai 3.x)."""
    import openai

    from judge.client._http import httpx

    limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
    gate = asyncio.Semaphore(32)
    if sdk:
        client = openai.AsyncOpenAI(
            base_url=url,
            api_key="x",
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(limits=limits),
        )

        async def one(body: dict[str, Any]) -> None:
            async with gate:
                await client.chat.completions.create(**body)

        await asyncio.gather(*(one(b) for b in bodies))
        await client.close()
        return
    plain = httpx.AsyncClient(limits=limits)

    async def post(body: dict[str, Any]) -> None:
        async with gate:
            (await plain.post(url + "/chat/completions", json=body)).json()

    await asyncio.gather(*(post(b) for b in bodies))
    await plain.aclose()


def bench_floor(work: Path, cases: int) -> list[Row]:
    """What the HTTP stack costs without the engine: the floor under the two rows above."""
    from benchmarks.cases import case
    from judge.schemas import Case

    rubric = load_rubric("faithfulness")
    schema = {"name": rubric.schema_name, "schema": rubric.json_schema(), "strict": True}
    bodies = [
        {
            "model": MODEL,
            "messages": rubric.render(Case.model_validate(case(i))),
            "temperature": 0.0,
        }
        | {
            "max_tokens": 1024,
            "seed": 42,
            "response_format": {"type": "json_schema", "json_schema": schema},
        }
        for i in range(cases)
    ]
    rows = []
    with ServerProcess(latency=0.1) as server:
        for label, sdk in (("openai SDK alone", True), ("httpx alone", False)):
            asyncio.run(_bare_requests(server.base_url, bodies[:64], sdk))
            cpu, start = time.process_time(), time.perf_counter()
            asyncio.run(_bare_requests(server.base_url, bodies, sdk))
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            rows.append(
                Row(
                    f"floor: same {cases} requests, {label} (no engine)",
                    f"efficiency {cases * 0.1 / 32 / wall:.2f}, client CPU {1000 * cpu / cases:.2f} ms/request",
                    "figure only",
                    None,
                )
            )
    return rows


def bench_latency_overhead(work: Path, cases: int) -> list[Row]:
    """Issue 3: time at 200 ms latency minus time at zero latency, against the ideal."""
    source = write_cases(work / "lat.jsonl", cases)
    walls = {}
    for latency in (0.0, 0.2):
        with ServerProcess(latency=latency) as server:
            warm_up(server, work)
            walls[latency] = timed_run(
                server, judge_config(server.base_url, 32, None), source, work
            ).wall
    ideal = cases / 32 * 0.2
    ratio = (walls[0.2] - walls[0.0]) / ideal
    return [
        Row(
            f"latency cost ({cases} cases, 200 ms, concurrency 32)",
            f"{ratio:.2f} x ideal ({walls[0.2]:.2f} s - {walls[0.0]:.2f} s at 0 ms = "
            f"{walls[0.2] - walls[0.0]:.2f} s; ideal {ideal:.2f} s)",
            "<= 1.15 x ideal",
            ratio <= 1.15,
        )
    ]


def bench_warm_cache(work: Path, cases: int) -> list[Row]:
    source = write_cases(work / "cache.jsonl", cases)
    cache_dir = work / "cache"
    with ServerProcess(latency=0.0) as server:
        config = judge_config(server.base_url, 32, cache_dir)
        asyncio.run(grade_once(config, source, work / "cold.jsonl", "faithfulness"))
        warm = timed_run(server, config, source, work)
    sent = warm.stats["requests"]
    rate = cases / warm.wall
    return [
        Row("warm cache: requests sent on a re-run", str(sent), "0", sent == 0),
        Row(
            f"warm cache: cached cases per second ({cases} cases)",
            f"{rate:,.0f} /s ({warm.summary.get('cached', '?')} served from cache)",
            ">= 2,000 /s",
            rate >= 2000,
        ),
    ]


def peak_rss_mib(command: list[str]) -> float:
    """Peak resident memory of one child process, from its own rusage (like /usr/bin/time)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} failed: {process.stderr.read().decode()}")  # type: ignore[union-attr]
    return usage.ru_maxrss / 1024  # KiB on Linux


def bench_memory(work: Path, small: int, large: int) -> list[Row]:
    peaks = {}
    for count in (small, large):
        source = write_cases(work / f"mem{count}.jsonl", count)
        command = [sys.executable, "-m", "judge.cli", "grade", str(source), "--rubric"]
        command += ["faithfulness", "--offline", "-o", str(work / f"mem{count}.out.jsonl")]
        peaks[count] = peak_rss_mib(command)
        source.unlink()
    growth = peaks[large] / peaks[small] - 1
    return [
        Row(
            f"peak memory, offline judge: {large:,} vs {small:,} cases",
            f"{peaks[large]:.1f} MiB vs {peaks[small]:.1f} MiB ({growth:+.1%})",
            "within 10%",
            abs(growth) <= 0.10,
        )
    ]


def bench_peers(work: Path, peers: Path) -> tuple[list[Row], str]:
    """Requests and median prompt tokens per case on the peers' 20 cases, o200k_base."""
    count, how = o200k_counter()
    if not peers.exists():
        return [Row("peers' cases", f"not run: {peers} missing", "-", None)], how
    rows = []
    limits = {"faithfulness": 632, "relevance": 394}
    for rubric, limit in limits.items():
        with FakeOpenAIServer(token_counter=count) as server:
            config = judge_config(server.base_url, 8, None)
            asyncio.run(grade_once(config, peers, work / f"peers.{rubric}.jsonl", rubric))
            lines = (work / f"peers.{rubric}.jsonl").read_text("utf-8").splitlines()
            records = [GradedRecord.model_validate_json(line) for line in lines]
            requests = server.stats.requests / len(records)
        tokens = statistics.median(r.usage.prompt_tokens for r in records)
        rows.append(
            Row(
                f"{rubric} on the peers' {len(records)} cases",
                f"{requests:g} request, {tokens:,.0f} prompt tokens per case (median, "
                f"max {max(r.usage.prompt_tokens for r in records)}); peers: {PEER_FIGURES[rubric]}",
                f"1 request, <= {limit} tokens",
                requests == 1 and tokens <= limit,
            )
        )
    return rows, how


# ---- report ----------------------------------------------------------------------------


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        memory = float("nan")
    import httpx
    import openai
    import uvicorn

    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} CPUs, "
        f"{memory:.1f} GiB RAM; Python {platform.python_version()}, openai {openai.__version__}, "
        f"httpx {httpx.__version__}, test server uvicorn {uvicorn.__version__} (h11)"
    )


def bench_service(requests: int, concurrency: int) -> list[Row]:
    """Issue 8: `judge serve` on the offline judge, driven from a second process's client."""
    from benchmarks.service_load import measure, percentile

    latencies, errors, elapsed = measure(requests, concurrency)
    measured = (
        f"{len(errors)} errors; p50 {percentile(latencies, 50):.0f} ms, "
        f"p99 {percentile(latencies, 99):.0f} ms; {len(latencies) / elapsed:.0f} requests/s"
    )
    name = f"service load ({requests:,} POST /v1/grade, {concurrency} concurrent, offline judge)"
    return [Row(name, measured, "no errors; p50 and p99 reported", not errors)]


def table(rows: list[Row]) -> str:
    lines = ["| benchmark | measured | target | result |", "|---|---|---|---|"]
    lines += [f"| {r.name} | {r.measured} | {r.target} | {r.verdict} |" for r in rows]
    return "\n".join(lines)


def write_results(
    path: Path, rows: list[Row], command: str, tokens_how: str, seconds: float
) -> None:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    text = f"""# Benchmark results

Command: `{command}` (from the repository root; took {seconds:.0f} s)
Machine: {machine()}
Date: {when}

{table(rows)}

How each figure is measured:
- Timed runs grade synthetic faithfulness cases (generated into a temporary folder) through
  `judge.engine.files.grade_file` with the model judge (`LLMJudge`), cache off, against
  `python -m judge.testserver` in its own process at the stated latency. A 64-case warm-up
  run comes first. Ideal time = cases x latency / concurrency.
- Client CPU per case = CPU time of the benchmark process (`time.process_time`) over the
  timed run / cases; the server's CPU time is read from its own process and shown apart.
- Latency cost (issue 3) = wall time at 200 ms minus wall time at 0 ms, over the ideal
  cases / 32 x 0.2 s.
- Warm cache: the same cases graded twice with one cache folder; the second run is timed
  and the server's request counter is read after it.
- Peak memory: `judge grade --offline` in a child process; peak RSS from that child's
  rusage (`os.wait4`), like `/usr/bin/time -v`.
- Peers: `tests/data/peers/cases.jsonl` graded through the in-process test server, which
  counts prompt tokens per request as the peers' README says (every message's text plus the
  JSON schema sent in `response_format`). Token counter: {tokens_how}.
  Tokens per case are the median of each record's `usage.prompt_tokens`.
- Service load: `judge serve` (one uvicorn process, offline rules judge) on 127.0.0.1,
  driven by this process's async httpx client (`benchmarks/service_load.py`, which can
  also run alone); latency from send to full response, nearest-rank percentiles.
- Floor rows: the same 1,000 request bodies sent with no engine around them (the openai SDK
  alone, then httpx alone), to show what the HTTP stack itself costs on this machine.
- Timings vary with the machine and its load (load average at the start: {load}); on a
  shared 2-CPU machine the client, the server process and other work compete for the CPUs,
  so the efficiency and CPU rows move by tens of percent between runs. Compare the engine's
  rows with the floor rows of the same run.
"""
    path.write_text(text, "utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller runs (about a minute)")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "RESULTS.md")
    parser.add_argument("--peers", type=Path, default=PEERS, help="the peers' cases.jsonl")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="judge-bench-") as tmp:
        work = Path(tmp)
        steps = [
            ("concurrency", lambda: bench_concurrency(work, 1000)[0]),
            ("floor", lambda: bench_floor(work, 1000)),
            ("latency", lambda: bench_latency_overhead(work, 640)),
            ("cache", lambda: bench_warm_cache(work, 2000 if args.quick else 10_000)),
            (
                "memory",
                lambda: bench_memory(work, *((2_000, 20_000) if args.quick else (10_000, 100_000))),
            ),
        ]
        for name, step in steps:
            print(f"running: {name} ...", file=sys.stderr, flush=True)
            rows += step()
        print("running: service ...", file=sys.stderr, flush=True)
        rows += bench_service(500 if args.quick else 2000, 50)
        print("running: peers ...", file=sys.stderr, flush=True)
        peer_rows, tokens_how = bench_peers(work, args.peers)
        rows += peer_rows
    command = "python -m benchmarks" + (" --quick" if args.quick else "")
    print(table(rows))
    print(f"token counter: {tokens_how}")
    write_results(args.output, rows, command, tokens_how, time.perf_counter() - started)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0
