"""The label store: one SQLite file holding the plan, the items and every label given.

Durability: each label (or skip, or undo) is one committed transaction before the page
hears back, in WAL mode with `synchronous=FULL`, so the WAL is fsynced at every commit. A
killed server loses nothing (NORMAL would already give that); FULL also keeps the last
labels through a power cut or an OS crash, and a person labels a few cases a minute, so the
fsync per label costs nothing anyone can notice, while a lost label costs their time.

Tables: `meta` (the plan: input, rubric and sampling settings), `items` (the cases to label
with the text the page shows, their inclusion probability and how many labels each needs),
`escalated` (the items a certified cascade left to people: offered first) and `events`
(one row per annotator and case: a label or a skip, latest first by `seq`).
The judge's verdicts are never stored here, so nothing can leak them to the page.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judge.label.sampling import Item

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    position INTEGER PRIMARY KEY, case_id TEXT NOT NULL UNIQUE, view TEXT NOT NULL,
    inclusion_probability REAL NOT NULL, required INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, annotator TEXT NOT NULL, case_id TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('label', 'skip')), label TEXT, note TEXT,
    shown_order TEXT, labelled_at TEXT NOT NULL, UNIQUE (annotator, case_id));
CREATE INDEX IF NOT EXISTS events_by_case ON events (case_id);
CREATE TABLE IF NOT EXISTS escalated (case_id TEXT PRIMARY KEY);
"""

Change = Callable[[str, str, "Event | None"], None]  # (annotator, case id, their event now)


@dataclass(frozen=True)
class StoredItem:
    position: int
    case_id: str
    view: dict[str, Any]
    inclusion_probability: float
    required: int


