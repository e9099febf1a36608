"""A JSONL label file read as columns by DuckDB, the judge's graded records included.

`judge calibrate graded.jsonl human.csv` is how calibrate is run most: the judge side is
`judge grade`'s records (``id``, ``status``, ``label``, ``score`` and a dozen fields more).
Here the engine reads only ``id``, ``status``, ``annotator`` and the label field of each
line, and what the row reader (:func:`calibration.io.labels.read_labels`) does with them
is done once per distinct (status, label) pair, in Python, by the same rules:

- a ``status`` other than ``ok`` (``parse_error``, ``api_error``, ``escalated``...) is
  excluded and counted under ``status S``; ``abstained`` with no label is the label
  ``abstained`` (for the ``label`` field); no status, or ``ok``, keeps the label;
- a kept label is the JSON value as Python's parser gives it (text interned, numbers of
  the same type), so normalisation afterwards is the same.

Nothing is guessed: the file is first scanned in bulk for anything where DuckDB's reader
and Python's could read a line differently (:func:`plain_jsonl`), and the fast path is left
(``None``: the row reader then reads the file, with its messages naming file, line and id)
for any of: a kept row without a label or with a blank one, a label that is a list or an
object, an id that is not a JSON string of printable ASCII with no space at either end, a
status that is not text, an ``annotator`` value, a label field named like one of those,
an id repeated among the kept rows, a line DuckDB refuses (not JSON, not an object, a key
repeated...).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from calibration.io.jsontext import MAX_DEPTH, text_too_deep
from calibration.io.labels import ABSTAINED, _is_blank
from calibration.io.rows import MAX_LINE_BYTES

__all__ = ["load_jsonl", "plain_jsonl"]

CHUNK = 1 << 22  # bytes scanned at a time
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OWN_COLUMNS = frozenset({"id", "status", "annotator"})
# an id the fast path takes: printable ASCII, no space at either end (so Python's strip and
# DuckDB's agree, and the ids pack as ASCII)
_ID = "[!-~]([ -~]*[!-~])?"
BOM = b"\xef\xbb\xbf"
# Each byte as the checks see it, most of them "." (so searches skip fast): digits "0",
# "{" for both openings, "}" for both closers, the letters of nan and inf lowered, comma
# and newline as they are; JSON's blanks are then deleted
_SHAPE = bytearray(b"." * 256)
for _chars, _as in (("0123456789", "0"), ("{[", "{"), ("}]", "}"), ("\t\r ", " ")):
    for _char in _chars:
        _SHAPE[ord(_char)] = ord(_as)
for _char in "nafi,\n":
    _SHAPE[ord(_char)] = _SHAPE[ord(_char.upper())] = ord(_char)
SHAPE = bytes(_SHAPE)
_NOT_OPENING = bytes(b for b in range(256) if b not in b"{\n")
# What DuckDB's parser reads and Python's refuses (or reads otherwise): a trailing comma,
# nan/inf/infinity in any case (Python reads only NaN, Infinity and -Infinity: those fall
# back too, which costs speed only). A line where the shape holds one of these candidates
# is checked exactly, outside its strings.
_CANDIDATES = (b",}", b"nan", b"inf")
_LENIENT = (b",}", b",]", b"nan", b"inf")


def plain_jsonl(path: Path, *, human: bool) -> bool:
    """Whether every line of the JSONL file that DuckDB accepts reads the same by the row
    reader, as far as bulk byte checks can tell (module docstring); conservative: a line
    that only might differ makes the answer False. A line DuckDB refuses is no concern
    here: the whole file then goes to the row reader.

    Checked: no vertical tab or form feed (DuckDB skips them around a line, Python does
    not), no BOM but at the very start, no line over the row reader's byte limit, no run of
    more digits than Python converts to an integer; outside strings, nothing of
    :data:`_LENIENT`; no line nested more than 64 deep (a line opening more than 64
    containers, strings included, is checked by the row reader's own exact test). The
    human side also has no ``"rubric`` and no ``\\u`` escape, so no row can carry the
    graded-record fields that mark a swapped pair of files. A few C passes a chunk."""
    digits = sys.get_int_max_str_digits()
    too_long = b"0" * (digits + 1) if digits else None
    rest = b""
    with path.open("rb") as handle:
        first = True
        while block := handle.read(CHUNK):
            text = rest + block
            cut = text.rfind(b"\n") + 1
            chunk, rest = text[:cut], text[cut:]
            if len(rest) >= MAX_LINE_BYTES - CHUNK:
                return False
            if first:
                chunk, first = chunk.removeprefix(BOM), False
            if not _plain_chunk(chunk, too_long, human):
                return False
        return _plain_chunk(rest, too_long, human)


def _plain_chunk(chunk: bytes, too_long: bytes | None, human: bool) -> bool:
    if b"\x0b" in chunk or b"\x0c" in chunk or (b"\xef" in chunk and BOM in chunk):
        return False
    if human and (b'"rubric' in chunk or b"\\u" in chunk):
        return False
    shape = chunk.translate(SHAPE, b" \t\r")  # blanks deleted: ", }" is ",}"
    if too_long is not None and too_long in shape:
        return False
    if _lenient(chunk, shape):
        return False
    return not _too_deep(chunk, shape)


def _lenient(chunk: bytes, shape: bytes) -> bool:
    """Whether a line where the shape holds a candidate holds, outside its strings, what
    only DuckDB reads (the shape keeps the lines, so its n-th line is the chunk's)."""
    found = sorted(at for pattern in _CANDIDATES for at in _finds(shape, pattern))
    if not found:
        return False
    numbers, line, previous = [], 0, 0
    for at in found:  # each candidate's line, counting the newlines once
        line += shape.count(b"\n", previous, at)
        numbers.append(line)
        previous = at
    lines = chunk.split(b"\n")
    for number in dict.fromkeys(numbers):
        outside = _outside_strings(lines[number]).translate(None, b" \t\r").lower()
        if any(lenient in outside for lenient in _LENIENT):
            return True
    return False


def _finds(text: bytes, pattern: bytes) -> list[int]:
    found, at = [], text.find(pattern)
    while at >= 0:
        found.append(at)
        at = text.find(pattern, at + 1)
    return found


def _outside_strings(line: bytes) -> bytes:
    """The line's text outside JSON strings: escaped backslashes, then escaped quotes,
    dropped (as :func:`calibration.io.jsontext.text_too_deep` does), then every piece
    between quotes. Right for a line DuckDB accepts (strings closed); a line it refuses
    sends the file to the row reader anyway."""
    line = line.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(line.split(b'"')[::2])


def _too_deep(chunk: bytes, shape: bytes) -> bool:
    """Whether a line nests more than 64 deep: lines opening more than 64 containers
    (strings included: a bound) are checked by the row reader's own exact test."""
    openings = shape.translate(None, _NOT_OPENING)
    if len(openings) - openings.count(b"\n") <= MAX_DEPTH:
        return False
    deep = [i for i, line in enumerate(openings.split(b"\n")) if len(line) > MAX_DEPTH]
    if not deep:
        return False
    lines = chunk.split(b"\n")
    return any(text_too_deep(lines[i]) for i in deep)


def load_jsonl(
    con: Any, table: str, file: Path, field: str, *, human: bool
) -> dict[str, Any] | None:
    """The file as ``table`` (n: the row's place, id, v: the kept label's key or NULL,
    x: why it was excluded or NULL), and each key's value; None when the fast path cannot
    prove it reads as the row reader does."""
    if not _FIELD.fullmatch(field) or field in _OWN_COLUMNS or not plain_jsonl(file, human=human):
        return None
    columns = {"id": "JSON", "status": "JSON", "annotator": "JSON", field: "JSON"}
    spec = "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in columns.items()) + "}"
    con.execute(
        f"""CREATE TABLE {table}_raw AS SELECT (row_number() OVER ()) AS n, id, status,
        "{field}" AS label, annotator FROM read_ndjson(?, columns = {spec},
        format = 'newline_delimited', records = true)""",
        [str(file)],
    )
    rows, odd = con.execute(
        f"""SELECT count(*), count(*) FILTER (WHERE annotator IS NOT NULL
        OR json_type(id) IS DISTINCT FROM 'VARCHAR'
        OR NOT regexp_full_match(id ->> '$', '{_ID}')
        OR (status IS NOT NULL AND json_type(status) <> 'VARCHAR')) FROM {table}_raw"""
    ).fetchone()
    if not rows or odd:
        return None
    outcomes = _outcomes(con, table, field)
    if outcomes is None:
        return None
    # the few outcomes as a table (compared as text: the JSON exactly as DuckDB wrote it)
    con.execute(
        f"""CREATE TABLE {table}_outcome AS SELECT unnest(?::VARCHAR[]) AS status,
        unnest(?::VARCHAR[]) AS label, unnest(?::VARCHAR[]) AS v, unnest(?::VARCHAR[]) AS x""",
        [list(column) for column in zip(*outcomes, strict=True)],
    )
    con.execute(
        f"""CREATE TABLE {table} AS SELECT r.n AS n, r.id ->> '$' AS id, o.v AS v, o.x AS x
        FROM {table}_raw r JOIN {table}_outcome o
        ON r.status::VARCHAR IS NOT DISTINCT FROM o.status
        AND r.label::VARCHAR IS NOT DISTINCT FROM o.label ORDER BY r.n"""
    )
    con.execute(f"DROP TABLE {table}_raw")
    con.execute(f"DROP TABLE {table}_outcome")
    kept, distinct = con.execute(
        f"SELECT count(*), count(DISTINCT id) FROM {table} WHERE v IS NOT NULL"
    ).fetchone()
    if kept != distinct:
        return None  # a repeated id: the row reader names its line
    return {key: _value(key) for _, _, key, _ in outcomes if key is not None}


def _outcomes(con: Any, table: str, field: str) -> list[tuple[Any, Any, Any, Any]] | None:
    """(status, label, kept label's key, exclusion reason) for each distinct pair, by the
    row reader's rules (:func:`calibration.io.labels._record`); None when one of them
    would be an error, a blank label or a value the fast path does not take."""
    out: list[tuple[Any, Any, Any, Any]] = []
    pairs = con.execute(
        f"SELECT DISTINCT status::VARCHAR, label::VARCHAR FROM {table}_raw"
    ).fetchall()
    for status_text, label_text in pairs:
        status = None if status_text is None else json.loads(status_text)
        label = None if label_text is None else json.loads(label_text)
        if str(status).strip() == ABSTAINED and field == "label" and _is_blank(label):
            out.append((status_text, label_text, json.dumps(ABSTAINED), None))
        elif not _is_blank(status) and str(status).strip() != "ok":
            out.append((status_text, label_text, None, f"status {status}"))
        elif _is_blank(label) or isinstance(label, list | dict):
            return None  # missing (an error), blank (excluded) or a list: the row reader
        else:
            out.append((status_text, label_text, label_text, None))
    return out


def _value(key: str) -> Any:
    """A kept label's value, as Python's parser reads it; text interned (as the row
    reader does: a handful of labels over millions of rows)."""
    value = json.loads(key)
    return sys.intern(value) if isinstance(value, str) else value
