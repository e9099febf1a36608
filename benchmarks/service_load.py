"""Load test of the grading service: `judge serve` in its own process, driven from this one.

    python benchmarks/service_load.py [--requests 2000] [--concurrency 50] [--cases-per-request 1]

Starts `python -m judge.cli serve` on a free loopback port with the offline rules judge and
a temporary data dir, sends `--requests` POST /v1/grade requests (cases from
examples/cases.jsonl, in turn) with at most `--concurrency` in flight over a few small HTTP/1.1
connection pools, and reports errors, throughput and latency percentiles. Writes
benchmarks/service_load.md (and prints the same figures). Bounded: a fixed number of
requests, each with a timeout; the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "benchmarks" / "service_load.md"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_"))}
    command = [sys.executable, "-m", "judge.cli", "serve", "--port", str(port)]
    command += ["--data-dir", str(data_dir), "--cache-dir", str(data_dir / "cache")]
    proc = subprocess.Popen(command, cwd=REPO, env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("judge serve exited at startup")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("judge serve did not start within 30 s")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, round(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


async def drive(
    base_url: str, bodies: list[bytes], requests: int, concurrency: int
) -> tuple[list[float], list[str], float]:
    latencies: list[float] = []
    errors: list[str] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(requests):
        queue.put_nowait(index)
    # Several small pools: one httpx pool of 50 connections rescans them all per request and
    # makes the load generator, not the service, the bottleneck (same fix as judge/client/_chat.py).
    shards = -(-concurrency // 10)
    size = -(-concurrency // shards)
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    headers = {"Content-Type": "application/json"}
    clients = [
        httpx.AsyncClient(base_url=base_url, limits=limits, timeout=30) for _ in range(shards)
    ]

    async def worker(client: httpx.AsyncClient) -> None:
        while not queue.empty():
            index = queue.get_nowait()
            start = time.perf_counter()
            try:
                response = await client.post(
                    "/v1/grade", content=bodies[index % len(bodies)], headers=headers
                )
                ok = response.status_code == 200 and response.json()["records"]
                if not ok:
                    errors.append(f"HTTP {response.status_code}: {response.text[:200]}")
            except httpx.HTTPError as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
            latencies.append((time.perf_counter() - start) * 1000)

    began = time.perf_counter()
    try:
        await asyncio.gather(*(worker(clients[i % shards]) for i in range(concurrency)))
    finally:
        for client in clients:
            await client.aclose()
    elapsed = time.perf_counter() - began
    return latencies, errors, elapsed


def request_bodies(per_request: int) -> list[bytes]:
    cases = [
        json.loads(line) for line in (REPO / "examples" / "cases.jsonl").open(encoding="utf-8")
    ]
    bodies = []
    for start in range(0, len(cases), per_request):
        chunk = cases[start : start + per_request]
        bodies.append(json.dumps({"rubric": "faithfulness@1", "cases": chunk}).encode())
    return bodies


def report(
    args: argparse.Namespace, latencies: list[float], errors: list[str], elapsed: float
) -> str:
    rows = [
        ("requests", f"{len(latencies)}"),
        ("concurrency", f"{args.concurrency}"),
        ("cases per request", f"{args.cases_per_request}"),
        ("errors", f"{len(errors)}"),
        ("wall time", f"{elapsed:.2f} s"),
        ("throughput", f"{len(latencies) / elapsed:.0f} requests/s"),
        ("latency p50", f"{percentile(latencies, 50):.1f} ms"),
        ("latency p90", f"{percentile(latencies, 90):.1f} ms"),
        ("latency p99", f"{percentile(latencies, 99):.1f} ms"),
        ("latency max", f"{max(latencies):.1f} ms"),
        ("latency mean", f"{statistics.fmean(latencies):.1f} ms"),
    ]
    machine = f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    lines = [
        "# Service load test (`benchmarks/service_load.py`)",
        "",
        "`judge serve` (one uvicorn process, offline rules judge) on 127.0.0.1, driven by a",
        "second process: `POST /v1/grade` with cases from `examples/cases.jsonl`, latency",
        "measured by the client from send to full response (nearest-rank percentiles).",
        "",
        f"Machine: {machine}; load average before the run {args.load_before:.2f} (the",
        "client and the server share these CPUs, so figures move with other load).",
        "",
        "| measure | value |",
        "|---|---|",
        *(f"| {name} | {value} |" for name, value in rows),
        "",
    ]
    if errors:
        lines += ["First errors:", "", *(f"- {e}" for e in errors[:5]), ""]
    return "\n".join(lines)


def measure(
    requests: int, concurrency: int, cases_per_request: int = 1
) -> tuple[list[float], list[str], float]:
    """Start the service, warm it up, send `requests` grade requests; stop it. Latencies in
    ms, the first errors, and the wall time of the timed part."""
    with tempfile.TemporaryDirectory(prefix="judge-load-") as tmp:
        port = free_port()
        server = start_server(Path(tmp), port)
        try:
            bodies = request_bodies(cases_per_request)
            base_url = f"http://127.0.0.1:{port}"
            asyncio.run(drive(base_url, bodies, min(concurrency * 2, 100), concurrency))
            return asyncio.run(drive(base_url, bodies, requests, concurrency))
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--cases-per-request", type=int, default=1)
    parser.add_argument("--output", type=Path, default=REPORT)
    args = parser.parse_args(argv)
    args.load_before = os.getloadavg()[0]
    latencies, errors, elapsed = measure(args.requests, args.concurrency, args.cases_per_request)
    text = report(args, latencies, errors, elapsed)
    args.output.write_text(text, "utf-8")
    print(text)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
