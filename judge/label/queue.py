"""Each annotator's queue: which case comes next, and how much is left.

Every annotator walks the items in an order of their own (the items a certified cascade
escalated first, as they are the ones no judge may decide; then overlap items, so the
inter-annotator ceiling is measured early; then a sha256 shuffle of seed, name and id, the
same after any restart). An item is offered while fewer annotators than it `required`
have labelled it; what this annotator labelled or skipped is not offered again, except that
skipped items come back, oldest skip first, once nothing else is left. Two people working at
the same moment may both label a single-label item: both labels are kept, and
`judge calibrate` takes the majority.

Cost: a request costs the same at 100,000 cases as at 1,000 (a full scan of
every item and every label would not). The queues keep, in memory and in step with the store
(`LabelStore.watch`, under its lock), who labelled each case, each annotator's answers,
a heap of their order's positions still to offer and a heap of their skips, and the counts
`progress` reports; an answer changes one case, so it updates one case's entries for each
annotator. Building an annotator's order is the one step in proportion to the set, once per
annotator and server start. One server per store: another process's labels are seen after
a restart.

A set that grows (`judge watch --label-dir` appends items while the server runs): each
request first reads the items past the last one known (an indexed range, usually empty)
and adds them as a batch: to every annotator's order after what was there, shuffled among
themselves the same way, so an order never reshuffles what an annotator has seen.
"""

from __future__ import annotations

import hashlib
import heapq
from dataclasses import dataclass, field
from typing import Any

from judge.label.store import Event, LabelStore, StoredItem


@dataclass
class _Walk:
    """One annotator's state: their order, what they answered, what is left."""

    order: list[str]  # case ids in this annotator's order
    answers: dict[str, Event]
    fresh: list[int] = field(default_factory=list)  # heap of positions in `order`
    skips: list[tuple[int, str]] = field(default_factory=list)  # heap of (seq, case id)
    open_fresh: int = 0  # items never answered that still need a label
    open_again: int = 0  # items skipped that still need a label
    labelled: int = 0


