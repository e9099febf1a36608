"""Two plain label CSVs read as columns by DuckDB: ten million pairs without a Python object
a row.

The row reader (:mod:`calibration.io.labels`) builds a record, an id string and a dict
entry per row, which passes 2 GB at about four million pairs. Here the engine reads both
files, checks the ids (none blank, none repeated), joins them and hands back the labels as
lists of pointers to a handful of shared strings, the ids packed in one bytes buffer
(:class:`PackedIds`). What it returns is what :func:`calibration.io.labels.join_labels`
returns for the same files, in the same order, so the statistics after it are the same to
the last digit.

It applies only to the plain case, and says so by returning ``None`` for anything else,
which the row reader then reads (with its messages for bad input, file, line and id): a
``.csv`` or ``.tsv`` file whose header is exactly ``id`` and the label field, whose bytes
are printable ASCII (no quote, no apostrophe, no carriage return, no blank line: where
the CSV parser's and the engine's readings could differ, and where a cell could be an
escaped spreadsheet formula), with no blank or repeated id. A JSONL file (the judge's graded
records, or id/label lines) is read by :mod:`calibration.io.columnar_jsonl`, under rules of
its own to the same end: records whose status is not ok excluded and counted as the row
reader counts them, and anything it cannot prove reads the same left to the row reader.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import numpy as np

from calibration.io.columnar_jsonl import load_jsonl
from calibration.io.rows import row_format

__all__ = ["ColumnarLabels", "PackedIds", "SameFields", "read_label_columns"]

DELIMITERS = {".csv": ",", ".tsv": "\t"}
CHUNK = 1 << 18  # ids fetched this many at a time
# one thread (the rows' order is the file's, and CPU-seconds are what a shared machine has),
# and a bound on the engine's memory
ENGINE: dict[str, str | bool | int | float | list[str]] = {
    "threads": 1,
    "preserve_insertion_order": True,
    "memory_limit": "512MB",
}
# the bytes a plain file may hold besides its delimiter: printable ASCII but quotes, newline
_PLAIN = bytes(b for b in range(32, 127) if b not in b"\"'") + b"\n"


class PackedIds(Sequence[str]):
    """Ids in one bytes buffer with their offsets: about 8 bytes an id beyond its text,
    where a list of strings costs about 60."""

    def __init__(self, blob: bytes, offsets: np.ndarray) -> None:
        self._blob, self._offsets = blob, offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        start, end = self._offsets[index], self._offsets[index + 1]
        return self._blob[start:end].decode("ascii")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))


class SameFields(Sequence[dict[str, Any]]):
    """``n`` times the same empty fields: a plain file's rows have none beyond id and label."""

    def __init__(self, n: int, fields: dict[str, Any]) -> None:
        self._n, self._fields = n, fields

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._fields] * len(range(*index.indices(self._n)))
        if not -self._n <= index < self._n:
            raise IndexError(index)
        return self._fields


@dataclass(frozen=True)
class ColumnarLabels:
    """Both files joined: what `join_labels` gives, and what each file left out."""

    ids: PackedIds
    human: list[Any]
    judge: list[Any]
    judge_only: list[str]
    human_only: list[str]
    judge_only_values: list[Any]
    judge_excluded: dict[str, list[str]]  # ids left out by reason (a status not ok)
    human_excluded: dict[str, list[str]]
    judge_rows: int
    human_rows: int


def _plain_header(path: Path, field: str) -> list[str] | None:
    """The header's two column names when the file is plain (module docstring), else None."""
    delimiter = DELIMITERS.get(path.suffix.lower())
    if delimiter is None or not path.is_file():
        return None
    allowed = _PLAIN + delimiter.encode()
    with path.open("rb") as handle:
        head = handle.readline()
        previous = b"\n"
        while chunk := handle.read(CHUNK):
            if chunk.translate(None, allowed) or b"\n\n" in previous[-1:] + chunk:
                return None
            previous = chunk
        if previous.endswith(b"\n\n"):
            return None
    if head.translate(None, allowed) or not head.endswith(b"\n"):
        return None
    names = head.decode("ascii").rstrip("\n").split(delimiter)
    return names if sorted(names) == sorted({"id", field}) and len(names) == 2 else None


def read_label_columns(
    judge_path: str | Path, human_path: str | Path, *, judge_field: str, human_field: str
) -> ColumnarLabels | None:
    """Both files read and joined by the engine, or None when either is not plain (the
    row reader then reads them): a plain CSV/TSV (module docstring), or a JSONL file
    :mod:`calibration.io.columnar_jsonl` can prove reads as the row reader reads it."""
    judge_file, human_file = Path(judge_path), Path(human_path)
    if not judge_file.is_file() or not human_file.is_file():
        return None
    import duckdb  # loaded only when reading columns

    # a database file of its own (not memory): the engine keeps its tables compressed on
    # disk and within memory_limit, where an in-memory one holds ~75 bytes a row
    with tempfile.TemporaryDirectory(prefix="calibrate-") as folder:
        con = duckdb.connect(str(Path(folder) / "labels.duckdb"), config=ENGINE)
        try:
            con.execute("SET enable_progress_bar = false")
            values = []
            for table, file, field in (
                ("j", judge_file, judge_field),
                ("h", human_file, human_field),
            ):
                side = _load_side(con, table, file, field)
                if side is None:
                    return None
                values.append(side)
            return _joined(con, *values)
        except duckdb.Error:
            return None  # the row reader says what is wrong, naming the line
        finally:
            con.close()


