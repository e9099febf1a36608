"""`arguments: subset` on one case of N x N calls of one name: wall, CPU and peak RSS.

    python benchmarks/trajectory_subset.py [N]      (default 5000; one process a run)

The agent's N calls `lookup` each carry {"id", "region", "page"}; the N expected calls (in a
seeded shuffled order) each ask for {"id"} or {"id", "page"}, so every expected call fits
exactly one agent call and the matching is not the trivial all-fit one. Past
MAX_SUBSET_PAIRS (N x N > 25,000,000) the case abstains, and the script says so.
Figures: benchmarks/trajectory.md.
"""

from __future__ import annotations

import json
import random
import resource
import sys
import time

from judge.kinds._matching import TooManyPairs
from judge.kinds.trajectory import TrajectorySpec, trajectory_verdict
from judge.transcript import Call


def main(n: int) -> str:
    rng = random.Random(7)
    order = list(range(n))
    rng.shuffle(order)
    actual = [Call("lookup", {"id": i, "region": "eu", "page": i % 7}) for i in range(n)]
    expected = [Call("lookup", {"id": i} if i % 3 else {"id": i, "page": i % 7}) for i in order]
    size = len(json.dumps([c.as_json() for c in actual + expected]))
    spec = TrajectorySpec(match="unordered", arguments="subset")
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        verdict = trajectory_verdict(actual, expected, spec)
        said = f"paired {verdict.paired_calls:,}, matched {verdict.matched}"
    except TooManyPairs as exc:
        said = f"refused: {exc}"
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return (
        f"{n:,} x {n:,} calls ({size / 1e6:.2f} MB of arguments): {said}; "
        f"{wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {peak:.0f} MB"
    )


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
