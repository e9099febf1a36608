"""The word index of a run, built beside its records in the run's index file, so that a
free-text search reads a few narrow columns instead of every record's text.

A search is for a *substring* of the lower-cased text (a record's id, claims, rationale
and error; its case's question and answer), and it must stay exactly that. The index
splits those texts into words at every character that is not a letter, a digit or `_`
(SEPARATORS, Unicode-aware, applied by DuckDB to texts and needles alike). A needle with
no separator occurs in a text exactly when it occurs inside one of the text's words: its
characters are all word characters, so an occurrence lies within one maximal run of
them. So the records matching such a needle are exactly those holding a word that
contains it, found from the vocabulary (a scan of the distinct words, small next to the
texts), then:

- the DENSE most frequent words each own a bit of every record's `b0`..`b3` columns
  (four 64-bit masks): a record holds one of them when its mask and the needle's share
  a bit, a vectorised test over 32 bytes a record;
- every other word is in `rare` (word, pos): the records holding it, joined in.

A needle with separators (`refund policy`, `c0042-r7`) is split the same way; a record
must hold a word containing each piece (a superset of the matches), and those candidates
are then checked against the texts themselves as before. A needle of separators only is
the full scan it always was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

SEPARATORS = r"[^\p{L}\p{N}_]+"  # RE2 (DuckDB's regexp_*): not a letter, digit or _
DENSE = 256  # words given a bit of the masks: the most frequent ones
MASKS = DENSE // 64
BATCH = 20_000  # rows whose words are found at once, when building
MAX_CANDIDATES = 20_000  # a needle with separators: past this, the texts are scanned
MAX_PIECES = 12  # distinct words of one search: each is a vocabulary lookup and a join


class SearchRefused(ValueError):
    """A search the engine will not run (one line: why)."""


def _split(text: str) -> str:
    """SQL: the words of `text` (an SQL expression), empty strings included."""
    return f"regexp_split_to_array({text}, '{SEPARATORS}')"


def build_words(db: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """Build `vocab` and `rare` from `records` (pos, id, text) and `cases` (cid,
    case_text), and a table `word_keys` (pos, b0..b3, id_key) for the caller to set into
    the records and drop; returns those columns' names and types."""
    db.execute("CREATE TABLE case_words (word VARCHAR, cid VARCHAR)")
    _insert_words(db, "case_words", "cases", "cid", "case_text")
    db.execute("CREATE TABLE words (word VARCHAR, pos BIGINT)")
    _insert_words(db, "words", "records", "pos", "text")
    # a case's words belong to every record of its id (the search matched `id IN cases`)
    db.execute(
        "INSERT INTO words SELECT c.word, r.pos FROM case_words c JOIN records r ON r.id = c.cid"
    )
    db.execute("DROP TABLE case_words")
    db.execute(
        f"""CREATE TABLE vocab AS SELECT word, CASE WHEN rank <= {DENSE} THEN rank - 1 END AS bit
        FROM (SELECT word, row_number() OVER (ORDER BY count(*) DESC, word) AS rank
              FROM words GROUP BY word)"""
    )
    # sorted by word: a search's few words then read a few row groups (DuckDB skips those
    # whose least and greatest word leave them out), not the whole table
    db.execute("SET preserve_insertion_order = true")
    db.execute(
        """CREATE TABLE rare AS SELECT w.word, w.pos FROM words w
        JOIN vocab v ON v.word = w.word AND v.bit IS NULL ORDER BY w.word, w.pos"""
    )
    db.execute("SET preserve_insertion_order = false")
    masks = ", ".join(
        f"bit_or(1::UBIGINT << (v.bit % 64)::UBIGINT) FILTER (v.bit // 64 = {i}) AS b{i}"
        for i in range(MASKS)
    )
    db.execute(
        f"""CREATE TABLE masks AS SELECT w.pos, {masks} FROM words w
        JOIN vocab v ON v.word = w.word AND v.bit IS NOT NULL GROUP BY w.pos"""
    )
    db.execute("DROP TABLE words")
    # the id sort as an integer: a top-N over a million strings is seconds on a busy machine
    bits = ", ".join(f"COALESCE(m.b{i}, 0)::UBIGINT AS b{i}" for i in range(MASKS))
    db.execute(
        f"""CREATE TABLE word_keys AS SELECT r.pos, {bits},
            CASE WHEN r.id IS NOT NULL THEN dense_rank() OVER (ORDER BY r.id) END AS id_key
        FROM records r LEFT JOIN masks m ON m.pos = r.pos"""
    )
    db.execute("DROP TABLE masks")
    return [*((f"b{i}", "UBIGINT") for i in range(MASKS)), ("id_key", "BIGINT")]


