"""DataFrames and Arrow tables as answer sets, and Parquet files: rows that become cases by
the rules of a JSONL or CSV file (the same column names and aliases, Ragas' names with ids
from row numbers, list cells written as text read as lists).

pandas, polars and pyarrow are optional (`pip install 'llm-judge[frames]'`): a frame is
recognised by its type's module name, and a library is imported only when a frame or a
Parquet file of it is used.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judge.engine._inputs_csv import case_cells
from judge.errors import InputError, UsageError

FRAME_LIBRARIES = ("pandas", "polars", "pyarrow")
PARQUET_SUFFIXES = (".parquet", ".pq")
_BATCH_ROWS = 4096
_BATCH_BYTES = 32 * 1024 * 1024


def is_frame(value: Any) -> bool:
    """A pandas or polars DataFrame, or an Arrow Table or RecordBatch (by module name,
    without importing any of them).

    >>> is_frame([{"id": "1"}]), is_frame("cases.jsonl")
    (False, False)
    """
    module = type(value).__module__.split(".", 1)[0]
    return module in FRAME_LIBRARIES and hasattr(value, "columns")


def is_parquet(path: Path) -> bool:
    """A Parquet file, by its name (`.parquet`, `.pq`).

    >>> is_parquet(Path("answers.parquet")), is_parquet(Path("answers.jsonl"))
    (True, False)
    """
    return path.suffix.lower() in PARQUET_SUFFIXES


def is_records_parquet(path: Path) -> bool:
    """Whether a file is a Parquet table of records this tool wrote (`frame_out`'s
    columns), read from its footer only."""
    try:
        parquet = _require("pyarrow.parquet", "read Parquet files")
        names = set(parquet.read_schema(path).names)
    except (UsageError, OSError, ValueError):
        return False
    return {"id", "rubric", "status", "rubric_sha256", "judge_id"} <= names


def frame_rows(frame: Any) -> Iterator[dict[str, Any]]:
    """The rows of a frame as plain dicts (`plain_row`), in order."""
    module = type(frame).__module__.split(".", 1)[0]
    if module == "pandas":
        rows = frame.to_dict(orient="records")
    elif module == "polars":
        rows = frame.to_dicts()
    else:
        rows = frame.to_pylist()
    for row in rows:
        yield plain_row(row)


def parquet_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(row number from 1, row) of a Parquet file, read as Parquet (its own types: a list
    column is a list, a struct a dict) in batches of at most about `_BATCH_BYTES`, so memory
    stays flat however long a cell is; a row nested too deeply is its problem as text, as a
    JSONL line's is. A file that is not Parquet is an InputError naming it."""
    parquet = _require("pyarrow.parquet", "read Parquet files")
    import pyarrow

    unreadable = (OSError, ValueError, NotImplementedError, pyarrow.ArrowException)
    try:
        table = parquet.ParquetFile(path)
        batches = table.iter_batches(batch_size=_batch_rows(table.metadata))
    except unreadable as exc:
        raise InputError(str(path), [(None, None, f"not a Parquet file ({_said(exc)})")]) from None
    number = 0
    try:
        for batch in batches:
            for row in batch.to_pylist():
                number += 1
                yield number, _checked(row)
    except unreadable as exc:
        problem = f"unreadable Parquet data after row {number} ({_said(exc)})"
        raise InputError(str(path), [(None, None, problem)]) from None


def _batch_rows(metadata: Any) -> int:
    """Rows a batch of about `_BATCH_BYTES` holds, by the file's own (uncompressed) sizes."""
    groups = [metadata.row_group(i) for i in range(metadata.num_row_groups)]
    rows, size = sum(g.num_rows for g in groups), sum(g.total_byte_size for g in groups)
    if rows == 0 or size == 0:
        return _BATCH_ROWS
    return max(1, min(_BATCH_ROWS, _BATCH_BYTES * rows // size))


def _checked(row: dict[str, Any]) -> dict[str, Any] | str:
    # imported here: `judge rubrics` and `--help` reach this module and load no calibration
    from calibration.io.rows import TOO_DEEP, nested_too_deep

    try:
        plain = plain_row(row)
    except RecursionError:
        return TOO_DEEP
    return TOO_DEEP if nested_too_deep(plain) else plain


def _said(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def plain_row(row: dict[Any, Any]) -> dict[str, Any]:
    """A frame row as a file row: missing cells (None, NaN, NaT) left out, numpy scalars and
    arrays as Python values and lists, and text cells read as a CSV's are (a list column
    saved as text, `"['a', 'b']"`, is a list; `metadata` text is JSON).

    >>> plain_row({"id": 7, "answer": "yes", "reference": float("nan"),
    ...            "retrieved_contexts": "['a', 'b']"})
    {'id': 7, 'answer': 'yes', 'retrieved_contexts': ['a', 'b']}
    """
    out: dict[str, Any] = {}
    texts: dict[str, str] = {}
    for key, value in row.items():
        value = _plain(value)
        if value is None:
            continue
        if isinstance(value, str):
            texts[str(key)] = value
        out[str(key)] = value
    cells = case_cells(texts)  # text cells: CSV's rules (lists, metadata JSON, "" is no value)
    return {
        key: cells[key] if key in texts else value
        for key, value in out.items()
        if key not in texts or key in cells
    }


def _plain(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if type(value).__name__ in ("NaTType", "NAType"):
        return None
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        value = value.tolist()  # a numpy scalar or array, a pandas/arrow array
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        # each value converted once: calling _plain twice per level made a struct nested
        # 80 deep take 2**80 steps (a Parquet row's metadata, tests/api/test_parquet_input.py)
        plain = {str(k): _plain(v) for k, v in value.items()}
        return {k: v for k, v in plain.items() if v is not None}
    return value


def _require(module: str, purpose: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".", 1)[0]
        raise UsageError(
            f"{package} is needed to {purpose}: pip install 'llm-judge[frames]'"
        ) from None
