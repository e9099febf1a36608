"""A Phoenix pull's resident memory against an endless cursor (issue 55):
`python -m benchmarks.phoenix_pull [--mib 2048] [--out cases.jsonl]`.

A stand-in Phoenix on loopback (tests/traces/phoenix_fake.py) answers every page with
1,000 distinct one-span traces of about 1.7 KB each and a new cursor, for ever; one pull
(`judge.traces.pull.pull_phoenix_into`, what `judge traces pull --phoenix` runs) goes
until its byte cap (`--mib`, the default cap 2 GiB). Printed as one JSON line: the cases
written, the line that stopped it, CPU seconds, and the peak resident memory of the whole
process (the stand-in server included). With an older tree on PYTHONPATH, `--whole` runs
`pull_phoenix` instead (every span held until the end) for the figure before.
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import time
from pathlib import Path
from typing import Any

from judge.traces.phoenix import Limits, PhoenixClient
from tests.traces.phoenix_fake import Answer, FakePhoenix

PAD = "y" * 1500
SPAN = (
    '{"name":"rag","context":{"trace_id":"%016x%016x","span_id":"%08x%08x"},'
    '"parent_id":null,"span_kind":"CHAIN","start_time":"2026-12-01T10:00:00+00:00",'
    '"attributes":{"input.value":"q %d %s?","output.value":"an answer"}}'
)


def endless() -> Any:
    counter = itertools.count()

    def route(method: str, path: str, query: dict[str, list[str]], body: bytes) -> Answer:
        n = next(counter)
        spans = ",".join(SPAN % (n, k, n, k, k, PAD) for k in range(1000))
        return Answer(body=f'{{"data":[{spans}],"next_cursor":"p{n}"}}'.encode())

    return route


def measure(mib: int, out: Path, *, whole: bool = False) -> dict[str, Any]:
    started = time.process_time()
    limits = Limits(pull_bytes=mib * 1024 * 1024)
    with FakePhoenix(endless()) as fake, PhoenixClient(fake.url, limits=limits) as client:
        if whole:
            from judge.traces.pull import pull_phoenix

            try:
                cases, stopped = len(pull_phoenix(client, "p").cases), None
            except Exception as exc:  # the cap: nothing kept
                cases, stopped = 0, str(exc)
        else:
            from judge.traces.pull import pull_phoenix_into

            streamed = pull_phoenix_into(client, "p", out)
            cases, stopped = streamed.cases, str(streamed.stopped)
    return {
        "mib": mib,
        "cases": cases,
        "stopped": stopped,
        "cpu_s": round(time.process_time() - started, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=2048, help="the pull's byte cap, MiB")
    parser.add_argument("--out", type=Path, default=Path("phoenix-pull-cases.jsonl"))
    parser.add_argument("--whole", action="store_true", help="pull_phoenix (the figure before)")
    args = parser.parse_args()
    print(json.dumps(measure(args.mib, args.out, whole=args.whole)))


if __name__ == "__main__":
    main()