@dataclass(frozen=True)
class Event:
    seq: int
    annotator: str
    case_id: str
    action: str
    label: str | None
    note: str | None
    shown_order: str | None
    labelled_at: str


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class LabelStore:
    """SQLite-backed items and labels; every write is committed before it returns."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # One connection shared by the app's worker threads: the lock makes each method one
        # uninterleaved step (sqlite3 would otherwise mix two threads' transactions).
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SCHEMA)
        self._items: list[StoredItem] | None = None
        self._watchers: list[Change] = []

    @property
    def lock(self) -> threading.RLock:
        """The lock every method holds: a watcher's state guarded by it moves in step."""
        return self._lock

    def watch(self, watcher: Change) -> None:
        """Call `watcher(annotator, case_id, event)` after each committed change, under the
        store's lock (so watchers see changes in commit order); `event` is the annotator's
        answer for the case now, None after an undo."""
        self._watchers.append(watcher)

    def _changed(self, annotator: str, case_id: str, event: Event | None) -> None:
        for watcher in self._watchers:
            watcher(annotator, case_id, event)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    # ---- the plan and the items ----------------------------------------------------------

    def plan(self) -> dict[str, Any] | None:
        rows = self._query("SELECT value FROM meta WHERE key = 'plan'")
        return json.loads(rows[0][0]) if rows else None

    def initialise(self, plan: dict[str, Any], items: list[tuple[Item, dict[str, Any]]]) -> None:
        """Write the plan and the items once, in one transaction."""
        with self._transaction() as db:
            db.execute("INSERT INTO meta VALUES ('plan', ?)", (json.dumps(plan, sort_keys=True),))
            db.executemany(
                "INSERT INTO items VALUES (?, ?, ?, ?, ?)",
                [
                    (i, item.case_id, json.dumps(view), item.inclusion_probability, item.required)
                    for i, (item, view) in enumerate(items)
                ],
            )
            _mark_escalated(db, [item for item, _ in items])
        self._items = None

    def append_items(self, items: list[tuple[Item, dict[str, Any]]]) -> int:
        """Add items after the last, for a set that grows (`judge watch --label-dir`); an id
        the store holds already is left as it is, so a case appended twice (a watch
        restarted) is queued once. Committed before it returns; how many were new."""
        with self._transaction() as db:
            start = db.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM items").fetchone()[0]
            added = 0
            for item, view in items:
                cursor = db.execute(
                    "INSERT OR IGNORE INTO items VALUES (?, ?, ?, ?, ?)",
                    (start + added, item.case_id, json.dumps(view), item.inclusion_probability,
                     item.required),
                )  # fmt: skip
                added += cursor.rowcount
            _mark_escalated(db, [item for item, _ in items])
        self._items = None
        return added

    def escalated(self, *, after: int = 0) -> set[str]:
        """The ids of the items from position `after` on that a cascade escalated."""
        rows = self._query(
            "SELECT items.case_id FROM items JOIN escalated USING (case_id)"
            " WHERE items.position >= ?",
            (after,),
        )
        return {row[0] for row in rows}

    def count_waiting(self) -> int:
        """Items with fewer labels than they need: the labels still waiting for people."""
        rows = self._query(
            "SELECT COUNT(*) FROM items WHERE required > (SELECT COUNT(*) FROM events"
            " WHERE events.case_id = items.case_id AND action = 'label')"
        )
        return int(rows[0][0])

    def items(self) -> list[StoredItem]:
        if self._items is None:  # read once; `append_items` makes it read again
            rows = self._query("SELECT * FROM items ORDER BY position")
            self._items = [
                StoredItem(pos, cid, json.loads(view), prob, req)
                for pos, cid, view, prob, req in rows
            ]
        return self._items

    def item(self, case_id: str) -> StoredItem | None:
        """One item by id: an indexed lookup (the UNIQUE case_id), whatever the set's size."""
        rows = self._query("SELECT * FROM items WHERE case_id = ?", (case_id,))
        if not rows:
            return None
        pos, cid, view, prob, req = rows[0]
        return StoredItem(pos, cid, json.loads(view), prob, req)

    def outline(self, *, after: int = 0) -> list[tuple[str, int]]:
        """(case id, labels required) of every item in position order, without the views;
        `after`: only those from that position on (the items appended since)."""
        return self._query(
            "SELECT case_id, required FROM items WHERE position >= ? ORDER BY position", (after,)
        )

    def count_items(self) -> tuple[int, int]:
        """(items, items needing more than one label)."""
        rows = self._query("SELECT COUNT(*), COALESCE(SUM(required > 1), 0) FROM items")
        return int(rows[0][0]), int(rows[0][1])

    # ---- events ---------------------------------------------------------------------------

    def record(
        self,
        annotator: str,
        case_id: str,
        *,
        label: str | None,
        note: str | None = None,
        shown_order: str | None = None,
    ) -> Event:
        """Store a label (or a skip when `label` is None), replacing this annotator's
        earlier answer for the case; committed (and fsynced) before it returns."""
        action = "skip" if label is None else "label"
        with self._lock:
            with self._transaction() as db:
                db.execute(
                    "DELETE FROM events WHERE annotator = ? AND case_id = ?", (annotator, case_id)
                )
                db.execute(
                    "INSERT INTO events (annotator, case_id, action, label, note, shown_order,"
                    " labelled_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (annotator, case_id, action, label, note or None, shown_order, utc_now()),
                )
                row = db.execute(
                    "SELECT * FROM events WHERE annotator = ? AND case_id = ?",
                    (annotator, case_id),
                ).fetchone()
            event = Event(*row)
            self._changed(annotator, case_id, event)
        return event

    def undo(self, annotator: str) -> Event | None:
        """Remove this annotator's latest label or skip; return it (None: nothing to undo)."""
        with self._lock:
            with self._transaction() as db:
                row = db.execute(
                    "SELECT * FROM events WHERE annotator = ? ORDER BY seq DESC LIMIT 1",
                    (annotator,),
                ).fetchone()
                if row is None:
                    return None
                db.execute("DELETE FROM events WHERE seq = ?", (row[0],))
            event = Event(*row)
            self._changed(annotator, event.case_id, None)
        return event

    def events(self, annotator: str | None = None) -> list[Event]:
        """Events in the order given, of one annotator or of all."""
        if annotator is None:
            rows = self._query("SELECT * FROM events ORDER BY seq")
        else:
            rows = self._query(
                "SELECT * FROM events WHERE annotator = ? ORDER BY seq", (annotator,)
            )
        return [Event(*row) for row in rows]

    def labellers(self) -> dict[str, set[str]]:
        """case id -> the annotators who labelled it (skips are not labels)."""
        out: dict[str, set[str]] = {}
        for case_id, annotator in self._query(
            "SELECT case_id, annotator FROM events WHERE action = 'label'"
        ):
            out.setdefault(case_id, set()).add(annotator)
        return out


def _mark_escalated(db: sqlite3.Connection, items: list[Item]) -> None:
    db.executemany(
        "INSERT OR IGNORE INTO escalated VALUES (?)",
        [(item.case_id,) for item in items if item.escalated],
    )
