"""Records of a run, filtered, searched, sorted and paged, with facet counts that follow the
filter: SQL over the run's index (judge.view.index), one DuckDB connection per server.

Filters (all optional, combined with AND): `status` (one or several, comma-separated),
`slice`, `label`, `q` (case-insensitive text in id, question, answer, claims, rationale,
error), `min_score`/`max_score`, `jurors` (`unanimous` or `split`: a panel whose votes
were not all the same choice), `min_spread` (jurors' score range), `human` (`agree`,
`disagree`, `unlabelled`: the record's label against the people's label of `--labels`),
`human_label` (the people's label, e.g. a confusion-matrix cell), `judged` (the judge's
label, or its status where it gave none: the confusion matrix's columns), `ids` (a
list), and for conversations `tool` (the agent called this tool: the case's assistant
`tool_calls`) and `missing` (the record's verdict lists a missing call of this name: the
`trajectory` kind). `label=null` is the records with no label (abstained, errors), as the label facet
counts them under `null`.

A request the engine will not run is refused in one line (400): an offset past
MAX_OFFSET (DuckDB's offsets are 64-bit), a search longer than MAX_SEARCH characters or of
more than words.MAX_PIECES distinct words (each word is a lookup of its own).
"""

from __future__ import annotations

import itertools
import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

import duckdb

from judge.view.facets import SPLIT, facets
from judge.view.index import MEMORY_LIMIT
from judge.view.reasons import verdict_reason
from judge.view.words import search_clause

SORTS = {
    "input": "r.pos",
    "id": "r.id_key",  # the id's rank (judge.view.words): the same order, sorted as integers
    "score": "r.score",
    "status": "r.status",
    "label": "r.label",
    "spread": "r.spread",
}
MAX_LIMIT = 500
MAX_OFFSET = 1 << 53  # past any run, and inside both JSON's exact integers and BIGINT
MAX_SEARCH = 1000  # characters of a free-text search
NULL = "null"  # the facets' name for "no value"
LARGE_N = 1000
ANSWER_CHARS = 400  # of each answer, in the records table (the case page shows it whole)
BINS = 10  # the score histogram's bins over 0..1
MAX_NAME = 256  # a tool name, as judge.transcript allows it
# JSON paths DuckDB reads as one flat list (a wildcard inside a wildcard flattens)
CALLED_TOOLS = "$.messages[*].tool_calls[*].function.name"
MISSING_CALLS = "$.verdict.missing[*].name"


@dataclass(frozen=True)
class RecordQuery:
    status: tuple[str, ...] = ()
    slice: str | None = None
    label: str | None = None
    q: str | None = None
    min_score: float | None = None
    max_score: float | None = None
    jurors: str | None = None
    min_spread: float | None = None
    human: str | None = None
    human_label: str | None = None
    judged: str | None = None
    ids: tuple[str, ...] = ()
    tool: str | None = None
    missing: str | None = None
    sort: str = "input"
    order: str = "asc"
    offset: int = 0
    limit: int = 50

    def problems(self) -> list[str]:
        out = []
        if self.sort not in SORTS:
            out.append(f"sort must be one of {', '.join(SORTS)}")
        if self.order not in ("asc", "desc"):
            out.append("order must be asc or desc")
        if self.jurors not in (None, "unanimous", "split"):
            out.append("jurors must be unanimous or split")
        if self.human not in (None, "agree", "disagree", "unlabelled"):
            out.append("human must be agree, disagree or unlabelled")
        for name in ("tool", "missing"):
            value = getattr(self, name)
            if value is not None and len(value) > MAX_NAME:
                out.append(f"{name} is a tool name of at most {MAX_NAME} characters")
        if not 0 <= self.offset <= MAX_OFFSET or not 0 <= self.limit <= MAX_LIMIT:
            out.append(f"offset must be 0..{MAX_OFFSET} and limit 0..{MAX_LIMIT}")
        if self.q is not None and len(self.q) > MAX_SEARCH:
            out.append(f"a search is at most {MAX_SEARCH} characters, got {len(self.q)}")
        return out


