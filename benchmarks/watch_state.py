"""What `judge watch`'s own state costs over a long run (issue 45 item 9):
`python -m benchmarks.watch_state [--requests 100000] [--per-poll 1000] [--rate 0.01]`.

An app's traffic arrives in an OTLP JSON file, `--per-poll` requests before each poll (a
root CHAIN span and a RETRIEVER child a request, as the Collector writes them); one watch
follows it with the offline rules judge at sample rate `--rate`. Reported: the whole run's
wall time, the time spent saving the checkpoint (every `WatchState.save`, timed), how many
saves, and the checkpoint's final size. The same script runs against any tree that has
`judge.traces.watch` (PYTHONPATH picks the tree), so one command measures before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judge.api import open_grader
from judge.config import JudgeConfig
from judge.rubric import load_rubric
from judge.traces.mapping import TraceMapping
from judge.traces.sampling import Sampling
from judge.traces.sources import OtlpFileSource
from judge.traces.watch import WatchOptions, WatchState, watch


def request_line(n: int) -> str:
    """Request `n` as one OTLP JSON line (ids from n: unique, hex)."""

    def attrs(values: dict[str, str]) -> list[dict[str, Any]]:
        return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]

    trace, root = f"{n:032x}", f"{n:014x}a1"
    spans = [
        {
            "traceId": trace,
            "spanId": root,
            "name": "rag",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + n),
            "attributes": attrs(
                {
                    "openinference.span.kind": "CHAIN",
                    "input.value": f"How long is plan {n}?",
                    "output.value": f"Plan {n} lasts {14 if n % 3 else 30} days.",
                }
            ),
        },
        {
            "traceId": trace,
            "spanId": f"{n:014x}b2",
            "parentSpanId": root,
            "name": "retrieve",
            "attributes": attrs(
                {
                    "openinference.span.kind": "RETRIEVER",
                    "retrieval.documents.0.document.content": f"Plan {n} lasts 14 days.",
                }
            ),
        },
    ]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n"


class Traffic:
    """The file source, with `per_poll` new requests appended before each poll."""

    def __init__(self, path: Path, total: int, per_poll: int) -> None:
        self.path, self.total, self.per_poll, self.sent = path, total, per_poll, 0
        required = ("question", "answer", "contexts")
        self.source = OtlpFileSource(path, TraceMapping(), required)
        self.name = self.source.name

    def poll(self, position: dict[str, Any], now: datetime) -> Any:
        batch = range(self.sent, min(self.total, self.sent + self.per_poll))
        with self.path.open("a") as out:
            out.writelines(request_line(n) for n in batch)
        self.sent = batch.stop
        return self.source.poll(position, now)


def measure(total: int, per_poll: int, rate: float) -> dict[str, Any]:
    saves = {"count": 0, "seconds": 0.0}
    plain_save = WatchState.save

    def timed_save(self: WatchState, path: Path) -> None:
        start = time.perf_counter()
        plain_save(self, path)
        saves["seconds"] += time.perf_counter() - start
        saves["count"] += 1

    WatchState.save = timed_save  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "watch"
        traffic = Traffic(Path(tmp) / "otel.jsonl", total, per_poll)
        polls = -(-total // per_poll)
        options = WatchOptions(
            sampling=Sampling(rate), max_polls=polls, poll_seconds=0.0, say=lambda _: None
        )

        async def run() -> WatchState:
            async with open_grader(JudgeConfig(), load_rubric("faithfulness")) as grader:
                return await watch(traffic, grader, folder, options)  # type: ignore[arg-type]

        start = time.perf_counter()
        state = asyncio.run(run())
        wall = time.perf_counter() - start
        size = (folder / "checkpoint.json").stat().st_size
    WatchState.save = plain_save  # type: ignore[method-assign]
    return {
        "requests": total,
        "polls": polls,
        "rate": rate,
        "graded": state.counts.get("graded", 0),
        "wall_s": round(wall, 2),
        "checkpoint_saves": saves["count"],
        "checkpoint_save_s": round(saves["seconds"], 2),
        "checkpoint_bytes": size,
        "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%MZ"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--per-poll", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=0.01)
    args = parser.parse_args()
    print(json.dumps(measure(args.requests, args.per_poll, args.rate)))


if __name__ == "__main__":
    main()
