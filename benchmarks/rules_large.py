"""The rules judge on large cases, and `/healthz` while the largest allowed request runs.

    python benchmarks/rules_large.py [--repeat 3] [--no-service] [--write]

1. Time of the offline rules judge (`RulesJudge.evaluate_sync`) on one synthetic 110 KB
   faithfulness case (the size of the issue-16 report) and on the largest case a default
   `/v1/grade` body allows (1 MiB: a pairwise case with two 100,000-character answers and
   eight 100,000-character contexts). Median of `--repeat` runs, in this process.
2. With the service: `judge serve` (default limits) in its own process; the largest allowed
   request is sent while a second client polls `GET /healthz` back to back; reported: the
   request's status and time, how many health checks answered while it ran and the slowest.

Text is synthetic and seeded: sentences of 8-20 words drawn from a Zipf-weighted vocabulary
of 3,000 words plus figures; half of the answer's sentences are copied from the contexts
(supported), half drawn afresh. Figures vary with the machine and its load; `--write`
writes benchmarks/rules_large.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from benchmarks.service_load import free_port, start_server  # noqa: E402
from judge.engine.rules import RulesJudge  # noqa: E402
from judge.rubric import load_rubric  # noqa: E402
from judge.schemas import Case  # noqa: E402

REPORT = REPO / "benchmarks" / "rules_large.md"
MAX_TEXT = 100_000


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "vi", "so", "pe", "da", "ri", "mu"]
    words = {"".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(size * 2)}
    return sorted(words)[:size]


class TextMaker:
    """Seeded synthetic sentences (see the module docstring)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words = _vocabulary(self.rng)
        self.weights = [1 / (rank + 1) for rank in range(len(self.words))]

    def sentence(self) -> str:
        words = self.rng.choices(self.words, self.weights, k=self.rng.randint(8, 20))
        if self.rng.random() < 0.3:
            words.insert(self.rng.randrange(len(words)), str(self.rng.randint(1, 500)))
        return " ".join(words).capitalize() + "."

    def text(self, chars: int, pool: list[str] | None = None) -> str:
        """About `chars` characters (never more); with a pool, half its sentences copied."""
        out: list[str] = []
        size = 0
        while True:
            copy = pool and self.rng.random() < 0.5
            sentence = self.rng.choice(pool) if pool and copy else self.sentence()
            if size + len(sentence) + 1 > chars:
                return " ".join(out)
            out.append(sentence)
            size += len(sentence) + 1


def faithfulness_case(total_chars: int, seed: int = 1) -> Case:
    maker = TextMaker(seed)
    half = total_chars // 2
    contexts = [maker.text(min(MAX_TEXT, half - i)) for i in range(0, half, MAX_TEXT)]
    pool = [s + "." for c in contexts for s in c.split(". ")]
    answer = maker.text(min(MAX_TEXT, half), pool)
    return Case(id="large", question=maker.sentence()[:-1] + "?", contexts=contexts, answer=answer)


def largest_pair(seed: int = 2) -> Case:
    maker = TextMaker(seed)
    contexts = [maker.text(MAX_TEXT) for _ in range(8)]
    pool = [s + "." for c in contexts for s in c.split(". ")]
    return Case(
        id="largest",
        question=maker.sentence()[:-1] + "?",
        contexts=contexts,
        answer_a=maker.text(MAX_TEXT, pool),
        answer_b=maker.text(MAX_TEXT, pool),
    )


def time_rules(case: Case, rubric: str, repeat: int) -> float:
    judge, loaded = RulesJudge(), load_rubric(rubric)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        judge.evaluate_sync(loaded, case)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def healthz_during(case: Case, rubric: str) -> dict[str, Any]:
    body = json.dumps({"rubric": rubric, "cases": [case.model_dump(exclude_none=True)]})
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = start_server(Path(tmp), port)
        base = f"http://127.0.0.1:{port}"
        result: dict[str, Any] = {"body_bytes": len(body.encode())}
        done = threading.Event()

        def grade() -> None:
            start = time.perf_counter()
            response = httpx.post(
                base + "/v1/grade",
                content=body,
                headers={"Content-Type": "application/json"},
                timeout=600,
            )
            result.update(status=response.status_code, grade_s=time.perf_counter() - start)
            done.set()

        worker = threading.Thread(target=grade)
        latencies: list[float] = []
        try:
            worker.start()
            with httpx.Client(base_url=base, timeout=600) as health:
                while not done.is_set():
                    start = time.perf_counter()
                    health.get("/healthz").raise_for_status()
                    if not done.is_set():
                        latencies.append(time.perf_counter() - start)
            worker.join()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    result.update(health_checks=len(latencies), health_max_s=max(latencies, default=0.0))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-service", action="store_true")
    parser.add_argument(
        "--only-110kb", action="store_true", help="skip the largest case (for slow old code)"
    )
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    cases = [(faithfulness_case(110_000), "faithfulness", "")]
    if not args.only_110kb:
        cases.append((largest_pair(), "pairwise", " (largest allowed)"))
    lines = [
        "# The rules judge on large cases (`benchmarks/rules_large.py`)",
        "",
        f"Machine: {platform.system()} {platform.machine()}, Python {platform.python_version()}.",
        "",
        "| case | rules judge time (median) | `/v1/grade` | `/healthz` during it |",
        "|---|---|---|---|",
    ]
    for case, rubric, note in cases:
        seconds = time_rules(case, rubric, args.repeat)
        served = "-", "-"
        if not args.no_service:
            got = healthz_during(case, rubric)
            served = (
                f"{got['body_bytes']:,} bytes: HTTP {got['status']} in {got['grade_s']:.2f} s",
                f"{got['health_checks']} answered, slowest {got['health_max_s'] * 1000:.0f} ms",
            )
        name = f"{rubric}, {case_size(case) / 1000:.0f} KB case{note}"
        lines.append(f"| {name} | {seconds:.3f} s | {served[0]} | {served[1]} |")
    print("\n".join(lines))
    if args.write:
        REPORT.write_text("\n".join(lines) + "\n", "utf-8")
    return 0


def case_size(case: Case) -> int:
    return sum(len(t or "") for t in (case.answer, case.answer_a, case.answer_b, *case.contexts))


if __name__ == "__main__":
    sys.exit(main())