def _load_side(con: Any, table: str, file: Path, field: str) -> dict[str, Any] | None:
    """The file as ``table`` (n, id, v: the label's key, x: why excluded) and each key's
    value, or None when the row reader must read it."""
    names = _plain_header(file, field)
    if names is not None:
        return _load(con, table, file, names, field)
    if row_format(file) == "jsonl":
        return load_jsonl(con, table, file, field, human=table == "h")
    return None


def _load(con: Any, table: str, file: Path, names: list[str], field: str) -> dict[str, Any] | None:
    """The plain CSV as table (n: row order, id trimmed, v: the label, x: NULL) and its
    labels (each its own key); None when an id or a label is blank or an id repeated (the
    row reader names the line, or counts the blank label)."""
    columns = "{" + ", ".join(f"'{name}': 'VARCHAR'" for name in names) + "}"
    delimiter = DELIMITERS[file.suffix.lower()]
    label = '"' + field.replace('"', '""') + '"'
    # one thread: the engine reads the file in order, so row_number() is the row's place
    con.execute(
        f"""CREATE TABLE {table} AS SELECT (row_number() OVER ()) AS n, trim(id) AS id,
        CASE WHEN trim({label}) = '' THEN NULL ELSE {label} END AS v, NULL::VARCHAR AS x
        FROM read_csv(?, header = true, delim = ?, quote = '', escape = '',
        auto_detect = false, columns = {columns}, strict_mode = true,
        null_padding = false)""",
        [str(file), delimiter],
    )
    rows, blank, distinct = con.execute(
        f"SELECT count(*), count(*) FILTER (WHERE id IS NULL OR id = '' OR v IS NULL), "
        f"count(DISTINCT id) FROM {table}"
    ).fetchone()
    if not rows or blank or distinct != rows:
        return None
    labels = _ids(con, f"SELECT DISTINCT v FROM {table}")
    return {v: sys.intern(v) for v in labels}


def _ids(con: Any, query: str) -> list[str]:
    return [row[0] for row in con.execute(query).fetchall()]


def _joined(con: Any, judge_values: dict[str, Any], human_values: dict[str, Any]) -> ColumnarLabels:
    con.execute(
        """CREATE TABLE pairs AS SELECT h.n AS n, h.id AS id, h.v AS hv, j.v AS jv
        FROM h JOIN j USING (id) WHERE h.v IS NOT NULL AND j.v IS NOT NULL ORDER BY h.n"""
    )
    human = _values(con, "hv", human_values)
    judge = _values(con, "jv", judge_values)
    # an id excluded on the other side is counted there, not again as unmatched
    only = con.execute(
        "SELECT id, v FROM j WHERE v IS NOT NULL AND id NOT IN (SELECT id FROM h) ORDER BY n"
    ).fetchall()
    return ColumnarLabels(
        ids=_packed(con, len(human)),
        human=human,
        judge=judge,
        judge_only=[row[0] for row in only],
        human_only=_ids(
            con,
            "SELECT id FROM h WHERE v IS NOT NULL AND id NOT IN (SELECT id FROM j) ORDER BY n",
        ),
        judge_only_values=[judge_values[row[1]] for row in only],
        judge_excluded=_excluded(con, "j"),
        human_excluded=_excluded(con, "h"),
        judge_rows=con.execute("SELECT count(*) FROM j").fetchone()[0],
        human_rows=con.execute("SELECT count(*) FROM h").fetchone()[0],
    )


def _values(con: Any, column: str, values: dict[str, Any]) -> list[Any]:
    """The column as a list of pointers to its few distinct values, in pair order."""
    distinct = _ids(con, f"SELECT DISTINCT {column} FROM pairs ORDER BY {column}")
    codes = con.execute(
        f"SELECT list_position(?::VARCHAR[], {column}) - 1 AS c FROM pairs ORDER BY n",
        [distinct],
    ).fetchnumpy()["c"]
    shared = np.array([values[key] for key in distinct] + [None], dtype=object)
    return shared[np.asarray(codes, dtype=np.int64)].tolist()


def _packed(con: Any, count: int) -> PackedIds:
    """The pairs' ids, in order, packed CHUNK at a time."""
    con.execute("CREATE TABLE ordered AS SELECT id FROM pairs ORDER BY n")
    parts: list[bytes] = []
    lengths = np.zeros(count + 1, dtype=np.int64)
    for start in range(0, count, CHUNK):
        ids = con.execute(
            "SELECT id FROM ordered WHERE rowid >= ? AND rowid < ? ORDER BY rowid",
            [start, start + CHUNK],
        ).fetchnumpy()["id"]
        texts = ids.tolist()
        parts.append("".join(texts).encode("ascii"))
        lengths[start + 1 : start + 1 + len(texts)] = np.fromiter(map(len, texts), np.int64)
    return PackedIds(b"".join(parts), np.cumsum(lengths))


def _excluded(con: Any, table: str) -> dict[str, list[str]]:
    """Ids left out, by reason (a status), reasons and ids in the file's order."""
    excluded: dict[str, list[str]] = {}
    rows = con.execute(f"SELECT x, id FROM {table} WHERE x IS NOT NULL ORDER BY n").fetchall()
    for reason, case_id in rows:
        excluded.setdefault(reason, []).append(case_id)
    return excluded
