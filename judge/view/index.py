"""The index of one run: a DuckDB file built from its records file (and its cases file)
by DuckDB itself, then queried in place; never a scan in Python per request.

DuckDB reads JSONL and Parquet as they are, but searching a million JSON lines means
parsing a million JSON lines on every keystroke (benchmarks/view.md: seconds). So each
records file gets, once, a columnar table of what the pages filter, sort and search on:
position in the file, id, status, score, label, slices, the panel's outcome and the spread
of its jurors' scores, the record's search text (lower-cased id, claims, rationale and
error), its tokens, and the whole record as JSON text; and a table of the cases (id,
lower-cased question and answer, the whole case). Then the word index of both texts
(judge.view.words), which a search reads instead of the texts, and `id_key`, the rank of
the record's id, which the id sort orders by. The two are not joined when built: a hash join of a
million long texts does not fit the memory the server allows itself, while a search joins
only the ids that matched. The index is a file
`<sha256 of the records path>.duckdb` in the index folder (`$JUDGE_VIEW_INDEX`, else
`~/.cache/llm-judge/view`); it records the records (and cases) file's size and mtime, and
is rebuilt when either changes. Building writes a temporary file and renames it, so a
killed build leaves no half index.

The index holds case text, so it is private as the label store is: the folder (and any
folder made for it) 0700, every index file 0600, whatever the umask. DuckDB reads `*`, `?`,
`[...]` and `{...}` in a path as a glob, so a file whose path holds one is read through a
link of a plain name in the index folder, removed once the index is built.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb

from judge.view.words import build_words

INDEX_VERSION = "3"
INDEX_ENV = "JUDGE_VIEW_INDEX"
MEMORY_LIMIT = "384MB"  # the server stays under 1 GB at a million records (benchmarks/)
GLOB_CHARACTERS = frozenset("*?[]{}")


@dataclass(frozen=True)
class Source:
    """What one run's index is built from: the records file and, if known, its cases."""

    records: Path
    cases: Path | None = None

    def stamp(self) -> str:
        """Size and mtime of every file the index reads: a change means a rebuild."""
        parts = [INDEX_VERSION]
        for path in (self.records, self.cases):
            if path is not None:
                info = path.stat()
                parts.append(f"{path.resolve()}:{info.st_size}:{info.st_mtime_ns}")
        return "|".join(parts)


def index_folder(env: Mapping[str, str] | None = None) -> Path:
    """Where index files live: `$JUDGE_VIEW_INDEX`, else ~/.cache/llm-judge/view."""
    env = os.environ if env is None else env
    given = env.get(INDEX_ENV)
    return Path(given) if given else Path.home() / ".cache" / "llm-judge" / "view"


def index_path(folder: Path, source: Source) -> Path:
    key = f"{source.records.resolve()}|{source.cases.resolve() if source.cases else ''}"
    return folder / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.duckdb"


def ensure_index(folder: Path, source: Source) -> Path:
    """The up-to-date index of `source`, built now if missing or stale."""
    path = index_path(folder, source)
    stamp = source.stamp()
    private_folder(folder)
    if path.exists() and _stamp_of(path) == stamp:
        os.chmod(path, 0o600)  # an index an older version left readable
        return path
    temporary = path.with_suffix(f".{os.getpid()}.building")
    temporary.unlink(missing_ok=True)
    links: list[Path] = []
    readable = Source(
        _unglobbed(folder, source.records, links),
        _unglobbed(folder, source.cases, links) if source.cases else None,
    )
    # one thread: parsing JSON lines in parallel while keeping their order holds several
    # buffers of long lines at once (out of memory at 384 MB on 200,000 records)
    db = duckdb.connect(str(temporary), config={"memory_limit": MEMORY_LIMIT, "threads": 1})
    built = False
    try:
        _build(db, readable)
        db.execute("CREATE TABLE meta AS SELECT ? AS stamp", [stamp])
        built = True
    finally:
        db.close()
        for leftover in links if built else [*links, temporary, Path(f"{temporary}.wal")]:
            leftover.unlink(missing_ok=True)  # a failed build leaves no case text behind
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)
    return path