def _insert_words(
    db: duckdb.DuckDBPyConnection, target: str, table: str, key: str, text: str
) -> None:
    """Each row's distinct words, BATCH rows at a time: a DISTINCT over a million texts at
    once holds more than the build's memory limit."""
    last = db.execute(f"SELECT max(rowid) FROM {table}").fetchone()
    for start in range(0, (last[0] if last and last[0] is not None else -1) + 1, BATCH):
        db.execute(
            f"""INSERT INTO {target} SELECT DISTINCT w, {key} FROM
            (SELECT {key}, unnest({_split(text)}) AS w FROM {table}
             WHERE rowid >= {start} AND rowid < {start + BATCH}) WHERE w <> ''"""
        )


@dataclass(frozen=True)
class Search:
    """The WHERE clause of a free-text search and its parameters."""

    sql: str
    params: list[Any]


def search_clause(cursor: duckdb.DuckDBPyConnection, alias: str, needle: str) -> Search:
    """Records (`r`) whose text or case text holds `needle` (lower-cased already)."""
    pieces = cursor.execute(
        f"SELECT list_filter({_split('?')}, lambda x: x <> '')", [needle]
    ).fetchone()
    # a word held in another one adds nothing: "a b ab" asks for records holding "ab"
    distinct = list(dict.fromkeys(pieces[0])) if pieces and pieces[0] else []
    parts = [p for p in distinct if not any(p != q and p in q for q in distinct)]
    if len(parts) > MAX_PIECES:
        raise SearchRefused(
            f"a search is at most {MAX_PIECES} distinct words, got {len(parts)}: "
            "search for the longest ones"
        )
    if not parts:  # separators only: no word to look up
        return _scan(alias, needle)
    clauses, params = [], []
    for piece in parts:
        sql, values = _holding(cursor, alias, piece)
        clauses.append(sql)
        params += values
    if parts == [needle]:  # exact: the needle is one word's substring
        return Search(clauses[0], params)
    found = cursor.execute(
        f"SELECT r.pos, r.id FROM {alias}.records r WHERE {' AND '.join(clauses)} LIMIT ?",
        [*params, MAX_CANDIDATES + 1],
    ).fetchall()
    if len(found) > MAX_CANDIDATES:
        scan = _scan(alias, needle)
        return Search(f"({' AND '.join(clauses)}) AND {scan.sql}", params + scan.params)
    positions = [row[0] for row in found]
    ids = sorted({row[1] for row in found if row[1] is not None})
    # the candidates' cases only: the needle comes from the joined side, so the check runs
    # after the join and never over every case's text
    exact = (
        f"(contains(r.text, ?) OR r.id IN (SELECT k.id FROM "
        f"(SELECT unnest(?::VARCHAR[]) AS id, ?::VARCHAR AS needle) k "
        f"JOIN {alias}.cases c ON c.cid = k.id WHERE contains(c.case_text, k.needle)))"
    )
    return Search(f"r.pos = ANY(?::BIGINT[]) AND {exact}", [positions, needle, ids, needle])


def _holding(cursor: duckdb.DuckDBPyConnection, alias: str, piece: str) -> tuple[str, list[Any]]:
    """Records holding a word that contains `piece` (which has no separator)."""
    row = cursor.execute(
        f"SELECT list(DISTINCT bit) FILTER (bit IS NOT NULL), bool_or(bit IS NULL) "
        f"FROM {alias}.vocab WHERE contains(word, ?)",
        [piece],
    ).fetchone()
    bits, rare = (row[0] or [], bool(row[1])) if row else ([], False)
    masks = [0] * MASKS
    for bit in bits:
        masks[bit // 64] |= 1 << (bit % 64)
    tests = [f"(r.b{i} & {mask}::UBIGINT) <> 0" for i, mask in enumerate(masks) if mask]
    params: list[Any] = []
    if rare:
        tests.append(
            f"r.pos IN (SELECT pos FROM {alias}.rare WHERE word IN "
            f"(SELECT word FROM {alias}.vocab WHERE bit IS NULL AND contains(word, ?)))"
        )
        params.append(piece)
    return "(" + (" OR ".join(tests) or "false") + ")", params


def _scan(alias: str, needle: str) -> Search:
    """The texts themselves, read whole: every record's and every case's."""
    return Search(
        f"(contains(r.text, ?) OR r.id IN "
        f"(SELECT cid FROM {alias}.cases WHERE contains(case_text, ?)))",
        [needle, needle],
    )
