"""One reader for row files (JSONL or CSV): answer sets, label files, recorded verdicts.

Every command that reads rows reads them here, with one set of rules, so a file that one
command accepts another does not refuse for a reason of form:

- **Format**: ``.csv`` (comma) and ``.tsv`` (tab) are CSV; ``.jsonl``, ``.ndjson`` and
  ``.json`` are JSONL; any other name is JSONL when its first character (after a BOM and
  blanks) is ``{`` or ``[``, CSV otherwise.
- **Bytes**: read line by line as UTF-8; a UTF-8 byte-order mark at the start is dropped;
  a line that is not UTF-8, or longer than :data:`MAX_LINE_BYTES`, is a problem of that
  line (the others are still read).
- **Blank lines** (JSONL) and rows whose every cell is blank (CSV) are skipped.
- **JSONL**: one object per line; a line that is not JSON, not an object, or nested more
  than :data:`MAX_DEPTH` levels is a problem of that line. A whole JSON document (an
  array, or a pretty-printed object) is one problem, :data:`NOT_JSONL`, not one per line.
- **CSV**: the first record is the header; a header that repeats a column, or a row whose
  cell count differs from the header's, is a problem; a row's line is the line it starts
  on (a quoted cell may span lines); a malformed file stops at the line the CSV parser
  gave up on. Cells are text: what they mean is the caller's.

:func:`iter_rows` yields ``(line, row)`` with ``row`` a dict or, for a row that cannot be
read, the problem as text (callers that list every problem at once use it);
:func:`read_rows` raises :class:`CalibrationInputError` at the first problem.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from calibration.errors import CalibrationInputError
from calibration.io.jsontext import MAX_DEPTH, TOO_DEEP, JsonLimitError, loads_bounded
from calibration.io.jsontext import nested_too_deep as nested_too_deep

__all__ = [
    "FORMULA_STARTS",
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "NOT_JSONL",
    "TOO_DEEP",
    "csv_header",
    "escape_cell",
    "is_csv",
    "iter_rows",
    "nested_too_deep",
    "read_label_rows",
    "read_rows",
    "row_format",
    "unescape_cell",
]

MAX_LINE_BYTES = 8 * 1024 * 1024
NOT_JSONL = (
    "expected JSONL, one object per line; this looks like one JSON document over several "
    "lines (an array or a pretty-printed object). Write one case per line, e.g. "
    "jq -c '.[]' FILE.json > FILE.jsonl"
)
BOM = "\ufeff"
_CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}
_JSONL_SUFFIXES = {".jsonl", ".ndjson", ".json"}

Row = dict[str, Any] | str


def row_format(path: str | Path) -> Literal["jsonl", "csv"]:
    """``"csv"`` or ``"jsonl"``: by suffix, else by the first character (module docstring)."""
    suffix = Path(path).suffix.lower()
    if suffix in _CSV_SUFFIXES:
        return "csv"
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    with Path(path).open("rb") as handle:
        head = handle.read(1 << 12).decode("utf-8", "replace").lstrip(BOM + " \t\r\n")
    return "jsonl" if head[:1] in ("{", "[") else "csv"


def is_csv(path: str | Path) -> bool:
    return row_format(path) == "csv"


def _decoded_lines(path: Path) -> Iterator[tuple[int, str | None, str]]:
    """(line number, text or None, problem) for each line of the file, byte-exact; the
    BOM of line 1 dropped."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if len(raw) > MAX_LINE_BYTES:
                problem = f"line is {len(raw)} bytes, over the {MAX_LINE_BYTES}-byte limit"
                yield number, None, problem
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problem = f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
                yield number, None, problem
                continue
            yield number, text.removeprefix(BOM) if number == 1 else text, ""


def _json_row(text: str) -> Row:
    try:
        data = loads_bounded(text)  # the depth rule, before the parser (calibration.io.jsontext)
    except JsonLimitError as exc:  # too deep, or a number over Python's digit limit
        return str(exc)
    if isinstance(data, dict):
        return data
    if isinstance(data, list):
        return "expected a JSON object, got list (JSONL has one case object per line)"
    return f"expected a JSON object, got {type(data).__name__}"


def _iter_jsonl(path: Path) -> Iterator[tuple[int, Row]]:
    first = True
    for number, text, problem in _decoded_lines(path):
        if text is None:
            yield number, problem
            continue
        if not text.strip():
            continue
        was_first, first = first, False
        try:
            row = _json_row(text)
        except json.JSONDecodeError as exc:
            if was_first and (text.strip() == "{" or text.lstrip().startswith("[")):
                yield number, NOT_JSONL  # one message, not one per line of the document
                return
            yield number, f"not valid JSON: {exc.msg} (column {exc.colno})"
            continue
        yield number, row


