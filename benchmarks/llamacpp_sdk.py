"""The project against the bare openai SDK on a real llama.cpp server (issue 37 point 8):
`python -m benchmarks.llamacpp_sdk [--base-url URL] [--cases 8] [--concurrency 4]`.

The same requests (the bodies `judge grade --export-batch` writes, which are the bodies the
online path sends: one `request_body`) to the same server at the same concurrency:

- project: `grade_file` with the model judge (`LLMJudge`), cache off: render, send, parse,
  score, write records;
- openai SDK: `AsyncOpenAI.chat.completions.create(**body)` under a semaphore of C, reply
  parsed by the SDK, nothing else done with it.

A warm-up pass of each first (llama.cpp caches prompt prefixes per slot; after it both
clients find the same cache), then the two alternate, `--rounds` times each. Wall time is
each client's whole run in this process. Target: project / SDK <= 1.10. Without
--base-url the server is started here (.ci/llamacpp_server.py, SmolLM2-135M on the CPU).
Writes benchmarks/llamacpp_sdk.md (or `--output`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import openai

from judge.config import JudgeConfig
from judge.engine.files import grade_file
from judge.engine.grader import Grader
from judge.engine.model import LLMJudge
from judge.rubric import load_rubric

REPO = Path(__file__).resolve().parents[1]
MODEL = "smollm2-a"
FACTS = [
    ("When are invoices sent?", "Invoices are sent on the first day of each month."),
    ("How long is the return window?", "Returns are accepted within 30 days."),
    ("Is shipping free?", "Shipping is free on orders over $50."),
    ("Can I pay by card?", "We accept card and bank transfer."),
    ("Where is the warehouse?", "Our warehouse is in Reno."),
    ("How fast is a refund?", "Refunds take 5 business days."),
    ("Do you ship abroad?", "We ship to 40 countries."),
    ("Is there a warranty?", "Every jacket has a two-year warranty."),
]


def write_cases(path: Path, n: int) -> Path:
    rows = []
    for i in range(n):
        question, context = FACTS[i % len(FACTS)]
        answer = f"{context} (answer {i})"
        rows.append({"id": f"c{i}", "question": question, "contexts": [context], "answer": answer})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def export_bodies(
    source: Path, base_url: str, max_tokens: int, folder: Path
) -> list[dict[str, Any]]:
    """The request bodies the project sends, as `--export-batch` writes them."""
    requests = folder / "requests.jsonl"
    command = [sys.executable, "-m", "judge.cli", "grade", str(source), "--rubric", "relevance",
               "--model", MODEL, "--base-url", base_url, "--max-tokens", str(max_tokens),
               "--export-batch", str(requests), "--no-cache"]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, cwd=REPO)
    return [json.loads(line)["body"] for line in requests.read_text("utf-8").splitlines()]


async def sdk_run(base_url: str, bodies: list[dict[str, Any]], concurrency: int) -> int:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="no-key", max_retries=0, timeout=600)
    gate = asyncio.Semaphore(concurrency)

    async def one(body: dict[str, Any]) -> object:
        async with gate:
            return await client.chat.completions.create(**body)

    try:
        replies = await asyncio.gather(*(one(b) for b in bodies))
    finally:
        await client.close()
    return len(replies)


async def project_run(config: JudgeConfig, source: Path, output: Path) -> int:
    backend = LLMJudge(config)
    try:
        grader = Grader(backend, load_rubric("relevance"), concurrency=config.max_in_flight)
        summary = await grade_file(grader, source, output, overwrite=True, use_cache=False)
        return sum(summary["status"].values())
    finally:
        await backend.aclose()


def timed(make: Any) -> float:
    started = time.perf_counter()
    asyncio.run(make())
    return time.perf_counter() - started


def start_server(folder: Path, parallel: int) -> tuple[subprocess.Popen[bytes], str]:
    address = folder / "address"
    command = [sys.executable, str(REPO / ".ci" / "llamacpp_server.py"), "--address-file",
               str(address), "--parallel", str(parallel)]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not address.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the llama.cpp server did not start")
        time.sleep(0.2)
    return process, address.read_text().strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="a running llama.cpp server serving smollm2-a")
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "llamacpp_sdk.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        process = None
        base_url = args.base_url
        if base_url is None:
            process, base_url = start_server(folder, args.concurrency)
        try:
            source = write_cases(folder / "cases.jsonl", args.cases)
            bodies = export_bodies(source, base_url, args.max_tokens, folder)
            config = JudgeConfig(model=MODEL, base_url=base_url, max_tokens=args.max_tokens,
                                 concurrency=args.concurrency, timeout=600)  # fmt: skip
            out = folder / "records.jsonl"
            sdk = lambda: sdk_run(base_url, bodies, args.concurrency)  # noqa: E731
            project = lambda: project_run(config, source, out)  # noqa: E731
            timed(sdk), timed(project)  # warm-up: both find the prompt cache warm after
            walls: dict[str, list[float]] = {"sdk": [], "project": []}
            for _ in range(args.rounds):
                walls["sdk"].append(timed(sdk))
                walls["project"].append(timed(project))
        finally:
            if process is not None:
                process.terminate()
                process.wait(timeout=60)
    write_report(args, walls)
    print(args.output.read_text("utf-8"))
    return 0


def write_report(args: argparse.Namespace, walls: dict[str, list[float]]) -> None:
    sdk, project = statistics.median(walls["sdk"]), statistics.median(walls["project"])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# The project against the bare openai SDK on a real llama.cpp server",
        "",
        f"`python -m benchmarks.llamacpp_sdk --cases {args.cases} --concurrency "
        f"{args.concurrency} --max-tokens {args.max_tokens} --rounds {args.rounds}` "
        f"({datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {load:.1f} at the end).",
        "",
        "SmolLM2-135M-Instruct Q4_1 on llama.cpp (xllamacpp, CPU), relevance rubric, the same",
        "request bodies (`--export-batch`), the same concurrency; wall time per run, seconds.",
        "",
        "| client | runs (s) | median (s) |",
        "|---|---|---|",
        f"| openai SDK | {', '.join(f'{w:.2f}' for w in walls['sdk'])} | {sdk:.2f} |",
        f"| project | {', '.join(f'{w:.2f}' for w in walls['project'])} | {project:.2f} |",
        "",
        f"**project / SDK = {project / sdk:.3f}** (target <= 1.10).",
        "",
    ]
    args.output.write_text("\n".join(lines), "utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
