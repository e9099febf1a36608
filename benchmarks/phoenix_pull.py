"""A Phoenix pull's resident memory against an endless cursor (issue 55):
`python -m benchmarks.phoenix_pull [--mib 2048] [--out cases.jsonl]`.

A stand-in Phoenix on loopback (tests/traces/phoenix_fake.py) answers every page with
1,000 distinct one-span traces of about 1.7 KB each and a new cursor, for ever; one pull
(`judge.traces.pull.pull_phoenix_into`, what `judge traces pull --phoenix` runs) goes
until its byte cap (`--mib`, the default cap 2 GiB). Printed as one JSON line: the cases
written, the line that stopped it, CPU seconds, and the peak resident memory of the
pulling process (the stand-in server runs in a process of its own). With an older tree on PYTHONPATH, `--whole` runs
`pull_phoenix` instead (every span held until the end) for the figure before.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
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


def peak_rss_kb() -> int:
    """This process's peak resident memory: Linux's VmHWM, which starts afresh at exec.
    `ru_maxrss` does not: Linux keeps it across fork and exec, so a benchmark started from
    a large test worker reported the worker's peak (751 MB against 108 MB here)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _serve(urls: Any, stop: Any) -> None:
    """The stand-in Phoenix in a process of its own, so the figure is the pull's memory
    alone (a threaded server's buffers in the same process made it depend on the load)."""
    with FakePhoenix(endless()) as fake:
        urls.put(fake.url)
        stop.wait()


def measure(mib: int, out: Path, *, whole: bool = False) -> dict[str, Any]:
    context = multiprocessing.get_context("fork")
    urls, stop = context.Queue(), context.Event()
    server = context.Process(target=_serve, args=(urls, stop), daemon=True)
    server.start()
    try:
        return _pull(urls.get(timeout=60), mib, out, whole=whole)
    finally:
        stop.set()
        server.join(10)


def _pull(url: str, mib: int, out: Path, *, whole: bool) -> dict[str, Any]:
    started = time.process_time()
    limits = Limits(pull_bytes=mib * 1024 * 1024)
    with PhoenixClient(url, limits=limits) as client:
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
        "peak_rss_mb": round(peak_rss_kb() / 1024, 1),
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
