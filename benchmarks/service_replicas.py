"""Throughput of `judge serve` replicas on one PostgreSQL database (issue 27).

    python benchmarks/service_replicas.py --database postgresql://judge@127.0.0.1:5432/postgres \
        [--replicas 1,2,3] [--jobs 4] [--cases 400] [--latency 0.2]

The judge is the OpenAI-compatible test server (judge.testing) answering every request after
a fixed `--latency`, so the work is latency-bound, as a remote model is; each replica's
concurrency is fixed: the judge's `--concurrency` requests in flight (one budget per judge
per server), fed by `--workers` chunks graded at a time. For
each replica count the script makes a fresh database on the server `--database` names,
starts that many `python -m judge.cli serve --database ...` processes, submits `--jobs`
uploads of `--cases` distinct cases round-robin, and times submission to the last job
`done`; then it checks every job has one record per case and drops the database. Ideal
throughput is replicas x concurrency / latency. Writes
benchmarks/service_replicas.md (and prints the same table).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import yaml

from judge.testing import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "benchmarks" / "service_replicas.md"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_replica(config: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_"))}
    port = free_port()
    command = [sys.executable, "-m", "judge.cli", "serve", "--port", str(port)]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [*command, "--config", str(config)], cwd=REPO, env=env, stderr=out, stdout=out
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"judge serve exited at startup: {log.read_text()}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("judge serve did not start within 60 s")


def upload(job: int, cases: int) -> str:
    return "".join(
        json.dumps(
            {
                "id": f"j{job}-c{i:05d}",
                "question": "How long is the free trial?",
                "contexts": ["The free trial lasts 14 days."],
                "answer": f"The free trial lasts {i} days.",
            }
        )
        + "\n"
        for i in range(cases)
    )


def run(args: argparse.Namespace, replicas: int, judge: FakeOpenAIServer, folder: Path) -> float:
    """Seconds from the first submission to the last job done, with `replicas` servers."""
    name = f"judge_bench_{secrets.token_hex(4)}"
    with psycopg.connect(args.database, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = urlunsplit(urlsplit(args.database)._replace(path=f"/{name}"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        urls = []
        for n in range(replicas):
            config = folder / f"r{replicas}-{n}.yaml"
            settings = {
                "judges": {
                    "bench": {
                        "model": "judge-test-2024-01-01",
                        "base_url": judge.base_url,
                        "concurrency": args.concurrency,
                        "max_retries": 0,
                        "timeout": 30,
                    }
                },
                "database": url,
                "data_dir": str(folder / f"r{replicas}-{n}-data"),
                "cache_dir": str(folder / f"r{replicas}-{n}-cache"),
                "use_cache": False,
                "limits": {"running_jobs": args.workers},
                "replicas": {"chunk_cases": args.chunk, "lease_s": 30, "poll_s": 0.05},
            }
            config.write_text(yaml.safe_dump(settings), "utf-8")
            proc, base = start_replica(config, folder / f"r{replicas}-{n}.log")
            procs.append(proc)
            urls.append(base)
        bodies = [upload(job, args.cases) for job in range(args.jobs)]
        started = time.perf_counter()
        ids = []
        for job, body in enumerate(bodies):
            created = httpx.post(
                urls[job % replicas] + "/v1/jobs?rubric=faithfulness",
                content=body,
                headers={"Content-Type": "application/x-ndjson"},
                timeout=60,
            )
            created.raise_for_status()
            ids.append(created.json()["id"])
        deadline = time.monotonic() + args.timeout
        pending = list(ids)
        while pending:
            if time.monotonic() > deadline:
                raise SystemExit(f"{len(pending)} jobs not done within {args.timeout} s")
            state = httpx.get(f"{urls[0]}/v1/jobs/{pending[0]}", timeout=30).json()
            if state["status"] == "done":
                pending.pop(0)
            elif state["status"] != "running" and state["status"] != "queued":
                raise SystemExit(f"job {state['id']} ended {state['status']}: {state['error']}")
            else:
                time.sleep(0.05)
        elapsed = time.perf_counter() - started
        for job, job_id in enumerate(ids):
            lines = httpx.get(f"{urls[0]}/v1/jobs/{job_id}/records", timeout=60).text.splitlines()
            got = [json.loads(line)["id"] for line in lines]
            if got != [f"j{job}-c{i:05d}" for i in range(args.cases)]:
                raise SystemExit(f"job {job_id}: records are not one per case in input order")
        return elapsed
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        with psycopg.connect(args.database, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True, help="a PostgreSQL server's URL")
    parser.add_argument("--replicas", default="1,2,3", help="replica counts (1,2,3)")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--cases", type=int, default=400, help="cases per job")
    parser.add_argument("--latency", type=float, default=0.2, help="judge seconds per request")
    parser.add_argument("--concurrency", type=int, default=8, help="judge requests in flight")
    parser.add_argument("--workers", type=int, default=2, help="chunks a replica grades at once")
    parser.add_argument("--chunk", type=int, default=25, help="cases per chunk")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    counts = [int(n) for n in args.replicas.split(",")]
    load = os.getloadavg()[0]
    total = args.jobs * args.cases
    rows = []
    with FakeOpenAIServer(latency=args.latency) as judge, tempfile.TemporaryDirectory() as tmp:
        for replicas in counts:
            seconds = run(args, replicas, judge, Path(tmp))
            ideal = replicas * args.concurrency / args.latency
            rows.append((replicas, seconds, total / seconds, ideal))
            print(
                f"{replicas} replica(s): {seconds:.1f} s, {total / seconds:.1f} cases/s", flush=True
            )
    base = rows[0][2]
    lines = [
        "# Replicas on PostgreSQL (`benchmarks/service_replicas.py`)",
        "",
        "`judge serve --database postgresql://...` processes on one database (PostgreSQL "
        f"{_server_version(args.database)}), each with a fixed concurrency ({args.concurrency} judge "
        f"requests in flight, fed by {args.workers} chunks of {args.chunk} cases at a time), against the "
        f"test server answering each request after {args.latency:g} s: a latency-bound judge. "
        "The ideal is the requests in flight over the latency. "
        f"{args.jobs} jobs of {args.cases} distinct cases, submitted round-robin; time from the "
        "first submission to the last job `done`; every job checked for one record per case in "
        "input order.",
        "",
        f"Machine: {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average before the run {load:.2f} (the replicas, the "
        "test server and PostgreSQL share these CPUs).",
        "",
        "Command: `python benchmarks/service_replicas.py --database URL "
        f"--replicas {args.replicas} --jobs {args.jobs} --cases {args.cases} --latency "
        f"{args.latency:g} --concurrency {args.concurrency} --workers {args.workers} "
        f"--chunk {args.chunk}`",
        "",
        "| replicas | wall time | throughput | speed-up | ideal | of ideal |",
        "|---|---|---|---|---|---|",
    ]
    for replicas, seconds, rate, ideal in rows:
        lines.append(
            f"| {replicas} | {seconds:.1f} s | {rate:.1f} cases/s | {rate / base:.2f}x | "
            f"{ideal:.0f} cases/s | {rate / ideal:.0%} |"
        )
    REPORT.write_text("\n".join(lines) + "\n", "utf-8")
    print("\n".join(lines))
    return 0


def _server_version(url: str) -> str:
    with psycopg.connect(url) as db:
        row = db.execute("SHOW server_version").fetchone()
    return str(row[0]).split()[0] if row else "?"


if __name__ == "__main__":
    raise SystemExit(main())
