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


def make_run(total: int, distinct: int, folder: Path) -> float:
    """folder/run/faithfulness.jsonl and folder/cases.jsonl; the grading's seconds."""
    cases, graded = folder / "distinct.jsonl", folder / "distinct.graded.jsonl"
    make_cases(cases, distinct)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "judge.cli", "grade", str(cases), "--rubric", "faithfulness",
         "-o", str(graded), "--offline"],
        check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    grading_s = time.perf_counter() - start
    (folder / "run").mkdir()
    replicate(cases, graded, total, folder / "cases.jsonl", folder / "run" / "faithfulness.jsonl")
    return grading_s


def measure(
    total: int, distinct: int, folder: Path, data: Path | None = None, index: Path | None = None
) -> dict[str, Any]:
    grading_s = None if data is not None else make_run(total, distinct, folder)
    data = data or folder
    run, all_cases = data / "run" / "faithfulness.jsonl", data / "cases.jsonl"
    with run.open("rb") as handle:
        total = sum(1 for _ in handle)
    out: dict[str, Any] = {"records": total, "distinct": distinct, "grading_s": grading_s}
    out["command"] = "python benchmarks/view.py " + " ".join(sys.argv[1:])
    out["records_bytes"], out["cases_bytes"] = run.stat().st_size, all_cases.stat().st_size
    index = index or folder / "index"
    out["build_s"] = None
    if not (index.is_dir() and any(index.glob("*.duckdb"))):
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
    out["old_new"] = old_and_new(next(index.glob("*.duckdb")))
    return out


OLD_SEARCH = "(contains(r.text, ?) OR r.id IN (SELECT cid FROM cases WHERE contains(case_text, ?)))"


def old_and_new(index: Path) -> list[tuple[str, float, float]]:
    """The same questions to the same index file in this process, as the code before the
    word index asked them (texts read whole, strings sorted, an IN list) and as it asks
    them now: (what, old s, new s), each the median of 3, one after the other so the
    machine's load is the same for both."""
    import duckdb

    from judge.view.words import search_clause

    db = duckdb.connect(str(index), read_only=True, config={"memory_limit": "384MB", "threads": 2})
    page = [p for (p,) in db.execute("SELECT pos FROM records USING SAMPLE 50 ROWS").fetchall()]

    def timed(sql: str, params: list[Any]) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            db.execute(sql, params).fetchall()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    rows = []
    for needle in ("dada", "c0004242-r0077", "zzqxv"):
        cursor = db.cursor()
        start = time.perf_counter()
        search = search_clause(cursor, "main", needle)
        clause_s = time.perf_counter() - start
        new = timed(f"SELECT count(*) FROM records r WHERE {search.sql}", search.params)
        old = timed(f"SELECT count(*) FROM records r WHERE {OLD_SEARCH}", [needle, needle])
        rows.append((f"search `{needle}`: count the matches", old, new + clause_s))
    rows.append((
        "sort by id, desc: the first 50",
        timed("SELECT pos FROM records r ORDER BY r.id DESC NULLS LAST, r.pos LIMIT 50", []),
        timed("SELECT pos FROM records r ORDER BY r.id_key DESC NULLS LAST, r.pos LIMIT 50", []),
    ))  # fmt: skip
    rows.append((
        "a page's 50 records by position",
        timed(f"SELECT pos, raw FROM records WHERE pos IN ({', '.join('?' * 50)})", page),
        timed("SELECT pos, raw FROM records WHERE pos = ANY(?::BIGINT[])", [page]),
    ))  # fmt: skip
    rows.append((
        "the overview's first record and token sums",
        timed("SELECT raw FROM records ORDER BY pos LIMIT 1", [])
        + timed("SELECT sum(TRY_CAST(raw->>'$.usage.prompt_tokens' AS BIGINT)) FROM records", []),
        timed("SELECT raw FROM records WHERE pos = ANY(?::BIGINT[])", [[0]])
        + timed("SELECT sum(prompt_tokens) FROM records", []),
    ))  # fmt: skip
    db.close()
    return rows


def report(result: dict[str, Any], load: str) -> str:
    lines = [
        "# `judge view` on a large run (`benchmarks/view.py`)",
        "",
        f"Command: `{result['command']}`. Machine: {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs shared with other work (load average {load}), Python "
        f"{platform.python_version()}. Figures from a loaded machine: ratios count more "
        "than the absolute times.",
        "",
        f"The run: {result['distinct']:,} distinct cases graded by the rules judge "
        f"({_seconds(result['grading_s'], 'graded earlier')}), replicated to {result['records']:,} records "
        f"({result['records_bytes'] / 1e6:,.0f} MB of records, {result['cases_bytes'] / 1e6:,.0f} MB "
        "of cases; every 100th replica a parse_error). Grading a million cases with the rules "
        "judge would take hours on this machine, hence the replicas.",
        "",
        "| what | time | target |",
        "|---|---|---|",
        f"| index build (first `/api/runs` ever: DuckDB reads the JSONL once) | {_seconds(result['build_s'])} | (once per records file change) |",
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
        "Before and after the word index, on this index file, in one process, one after the "
        "other (median of 3 each; the old way reads the texts whole, sorts ids as strings, "
        "fetches a page with an IN list):",
        "",
        "| what | old | new | old / new |",
        "|---|---|---|---|",
    ]
    for name, old, new in result["old_new"]:
        lines.append(f"| {name} | {old * 1000:.0f} ms | {new * 1000:.0f} ms | {old / new:.1f}x |")
    return "\n".join([*lines, ""])


def _seconds(value: float | None, missing: str = "index given: not built here") -> str:
    return f"({missing})" if value is None else f"{value:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--distinct", type=int, default=10_000)
    parser.add_argument("--write", action="store_true")
    parser.add_argument(
        "--data",
        type=Path,
        help="a folder from an earlier run: DATA/run/faithfulness.jsonl "
        "and DATA/cases.jsonl, used as they are (no grading, no replicas)",
    )
    parser.add_argument(
        "--index",
        type=Path,
        help="an index folder to use (and keep); one already built for "
        "the run skips the build's timing",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        result = measure(args.records, args.distinct, Path(folder), args.data, args.index)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = report(result, load)
    print(text)
    if args.write:
        REPORT.write_text(text)


if __name__ == "__main__":
    main()
