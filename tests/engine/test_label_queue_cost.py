"""A labelling request costs the same at 20,000 cases as at 1,000 (issue 20, item 9), and the
incremental queues offer exactly what the full scan they replace offered.

Before the fix every `/api/state` and `/api/answer` scanned every item and every label
(`LabelStore.item()` a linear search, `Queues` rebuilding each list): 10.5 ms at 10k cases,
158 ms at 100k. The cost is counted, not timed: Python function calls made by one request
(sys.setprofile), which a scan over the items multiplies by the set's size.
"""

from __future__ import annotations

import hashlib
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.label.queue import Queues
from judge.label.sampling import Item
from judge.label.store import LabelStore


def make_store(path: Path, n: int, *, overlap_every: int = 0) -> LabelStore:
    store = LabelStore(path)
    items = [
        (Item(f"case-{i:06d}", 1.0, 2 if overlap_every and i % overlap_every == 0 else 1),
         {"question": f"q{i}", "answer": f"a{i}"})
        for i in range(n)
    ]  # fmt: skip
    store.initialise({"plan": n}, items)
    return store


def calls_made(work: Callable[[], Any]) -> int:
    """How many Python and C function calls `work()` makes."""
    count = 0

    def profile(_frame: Any, event: str, _arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def one_request_cycle(store: LabelStore, queues: Queues, name: str) -> Callable[[], None]:
    """What /api/answer does: the offered item, the answer stored, the next state."""

    def cycle() -> None:
        item = queues.next_item(name)
        assert item is not None
        store.item(item.case_id)
        store.record(name, item.case_id, label="faithful")
        queues.next_item(name)
        queues.progress(name)

    return cycle


def test_a_request_costs_the_same_at_20k_cases_as_at_1k(tmp_path: Path) -> None:
    costs = {}
    for n in (1_000, 20_000):
        store = make_store(tmp_path / f"{n}.sqlite", n)
        queues = Queues(store, seed=0)
        cycle = one_request_cycle(store, queues, "ann")
        for _ in range(3):  # warm: the annotator's order is built on first sight
            cycle()
        costs[n] = min(calls_made(cycle) for _ in range(3))
        store.close()
    assert costs[20_000] <= costs[1_000] * 1.25 + 50, costs


class ScanQueues:
    """The reference: the full-scan queue this replaced (same rules, every request O(n))."""

    def __init__(self, store: LabelStore, seed: int) -> None:
        self.store, self.seed = store, seed

    def _order(self, annotator: str) -> list[Any]:
        def rank(item: Any) -> bytes:
            text = f"{self.seed}\x00{annotator}\x00{item.case_id}"
            return hashlib.sha256(text.encode()).digest()

        return sorted(self.store.items(), key=lambda i: (i.required == 1, rank(i)))

    def _open(self, annotator: str) -> tuple[list[Any], list[Any]]:
        mine = {e.case_id: e for e in self.store.events(annotator)}
        labellers = self.store.labellers()

        def needed(item: Any) -> bool:
            return len(labellers.get(item.case_id, set()) - {annotator}) < item.required

        fresh = [i for i in self._order(annotator) if i.case_id not in mine and needed(i)]
        by_id = {i.case_id: i for i in self.store.items()}
        skipped = sorted((e for e in mine.values() if e.action == "skip"), key=lambda e: e.seq)
        again = [by_id[e.case_id] for e in skipped if needed(by_id[e.case_id])]
        return fresh, again

    def next_id(self, annotator: str) -> str | None:
        fresh, again = self._open(annotator)
        waiting = fresh or again
        return waiting[0].case_id if waiting else None

    def progress(self, annotator: str) -> dict[str, Any]:
        events = self.store.events(annotator)
        fresh, again = self._open(annotator)
        labellers = self.store.labellers()
        items = self.store.items()
        by_id = {i.case_id: i.required for i in items}
        return {
            "labelled": sum(e.action == "label" for e in events),
            "skipped": len(again),
            "left": len(fresh) + len(again),
            "items": len(items),
            "complete_items": sum(len(labellers.get(i.case_id, ())) >= i.required for i in items),
            "labels_given": sum(len(v) for v in labellers.values()),
            "waiting_for_others": sum(
                e.action == "label" and len(labellers.get(e.case_id, ())) < by_id[e.case_id]
                for e in {e.case_id: e for e in events}.values()
            ),
        }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_incremental_queues_match_the_full_scan(tmp_path: Path, seed: int) -> None:
    """Random labels, skips, re-answers and undos by three people on 40 cases (every fourth
    needs two labels): after each step both queues offer the same case and the same counts.
    250 steps a seed reach past the end of the queue (40 cases, 50 labels) with every
    action still drawn."""
    store = make_store(tmp_path / "q.sqlite", 40, overlap_every=4)
    queues, reference = Queues(store, seed=seed), ScanQueues(store, seed=seed)
    people = ["ann", "bob", "cy"]
    rng = random.Random(seed)
    for step in range(250):
        name = rng.choice(people)
        roll = rng.random()
        offered = queues.next_item(name)
        if roll < 0.15:
            store.undo(name)
        elif roll < 0.25:  # re-answer some earlier case
            store.record(name, f"case-{rng.randrange(40):06d}", label=rng.choice([None, "y"]))
        elif offered is not None:
            store.record(name, offered.case_id, label=None if roll < 0.4 else "y")
        for who in people:
            item = queues.next_item(who)
            assert (item.case_id if item else None) == reference.next_id(who), (step, who)
            assert queues.progress(who) == reference.progress(who), (step, who)
    store.close()