@dataclass
class HumanLabels:
    """People's labels by case id: every annotator's label and note, and the consensus
    (the most frequent label; a tie goes to the one given first)."""

    by_id: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def consensus(self) -> list[tuple[str, str]]:
        out = []
        for case_id, labels in self.by_id.items():
            counts: dict[str, int] = {}
            for entry in labels:
                counts[entry["label"]] = counts.get(entry["label"], 0) + 1
            out.append((case_id, max(counts, key=lambda name: counts[name])))
        return out


class Engine:
    """One DuckDB connection: every run's index attached read-only, the people's labels
    in a table of their own. Each request gets a cursor (DuckDB's per-thread handle)."""

    def __init__(self, humans: HumanLabels | None = None, *, threads: int = 2) -> None:
        self._db = duckdb.connect(config={"memory_limit": MEMORY_LIMIT, "threads": threads})
        self._lock = threading.Lock()
        self._attached: dict[str, str] = {}  # index path -> alias
        # aliases are never reused: one from a count of those attached now would, after a
        # detach, name a schema another run still holds
        self._aliases = itertools.count()
        self.humans = humans or HumanLabels()
        self._db.execute("CREATE TABLE human (id VARCHAR PRIMARY KEY, label VARCHAR)")
        rows = self.humans.consensus()
        if rows:
            self._db.executemany("INSERT INTO human VALUES (?, ?)", rows)

    def close(self) -> None:
        self._db.close()

    def alias(self, index: Path) -> str:
        """The schema name an index is attached as (attached on first use)."""
        key = str(index)
        with self._lock:
            if key not in self._attached:
                name = f"run{next(self._aliases)}"
                self._db.execute(
                    f"ATTACH '{key.replace(chr(39), chr(39) * 2)}' AS {name} (READ_ONLY)"
                )
                self._attached[key] = name
            return self._attached[key]

    def detach(self, index: Path) -> None:
        """Forget an index (it was rebuilt: the next use attaches the new file)."""
        with self._lock:
            name = self._attached.pop(str(index), None)
            if name is not None:
                self._db.execute(f"DETACH {name}")

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self._db.cursor()

    def records(self, index: Path, query: RecordQuery) -> dict[str, Any]:
        """`{"total", "records": [raw JSON text], "facets"}` for one page of a query."""
        alias = self.alias(index)
        joined = bool(self.humans.by_id)  # no labels: no join, and every case unlabelled
        human = (
            "LEFT JOIN human h ON h.id = r.id"
            if joined
            else "LEFT JOIN (SELECT NULL::VARCHAR AS label) h ON false"
        )
        order = f"{SORTS[query.sort]} {query.order.upper()} NULLS LAST, r.pos"
        cursor = self.cursor()
        try:
            where, params = _where(cursor, query, alias)
            base = f"FROM {alias}.records r {human} WHERE {where}"
            # the page's positions first, then their records: a top-N over narrow columns,
            # not over a million whole records
            top = cursor.execute(
                f"SELECT r.pos {base} ORDER BY {order} LIMIT ? OFFSET ?",
                [*params, query.limit, query.offset],
            ).fetchall()
            positions = [row[0] for row in top]
            page = _by_position(cursor, alias, positions)
            answers = _answers(cursor, alias, positions)
            goals = _goals(cursor, alias, positions)
            found = facets(cursor, base, params)
        finally:
            cursor.close()
        total = sum(found["status"].values())
        reasons = {}
        for text in page:  # the page's records only: PAGE parses, not the run's
            record = json.loads(text)
            reason = verdict_reason(record)
            if reason is not None:
                reasons[str(record.get("id"))] = reason
        return {
            "total": total,
            "records": page,
            "facets": found,
            "answers": answers,
            "goals": goals,
            "reasons": reasons,
        }

    def record(self, index: Path, case_id: str) -> tuple[str, str | None] | None:
        """(record, case) as JSON text, or None for an id the run does not have."""
        alias = self.alias(index)
        cursor = self.cursor()
        try:
            row = cursor.execute(
                f"SELECT raw FROM {alias}.records WHERE id = ? LIMIT 1", [case_id]
            ).fetchone()
            case = cursor.execute(
                f"SELECT case_raw FROM {alias}.cases WHERE cid = ? LIMIT 1", [case_id]
            ).fetchone()
        finally:
            cursor.close()
        return (row[0], case[0] if case else None) if row else None

    def overview(self, index: Path) -> dict[str, Any]:
        """Counts by status, the mean score of `ok` records with its Student t 95% interval
        (as calibration.inference.means.mean_interval), and provenance of the first record."""
        alias = self.alias(index)
        cursor = self.cursor()
        try:
            counts = dict(
                cursor.execute(
                    f"SELECT status, count(*) FROM {alias}.records GROUP BY status ORDER BY status"
                ).fetchall()
            )
            mean, sd, n = cursor.execute(
                f"SELECT avg(score), stddev_samp(score), count(score) FROM {alias}.records "
                "WHERE status = 'ok'"
            ).fetchone() or (None, None, 0)
            tokens = cursor.execute(
                f"SELECT sum(prompt_tokens), sum(completion_tokens) FROM {alias}.records"
            ).fetchone()
            # the first position, then its record: a top-1 carrying `raw` reads every
            # record's text (seconds at a million, on a cold start)
            bins = cursor.execute(
                f"SELECT greatest(0, least({BINS - 1}, floor(score * {BINS})))::INTEGER, "
                f"count(*) FROM {alias}.records WHERE status = 'ok' AND score IS NOT NULL "
                "GROUP BY ALL"
            ).fetchall()
            low = cursor.execute(f"SELECT min(pos) FROM {alias}.records").fetchone()
            first = cursor.execute(
                f"SELECT raw FROM {alias}.records WHERE pos = ANY(?::BIGINT[])",
                [[low[0]] if low else []],
            ).fetchone()
        finally:
            cursor.close()
        return {
            "n": sum(counts.values()),
            "status_counts": counts,
            "mean_score": mean,
            "mean_score_ci95": _t_interval(mean, sd, n),
            "scored": n,
            "tokens": {
                "prompt": (tokens or (0, 0))[0] or 0,
                "completion": (tokens or (0, 0))[1] or 0,
            },
            "first": first[0] if first else None,
            "histogram": _histogram(bins),
        }

    def scores(self, index: Path) -> str:
        """The alias of an index, for joins written by other modules (compare)."""
        return self.alias(index)

    def confusion(self, index: Path) -> dict[str, Any]:
        """People's labels (rows) against the judge's (columns), on the ids both have."""
        alias = self.alias(index)
        cursor = self.cursor()
        try:
            rows = cursor.execute(
                f"SELECT h.label, COALESCE(r.label, r.status), count(*) FROM {alias}.records r "
                "JOIN human h ON h.id = r.id GROUP BY ALL"
            ).fetchall()
        finally:
            cursor.close()
        labels = sorted({str(a) for a, _, _ in rows} | {str(b) for _, b, _ in rows})
        matrix = [[0] * len(labels) for _ in labels]
        for human, judged, count in rows:
            matrix[labels.index(str(human))][labels.index(str(judged))] = int(count)
        return {"labels": labels, "matrix": matrix, "n": sum(c for _, _, c in rows)}


