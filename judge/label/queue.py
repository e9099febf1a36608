"""Each annotator's queue: which case comes next, and how much is left.

Every annotator walks the items in an order of their own (overlap items first, so the
inter-annotator ceiling is measured early; then a sha256 shuffle of seed, name and id, the
same after any restart). An item is offered while fewer annotators than it `required`
have labelled it; what this annotator labelled or skipped is not offered again, except that
skipped items come back, oldest skip first, once nothing else is left. Two people working at
the same moment may both label a single-label item: both labels are kept, and
`judge calibrate` takes the majority.
"""

from __future__ import annotations

import hashlib
from typing import Any

from judge.label.store import LabelStore, StoredItem


class Queues:
    """Queues of every annotator over one store."""

    def __init__(self, store: LabelStore, seed: int) -> None:
        self.store = store
        self.seed = seed
        self._orders: dict[str, list[StoredItem]] = {}

    def order(self, annotator: str) -> list[StoredItem]:
        if annotator not in self._orders:
            self._orders[annotator] = sorted(
                self.store.items(),
                key=lambda item: (item.required == 1, self._rank(annotator, item)),
            )
        return self._orders[annotator]

    def _rank(self, annotator: str, item: StoredItem) -> bytes:
        return hashlib.sha256(f"{self.seed}\x00{annotator}\x00{item.case_id}".encode()).digest()

    def _open(self, annotator: str) -> tuple[list[StoredItem], list[StoredItem]]:
        """(items not yet answered by this annotator, items they skipped), both still open."""
        mine = {e.case_id: e for e in self.store.events(annotator)}
        labellers = self.store.labellers()

        def needed(item: StoredItem) -> bool:
            return len(labellers.get(item.case_id, set()) - {annotator}) < item.required

        fresh = [i for i in self.order(annotator) if i.case_id not in mine and needed(i)]
        by_id = {i.case_id: i for i in self.store.items()}
        skipped = sorted((e for e in mine.values() if e.action == "skip"), key=lambda e: e.seq)
        again = [
            by_id[e.case_id] for e in skipped if e.case_id in by_id and needed(by_id[e.case_id])
        ]
        return fresh, again

    def next_item(self, annotator: str) -> StoredItem | None:
        fresh, again = self._open(annotator)
        waiting = fresh or again
        return waiting[0] if waiting else None

    def progress(self, annotator: str) -> dict[str, Any]:
        """This annotator's counts, and the whole set's: items with all the labels they need."""
        events = self.store.events(annotator)
        fresh, again = self._open(annotator)
        labellers = self.store.labellers()
        items = self.store.items()
        complete = sum(len(labellers.get(i.case_id, ())) >= i.required for i in items)
        return {
            "labelled": sum(e.action == "label" for e in events),
            "skipped": len(again),
            "left": len(fresh) + len(again),
            "items": len(items),
            "complete_items": complete,
            "labels_given": sum(len(v) for v in labellers.values()),
        }