class _CsvLines:
    """The file's decoded lines for ``csv.reader``, remembering the last line number read
    and the lines that could not be decoded (each read as an empty line)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last = 0
        self.problems: list[tuple[int, str]] = []

    def __iter__(self) -> Iterator[str]:
        for number, text, problem in _decoded_lines(self.path):
            self.last = number
            if text is None:
                self.problems.append((number, problem))
                yield "\n"
            else:
                yield text

    def reader(self) -> Iterator[list[str]]:
        return csv.reader(self, delimiter=_CSV_SUFFIXES.get(self.path.suffix.lower(), ","))


def _next_cells(reader: Iterator[list[str]]) -> list[str] | str | None:
    """The next record's cells, ``None`` at the end, or why the CSV parser gave up."""
    try:
        return next(reader)
    except StopIteration:
        return None
    except csv.Error as exc:
        return f"unreadable CSV ({exc})"


def _iter_csv(path: Path) -> Iterator[tuple[int, Row]]:
    """(line, row) for each CSV record; undecodable or over-long lines are problems,
    yielded in line order."""
    lines = _CsvLines(path)
    reader = lines.reader()
    header = _next_cells(reader)
    if isinstance(header, str):
        yield lines.last, f"{header} in the header"
    if not isinstance(header, list):
        return
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        yield 1, f"the CSV header repeats the column {', '.join(map(repr, repeated))}"
        return
    yield from _csv_records(reader, header, lines)


def _csv_records(
    reader: Iterator[list[str]], header: list[str], lines: _CsvLines
) -> Iterator[tuple[int, Row]]:
    problems = lines.problems
    while True:
        start = lines.last + 1
        cells = _next_cells(reader)
        if cells is None:
            break
        if isinstance(cells, str):
            yield lines.last, cells
            break
        while problems:
            yield problems.pop(0)
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            yield start, f"has {len(cells)} fields, the header has {len(header)}"
            continue
        yield start, dict(zip(header, cells, strict=True))
    while problems:
        yield problems.pop(0)


def iter_rows(path: str | Path) -> Iterator[tuple[int, Row]]:
    """(line, row) for each row of a JSONL or CSV file; ``row`` is the problem as text
    when the row cannot be read (the rules are in the module docstring). Raises
    ``OSError`` when the file cannot be opened."""
    file = Path(path)
    return _iter_csv(file) if is_csv(file) else _iter_jsonl(file)


def csv_header(path: str | Path) -> list[str]:
    """The column names of a CSV file (empty when it has none or cannot be parsed)."""
    try:
        return next(_CsvLines(Path(path)).reader(), [])
    except csv.Error:
        return []


def read_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, row) for each row; :class:`CalibrationInputError` naming the file and line
    at the first row that cannot be read, or the file when it cannot be opened."""
    file = Path(path)
    if not file.is_file():
        raise CalibrationInputError("no such file", path=file)
    try:
        for line, row in iter_rows(file):
            if isinstance(row, str):
                raise CalibrationInputError(row, path=file, line=line)
            yield line, row
    except OSError as exc:
        raise CalibrationInputError(f"cannot read the file: {exc.strerror}", path=file) from exc


# ---- label CSVs and spreadsheets ----------------------------------------------------------

#: A cell starting with one of these is a formula to a spreadsheet (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(text: str) -> str:
    """``text`` safe to open in a spreadsheet: a leading ``'`` before a formula start (and
    before a ``'`` that already precedes one, so :func:`unescape_cell` is its exact
    inverse). ``-1`` is written ``'-1``; ``refund-014`` as it is."""
    if text.startswith(FORMULA_STARTS) or unescape_cell(text) != text:
        return "'" + text
    return text


def unescape_cell(text: str) -> str:
    """The inverse of :func:`escape_cell`: drop a leading ``'`` that precedes a formula
    start or another ``'``; any other cell is returned as it is."""
    if text.startswith("'") and text[1:].startswith((*FORMULA_STARTS, "'")):
        return text[1:]
    return text


def read_label_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`read_rows` of a label file: a CSV's cells are unescaped (:func:`unescape_cell`),
    so the labels `judge label export` wrote read back exactly."""
    csv_file = is_csv(path)
    for line, row in read_rows(path):
        if csv_file:
            row = {k: unescape_cell(v) if isinstance(v, str) else v for k, v in row.items()}
        yield line, row