def _histogram(bins: list[tuple[int, int]]) -> dict[str, list[Any]]:
    """Counts of the ok records' scores in BINS equal bins over 0..1 (the last holds 1)."""
    counts = [0] * BINS
    for at, count in bins:
        counts[int(at)] += int(count)
    return {"edges": [round(i / BINS, 10) for i in range(BINS + 1)], "counts": counts}


def _t_interval(mean: float | None, sd: float | None, n: int) -> list[float] | None:
    """Student t 95% interval, clipped to the score's scale (0..1 for every rubric: two
    scores 0 and 1 give t's [-3.9, 4.6]); from LARGE_N values on, the normal quantile (it
    differs from t's by under 0.1%), which spares the first page scipy's import (seconds
    on a busy machine)."""
    if mean is None or n < 2 or sd is None:
        return None
    if n >= LARGE_N:
        half = NormalDist().inv_cdf(0.975) * sd / math.sqrt(n)
        low, high = mean - half, mean + half
    else:
        from calibration.inference.means import mean_interval_from_moments

        low, high = mean_interval_from_moments(mean, sd, n)
    return [max(0.0, low), min(1.0, high)]


def _where(
    cursor: duckdb.DuckDBPyConnection, query: RecordQuery, alias: str
) -> tuple[str, list[Any]]:
    clauses: list[str] = ["true"]
    params: list[Any] = []

    def add(sql: str, *values: Any) -> None:
        clauses.append(sql)
        params.extend(values)

    if query.status:
        add(f"r.status IN ({_marks(query.status)})", *query.status)
    if query.slice:
        add("list_contains(r.slices, ?)", query.slice)
    if query.label == NULL:
        add("r.label IS NULL")
    elif query.label:
        add("r.label = ?", query.label)
    if query.q:
        search = search_clause(cursor, alias, query.q.lower())
        add(search.sql, *search.params)
    if query.min_score is not None:
        add("r.score >= ?", query.min_score)
    if query.max_score is not None:
        add("r.score <= ?", query.max_score)
    if query.jurors == "unanimous":
        add("r.outcome = 'unanimous'")
    elif query.jurors == "split":
        add(f"r.outcome IN ({_marks(SPLIT)})", *SPLIT)
    if query.min_spread is not None:
        add("r.spread >= ?", query.min_spread)
    if query.human == "agree":
        add("h.label IS NOT NULL AND h.label = COALESCE(r.label, r.status)")
    elif query.human == "disagree":
        add("h.label IS NOT NULL AND h.label <> COALESCE(r.label, r.status)")
    elif query.human == "unlabelled":
        add("h.label IS NULL")
    if query.human_label:
        add("h.label = ?", query.human_label)
    if query.judged:
        add("COALESCE(r.label, r.status) = ?", query.judged)
    if query.ids:
        add("r.id = ANY(?::VARCHAR[])", list(query.ids))
    if query.missing:
        add(
            f"list_contains(COALESCE(json_extract_string(r.raw, '{MISSING_CALLS}'), []), ?)",
            query.missing,
        )
    if query.tool:
        # the calls are in the case, not the record: the ids of the cases that made one
        called = (
            f"SELECT cid FROM {alias}.cases WHERE "
            f"list_contains(COALESCE(json_extract_string(case_raw, '{CALLED_TOOLS}'), []), ?)"
        )
        add(f"r.id IN ({called})", query.tool)
    return " AND ".join(clauses), params


