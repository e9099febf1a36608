"""`judge view` on a large run: first page cold and warm, filters, searches and sorts, and
the server's peak memory.

    python benchmarks/view.py [--records 1000000] [--distinct 10000] [--write]

1. Cases: `--distinct` synthetic faithfulness cases (benchmarks.rules_large's seeded text:
   three contexts of three sentences, an answer of three sentences, half copied from the
   contexts; one of five slices), graded by the rules judge (`judge grade --offline`).
2. The run: those records replicated to `--records` (ids `c0000123-r0042`; cases likewise),
   since grading a million cases with the rules judge takes hours on a shared 2-core
   machine (about 100 a second there). Every 100th replica record is turned into a
   `parse_error` (score and label null, the raw reply kept) so the status filter has
   something to find.
3. `judge view RUN --cases CASES --port 0` in its own process (index folder in a temporary
   directory). Timed with httpx from this process:
   - build: first `GET /api/runs` of a new server with no index (DuckDB builds it);
   - cold: a new server with the index on disk, process start to the first records page
     (`/api/runs`, then `/api/runs/ID/records?limit=50`);
   - warm: the same page again (median of 5);
   - each filter, search and sort below (median and max of 3);
   - the server's peak resident memory (VmHWM of /proc/PID/status) at the end.
`--write` writes benchmarks/view.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from benchmarks.rules_large import TextMaker  # noqa: E402

REPORT = REPO / "benchmarks" / "view.md"
SLICES = ["billing", "shipping", "returns", "account", "security"]
QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("status=parse_error", {"status": "parse_error"}),
    ("slice=billing", {"slice": "billing"}),
    ("label=unfaithful", {"label": "unfaithful"}),
    ("min_score=0.3&max_score=0.7", {"min_score": 0.3, "max_score": 0.7}),
    (
        "slice=returns&label=faithful&min_score=1",
        {"slice": "returns", "label": "faithful", "min_score": 1},
    ),
    ("q=<a common word>", {"q": "dada"}),
    ("q=<an id>", {"q": "c0004242-r0077"}),
    ("q=<a rare word, no match>", {"q": "zzqxv"}),
    ("sort=score&order=desc", {"sort": "score", "order": "desc"}),
    ("sort=id&order=desc", {"sort": "id", "order": "desc"}),
    ("sort=score, offset 500000", {"sort": "score", "offset": 500_000}),
    (
        "q=dada&slice=billing&sort=score&order=desc",
        {"q": "dada", "slice": "billing", "sort": "score", "order": "desc"},
    ),
]


def make_cases(path: Path, n: int, seed: int = 1) -> None:
    text, rng = TextMaker(seed), random.Random(seed + 1)
    with path.open("w") as out:
        for i in range(n):
            contexts = [" ".join(text.sentence() for _ in range(3)) for _ in range(3)]
            copied = [s for c in contexts for s in re.split(r"(?<=\.) ", c)]
            answer = " ".join(
                rng.choice(copied) if rng.random() < 0.5 else text.sentence() for _ in range(3)
            )
            case = {
                "id": f"c{i:07d}",
                "question": text.sentence().rstrip(".") + "?",
                "contexts": contexts,
                "answer": answer,
                "slices": [rng.choice(SLICES)],
            }
            out.write(json.dumps(case) + "\n")


def replicate(cases: Path, graded: Path, total: int, out_cases: Path, out_records: Path) -> None:
    case_lines = cases.read_text().splitlines()
    record_lines = graded.read_text().splitlines()
    copies = -(-total // len(record_lines))
    written = 0
    with out_cases.open("w") as oc, out_records.open("w") as orec:
        for r in range(copies):
            for case_line, record_line in zip(case_lines, record_lines, strict=True):
                if written == total:
                    return
                case, record = json.loads(case_line), json.loads(record_line)
                new_id = f"{case['id']}-r{r:04d}"
                case["id"] = record["id"] = new_id
                if r and written % 100 == 0:
                    record.update(status="parse_error", score=None, label=None, verdict=None)
                    record.update(raw='{"claims": [', error="reply is not JSON")
                oc.write(json.dumps(case) + "\n")
                orec.write(json.dumps(record, separators=(",", ":")) + "\n")
                written += 1


class Server:
    def __init__(self, run: Path, cases: Path, index: Path) -> None:
        env = {**os.environ, "JUDGE_VIEW_INDEX": str(index), "PYTHONPATH": str(REPO)}
        command = [sys.executable, "-m", "judge.cli", "view", str(run), "--cases", str(cases)]
        self.started = time.perf_counter()
        self.process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        match = re.search(r"open (http://\S+)/\?token=(\S+)", line)
        if not match:
            self.stop()
            raise RuntimeError(f"judge view did not start: {line}")
        self.url, token = match.group(1), match.group(2)
        self.client = httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=3600)

    def get(self, path: str, **params: Any) -> tuple[float, Any]:
        start = time.perf_counter()
        response = self.client.get(self.url + path, params=params)
        response.raise_for_status()
        return time.perf_counter() - start, response.json()

    def peak_rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024  # type: ignore[union-attr]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def first_page(server: Server) -> tuple[float, str, int]:
    _, runs = server.get("/api/runs")
    run = runs[0]["id"]
    _, page = server.get(f"/api/runs/{run}/records", limit=50)
    return time.perf_counter() - server.started, run, page["total"]


def measure(total: int, distinct: int, folder: Path) -> dict[str, Any]:
    cases, graded = folder / "distinct.jsonl", folder / "distinct.graded.jsonl"
    make_cases(cases, distinct)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "judge.cli", "grade", str(cases), "--rubric", "faithfulness",
         "-o", str(graded), "--offline"],
        check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    grading_s = time.perf_counter() - start
    run, all_cases = folder / "run" / "faithfulness.jsonl", folder / "cases.jsonl"
    run.parent.mkdir()
    replicate(cases, graded, total, all_cases, run)
    out: dict[str, Any] = {"records": total, "distinct": distinct, "grading_s": grading_s}
    out["records_bytes"], out["cases_bytes"] = run.stat().st_size, all_cases.stat().st_size
    index = folder / "index"
    server = Server(run, all_cases, index)
    try:
        out["build_s"], _, _ = first_page(server)
    finally:
        server.stop()
    out["index_bytes"] = sum(p.stat().st_size for p in index.iterdir())
    server = Server(run, all_cases, index)
    try:
        out["cold_s"], run_id, out["total"] = first_page(server)
        warm = [server.get(f"/api/runs/{run_id}/records", limit=50)[0] for _ in range(5)]
        out["warm_s"] = statistics.median(warm)
        out["queries"] = []
        for name, params in QUERIES:
            times, found = [], 0
            for _ in range(3):
                took, page = server.get(f"/api/runs/{run_id}/records", limit=50, **params)
                times.append(took)
                found = page["total"]
            out["queries"].append((name, statistics.median(times), max(times), found))
        out["peak_rss_mb"] = server.peak_rss_mb()
    finally:
        server.stop()
    return out


def report(result: dict[str, Any], load: str) -> str:
    lines = [
        "# `judge view` on a large run (`benchmarks/view.py`)",
        "",
        f"Command: `python benchmarks/view.py --records {result['records']} --distinct "
        f"{result['distinct']} --write`. Machine: {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs shared with other work (load average {load}), Python "
        f"{platform.python_version()}. Figures from a loaded machine: ratios count more "
        "than the absolute times.",
        "",
        f"The run: {result['distinct']:,} distinct cases graded by the rules judge "
        f"({result['grading_s']:.0f} s), replicated to {result['records']:,} records "
        f"({result['records_bytes'] / 1e6:,.0f} MB of records, {result['cases_bytes'] / 1e6:,.0f} MB "
        "of cases; every 100th replica a parse_error). Grading a million cases with the rules "
        "judge would take hours on this machine, hence the replicas.",
        "",
        "| what | time | target |",
        "|---|---|---|",
        f"| index build (first `/api/runs` ever: DuckDB reads the JSONL once) | {result['build_s']:.1f} s | (once per records file change) |",
        f"| first page, cold (server start with the index on disk to the first 50 records) | {result['cold_s']:.2f} s | < 5 s |",
        f"| first page, warm (median of 5) | {result['warm_s'] * 1000:.0f} ms | < 1 s |",
    ]
    for name, median, worst, found in result["queries"]:
        lines.append(
            f"| `{name}` ({found:,} found), median / max of 3 | {median * 1000:.0f} / {worst * 1000:.0f} ms | < 1 s |"
        )
    lines += [
        f"| server peak resident memory (VmHWM) | {result['peak_rss_mb']:.0f} MB | < 1 GB |",
        "",
        f"Index file: {result['index_bytes'] / 1e6:,.0f} MB (DuckDB, beside nothing of the user's: "
        "`$JUDGE_VIEW_INDEX`, else ~/.cache/llm-judge/view).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--distinct", type=int, default=10_000)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        result = measure(args.records, args.distinct, Path(folder))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = report(result, load)
    print(text)
    if args.write:
        REPORT.write_text(text)


if __name__ == "__main__":
    main()