def private_folder(folder: Path) -> None:
    """`folder` made (with its missing parents) and kept 0700, whatever the umask."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    for part in reversed(missing):
        part.mkdir(mode=0o700, exist_ok=True)
        os.chmod(part, 0o700)
    if folder.stat().st_uid == os.getuid():
        os.chmod(folder, 0o700)


def _unglobbed(folder: Path, path: Path, links: list[Path]) -> Path:
    """`path`, or a link to it of a name DuckDB cannot read as a glob (added to `links`)."""
    if not GLOB_CHARACTERS & set(str(path)):
        return path
    if GLOB_CHARACTERS & set(str(folder)):
        raise ValueError(f"{path.name}: a name with * ? [ ] {{ }} is read through the index "
                         f"folder, whose own name holds one; rename the file")  # fmt: skip
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    suffix = ".parquet" if path.suffix.lower() == ".parquet" else ".jsonl"
    link = folder / f"{digest}.{os.getpid()}.source{suffix}"
    link.unlink(missing_ok=True)
    link.symlink_to(path.resolve())
    links.append(link)
    return link


def _stamp_of(path: Path) -> str | None:
    try:
        with duckdb.connect(str(path), read_only=True) as db:
            row = db.execute("SELECT stamp FROM meta").fetchone()
    except duckdb.Error:
        return None
    return str(row[0]) if row else None


def quoted(path: Path) -> str:
    """A path as an SQL string literal (table functions take literals)."""
    return "'" + str(path).replace("'", "''") + "'"


def _build(db: duckdb.DuckDBPyConnection, source: Source) -> None:
    # `pos` is the line order: a table keeps insertion order in its rowid. Later steps need
    # no order (every query sorts, `pos` last), so they may stream and spill.
    db.execute("SET preserve_insertion_order = true")
    db.execute(f"CREATE TABLE lines AS SELECT {_raw_expression(source.records)}")
    db.execute("SET preserve_insertion_order = false")
    cases = "SELECT NULL::VARCHAR AS cid, NULL::VARCHAR AS case_text, NULL::VARCHAR AS case_raw WHERE false"
    if source.cases is not None:
        cases = f"""SELECT json->>'$.id' AS cid,
            lower(concat_ws(' ', COALESCE(json->>'$.question', json->>'$.user_input'),
                COALESCE(json->>'$.answer', json->>'$.response'),
                json->>'$.answer_a', json->>'$.answer_b')) AS case_text,
            CAST(json AS VARCHAR) AS case_raw
            FROM read_ndjson_objects({quoted(source.cases)}, ignore_errors = true)
            WHERE json_valid(json)"""
    db.execute(f"CREATE TABLE cases AS {cases}")
    db.execute(_RECORDS_SQL)
    db.execute("DROP TABLE lines")
    # the word index (judge.view.words): its masks and the integer id sort key go into the
    # records table, set in place (a copy would rewrite every record's text)
    columns = build_words(db)
    for name, kind in columns:
        db.execute(f"ALTER TABLE records ADD COLUMN {name} {kind}")
    assigned = ", ".join(f"{name} = k.{name}" for name, _ in columns)
    db.execute(f"UPDATE records SET {assigned} FROM word_keys k WHERE records.pos = k.pos")
    db.execute("DROP TABLE word_keys")


def _raw_expression(records: Path) -> str:
    """`raw` (one JSON record a row) from JSONL as it is, or from `judge grade --parquet`'s
    flat table, put back into a record's shape."""
    if records.suffix.lower() != ".parquet":
        return (
            f"json AS raw FROM read_ndjson_objects({quoted(records)}, ignore_errors = true) "
            "WHERE json_valid(json) AND json->>'$.id' IS NOT NULL"
        )
    return f"""json_object(
        'id', id, 'rubric', split_part(rubric, '@', 1),
        'rubric_version', TRY_CAST(split_part(rubric, '@', 2) AS INTEGER),
        'rubric_sha256', rubric_sha256,
        'judge', json_object('model', judge_model, 'temperature', judge_temperature,
            'seed', judge_seed, 'max_tokens', judge_max_tokens,
            'output_mode', judge_output_mode, 'system_fingerprint', judge_system_fingerprint),
        'judge_id', judge_id, 'status', status, 'verdict', json(verdict), 'score', score,
        'label', label, 'error', error, 'raw', raw, 'cached', cached,
        'usage', json_object('prompt_tokens', prompt_tokens,
            'completion_tokens', completion_tokens),
        'latency_ms', latency_ms, 'slices', slices) AS raw
        FROM read_parquet({quoted(records)})"""


_RECORDS_SQL = """
CREATE TABLE records AS
WITH parsed AS (
    SELECT rowid AS pos, raw,
        raw->>'$.id' AS id,
        raw->>'$.status' AS status,
        TRY_CAST(raw->>'$.score' AS DOUBLE) AS score,
        raw->>'$.label' AS label,
        COALESCE(TRY_CAST(json_extract(raw, '$.slices') AS VARCHAR[]), []) AS slices,
        raw->>'$.panel.outcome' AS outcome,
        TRY_CAST(json_extract(raw, '$.panel.jurors[*].score') AS DOUBLE[]) AS juror_scores,
        COALESCE(json_extract_string(raw, '$.verdict.claims[*].claim'), []) AS claims,
        raw->>'$.verdict.rationale' AS rationale,
        raw->>'$.error' AS error,
        TRY_CAST(raw->>'$.usage.prompt_tokens' AS BIGINT) AS prompt_tokens,
        TRY_CAST(raw->>'$.usage.completion_tokens' AS BIGINT) AS completion_tokens
    FROM lines
)
SELECT p.pos, p.id, p.status, p.score, p.label, p.slices, p.outcome,
    list_max(p.juror_scores) - list_min(p.juror_scores) AS spread,
    lower(concat_ws(' ', p.id, array_to_string(p.claims, ' '), p.rationale, p.error)) AS text,
    p.prompt_tokens, p.completion_tokens, CAST(p.raw AS VARCHAR) AS raw
FROM parsed p
"""