def _by_position(cursor: duckdb.DuckDBPyConnection, alias: str, positions: list[int]) -> list[str]:
    """Whole records (JSON text) at these positions, in this order."""
    if not positions:
        return []
    # `= ANY(list)`, not `IN (?, ?, ...)`: DuckDB reads the IN list's scan whole (every
    # record's text: most of a page's time at a million records), the list's only the rows
    found = dict(
        cursor.execute(
            f"SELECT pos, raw FROM {alias}.records WHERE pos = ANY(?::BIGINT[])", [positions]
        ).fetchall()
    )
    return [found[p] for p in positions]


def _answers(cursor: duckdb.DuckDBPyConnection, alias: str, positions: list[int]) -> dict[str, str]:
    """The answer of each record's case (its first ANSWER_CHARS characters), by id, for the
    records table; ids with no case, or a case with no answer, are left out."""
    if not positions:
        return {}
    rows = cursor.execute(
        f"""SELECT c.cid, left(COALESCE(c.case_raw->>'$.answer', c.case_raw->>'$.response',
            c.case_raw->>'$.answer_a'), {ANSWER_CHARS})
        FROM {alias}.cases c WHERE c.cid IN
            (SELECT id FROM {alias}.records WHERE pos = ANY(?::BIGINT[]))""",
        [positions],
    ).fetchall()
    return {str(cid): str(text) for cid, text in rows if cid is not None and text is not None}


def _goals(cursor: duckdb.DuckDBPyConnection, alias: str, positions: list[int]) -> dict[str, str]:
    """The goal of each record's conversation case (its first ANSWER_CHARS characters), by
    id; cases with no goal are left out."""
    if not positions:
        return {}
    rows = cursor.execute(
        f"""SELECT c.cid, left(c.case_raw->>'$.goal', {ANSWER_CHARS})
        FROM {alias}.cases c WHERE c.cid IN
            (SELECT id FROM {alias}.records WHERE pos = ANY(?::BIGINT[]))""",
        [positions],
    ).fetchall()
    return {str(cid): str(text) for cid, text in rows if cid is not None and text is not None}


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)