class Queues:
    """Queues of every annotator over one store."""

    def __init__(self, store: LabelStore, seed: int) -> None:
        self.store = store
        self.seed = seed
        with store.lock:
            outline = store.outline()
            self._required = dict(outline)
            self._ids = [case_id for case_id, _ in outline]
            self._escalated = store.escalated()  # a cascade's escalated items: first
            self._labellers: dict[str, set[str]] = store.labellers()
            self._labels_given = sum(len(v) for v in self._labellers.values())
            self._complete = sum(
                len(self._labellers.get(c, ())) >= r for c, r in self._required.items()
            )
            self._walks: dict[str, _Walk] = {}
            self._batches = [0]  # where each batch of items starts in `_ids` (and every order)
            self._batch_of: dict[str, int] = {}  # an appended item's batch (absent: batch 0)
            store.watch(self._changed)

    def order(self, annotator: str) -> list[str]:
        """The case ids in `annotator`'s order."""
        return self._walk(annotator).order

    def next_item(self, annotator: str) -> StoredItem | None:
        with self.store.lock:
            self._grow()
            walk = self._walk(annotator)
            while walk.fresh:
                case_id = walk.order[walk.fresh[0]]
                if self._status(annotator, walk, case_id) == "fresh":
                    return self.store.item(case_id)
                heapq.heappop(walk.fresh)  # answered, or labelled enough: not offered now
            while walk.skips:
                seq, case_id = walk.skips[0]
                event = walk.answers.get(case_id)
                current = event is not None and event.seq == seq  # not a stale entry
                if current and self._status(annotator, walk, case_id) == "again":
                    return self.store.item(case_id)
                heapq.heappop(walk.skips)
            return None

    def progress(self, annotator: str) -> dict[str, Any]:
        """This annotator's counts, and the whole set's: items with all the labels they need."""
        with self.store.lock:
            self._grow()
            walk = self._walk(annotator)
            return {
                "labelled": walk.labelled,
                "skipped": walk.open_again,
                "left": walk.open_fresh + walk.open_again,
                "items": len(self._ids),
                "complete_items": self._complete,
                "labels_given": self._labels_given,
                "waiting_for_others": self._waiting(walk),
            }

    def _waiting(self, walk: _Walk) -> int:
        """Cases this annotator labelled that still need another annotator's label (an
        overlap case): why the set is not complete when their queue is empty. In
        proportion to their own answers, never to the set."""
        return sum(
            event.action == "label"
            and len(self._labellers.get(case_id, ())) < self._required.get(case_id, 1)
            for case_id, event in walk.answers.items()
        )

    # ---- state --------------------------------------------------------------------------

    def _rank(self, annotator: str, case_id: str) -> bytes:
        return hashlib.sha256(f"{self.seed}\x00{annotator}\x00{case_id}".encode()).digest()

    def _grow(self) -> None:
        """Add the items appended since the last look as one batch (module docstring)."""
        rows = self.store.outline(after=len(self._ids))
        if not rows:
            return
        batch, start = len(self._batches), len(self._ids)
        self._batches.append(start)
        self._escalated |= self.store.escalated(after=start)
        for case_id, required in rows:
            self._required[case_id] = required
            self._batch_of[case_id] = batch
            self._ids.append(case_id)
        for annotator, walk in self._walks.items():
            walk.order.extend(self._sorted(annotator, self._ids[start:]))
            for position in range(start, len(walk.order)):
                heapq.heappush(walk.fresh, position)
                self._count(annotator, walk, walk.order[position], +1)

    def _sorted(self, annotator: str, ids: list[str]) -> list[str]:
        return sorted(ids, key=lambda c: self._key(annotator, c))

    def _key(self, annotator: str, case_id: str) -> tuple[bool, bool, bytes]:
        """Where a case stands in an annotator's order: escalated ones first, then the
        overlap, then the shuffle."""
        escalated = case_id in self._escalated
        return (not escalated, self._required[case_id] == 1, self._rank(annotator, case_id))

    def _walk(self, annotator: str) -> _Walk:
        """The annotator's state, built on first sight (the one step in proportion to the
        set: their order, their answers read once)."""
        walk = self._walks.get(annotator)
        if walk is None:
            bounds = [*self._batches, len(self._ids)]
            order = [
                case_id
                for start, end in zip(bounds, bounds[1:], strict=False)
                for case_id in self._sorted(annotator, self._ids[start:end])
            ]
            answers = {e.case_id: e for e in self.store.events(annotator)}
            walk = _Walk(order, answers, fresh=list(range(len(order))))  # sorted: a heap
            walk.skips = [(e.seq, e.case_id) for e in answers.values() if e.action == "skip"]
            heapq.heapify(walk.skips)
            walk.labelled = sum(e.action == "label" for e in answers.values())
            for case_id in order:
                self._count(annotator, walk, case_id, +1)
            self._walks[annotator] = walk
        return walk

    def _status(self, annotator: str, walk: _Walk, case_id: str) -> str | None:
        """'fresh' (never answered, still needed), 'again' (skipped, still needed) or None."""
        labellers = self._labellers.get(case_id, set())
        others = len(labellers) - (annotator in labellers)
        if others >= self._required.get(case_id, 1):
            return None
        event = walk.answers.get(case_id)
        if event is None:
            return "fresh"
        return "again" if event.action == "skip" else None

    def _count(self, annotator: str, walk: _Walk, case_id: str, sign: int) -> None:
        status = self._status(annotator, walk, case_id)
        if status == "fresh":
            walk.open_fresh += sign
        elif status == "again":
            walk.open_again += sign

    def _changed(self, annotator: str, case_id: str, event: Event | None) -> None:
        """One committed answer (or undo) of `annotator` for `case_id`: update that case's
        entries for every annotator seen so far (the store holds its lock meanwhile)."""
        self._grow()  # an answer for a case appended since the last request is counted too
        if case_id not in self._required:
            return
        for name, walk in self._walks.items():
            self._count(name, walk, case_id, -1)
        labellers = self._labellers.setdefault(case_id, set())
        was_complete = len(labellers) >= self._required[case_id]
        self._labels_given -= len(labellers)
        if event is not None and event.action == "label":
            labellers.add(annotator)
        else:
            labellers.discard(annotator)
        self._labels_given += len(labellers)
        self._complete += (len(labellers) >= self._required[case_id]) - was_complete
        mine = self._walks.get(annotator)
        if mine is not None:
            before = mine.answers.pop(case_id, None)
            mine.labelled -= before is not None and before.action == "label"
            if event is not None:
                mine.answers[case_id] = event
                mine.labelled += event.action == "label"
        for name, walk in self._walks.items():
            self._count(name, walk, case_id, +1)
            status = self._status(name, walk, case_id)
            if status == "fresh":  # offered again (an undo): back on the heap
                heapq.heappush(walk.fresh, self._position(name, walk, case_id))
            elif status == "again":
                heapq.heappush(walk.skips, (walk.answers[case_id].seq, case_id))

    def _position(self, annotator: str, walk: _Walk, case_id: str) -> int:
        """Where `case_id` stands in the annotator's order (binary search on its sort key,
        within its batch)."""
        key = self._key(annotator, case_id)
        batch = self._batch_of.get(case_id, 0)
        low = self._batches[batch]
        high = self._batches[batch + 1] if batch + 1 < len(self._batches) else len(walk.order)
        while low < high:
            mid = (low + high) // 2
            other = walk.order[mid]
            if self._key(annotator, other) < key:
                low = mid + 1
            else:
                high = mid
        return low
