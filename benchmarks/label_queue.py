"""Labelling request cost against the size of the set (issue 20 item 9): milliseconds per
/api/answer cycle (offered item, answer stored, next state and progress) and the queue's
first build, at 1k, 10k and 100k cases. Figures, not pass/fail; compare within one run.

    python benchmarks/label_queue.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judge.label.queue import Queues  # noqa: E402
from tests.engine.test_label_queue_cost import make_store, one_request_cycle  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        for n in (1_000, 10_000, 100_000):
            store = make_store(Path(folder) / f"{n}.sqlite", n)
            start = time.perf_counter()
            queues = Queues(store, seed=0)
            cycle = one_request_cycle(store, queues, "ann")
            cycle()  # builds the annotator's order
            first = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(50):
                cycle()
            per = (time.perf_counter() - start) / 50
            print(f"{n:>7} cases: first request {first * 1000:8.1f} ms, then {per * 1000:6.2f} ms")
            store.close()


if __name__ == "__main__":
    main()
