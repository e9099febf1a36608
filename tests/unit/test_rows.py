"""Issue 12 item 6: one JSONL/CSV reader (calibration.io.rows) with one set of rules, for answer
sets (`judge grade`, probes, the service) and label files (`judge calibrate`, `judge gate`).

Each row of the table is one rule: the same bytes give the same problem, at the same file
and line, whether the file is read as cases or as labels. Where the two sides differed
the stricter or clearer rule was kept (label files used to refuse a non-UTF-8 byte for the
whole file with no line, accept any line length and a short CSV row, crash on deep
nesting, call a JSON array file "not valid JSON", and read a .tsv as one column).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calibration import CalibrationInputError, read_labels
from judge.engine.inputs import iter_cases, validate_file
from judge.errors import InputError
from judge.rubric import load_rubric

# Valid as a case, and as a label file read with `field="answer"`.
CASE = {"id": "c1", "question": "q?", "contexts": ["c"], "answer": "a"}
HEADER = "id,question,contexts,answer\n"
ROW = "c1,q?,c,a\n"
BIG = 8 * 1024 * 1024 + 10


def jsonl(*rows: object) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()


# (file name, bytes, line, what the message says)
RULES: list[tuple[str, bytes, int, str]] = [
    ("latin1.jsonl", jsonl(CASE) + '{"id": "caf\xe9"}\n'.encode("latin-1"), 2, "not UTF-8 (byte 0xe9"),
    ("latin1.csv", (HEADER + ROW).encode() + "c2,caf\xe9,c,a\n".encode("latin-1"), 3, "not UTF-8"),
    ("long.jsonl", jsonl(CASE, {**CASE, "id": "c2", "answer": "a" * BIG}), 2, "-byte limit"),
    ("deep.jsonl", jsonl(CASE, "[" * 3000 + "]" * 3000), 2, "nested more than 64 levels"),
    ("deep70.jsonl", jsonl(CASE, {**CASE, "id": "c2", "metadata": {"m": json.loads("[" * 70 + "]" * 70)}}), 2, "nested more than 64 levels"),
    ("array.json", json.dumps([CASE, CASE], indent=2).encode(), 1, "expected JSONL, one object per line"),
    ("list.jsonl", jsonl(CASE, [1, 2]), 2, "expected a JSON object, got list"),
    ("torn.jsonl", jsonl(CASE, '{"id": "c2", '), 2, "not valid JSON"),
    ("short.csv", (HEADER + ROW + "c2,q?,c\n").encode(), 3, "has 3 fields, the header has 4"),
    ("long.csv", (HEADER + ROW + "c2,q?,c,a,x\n").encode(), 3, "has 5 fields, the header has 4"),
    ("twice.csv", ("id,answer,question,contexts,answer\n" + ROW).encode(), 1, "repeats the column 'answer'"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "data", "line", "says"), RULES, ids=[r[0] for r in RULES])
def test_cases_and_labels_refuse_the_same_bytes_the_same_way(
    tmp_path: Path, name: str, data: bytes, line: int, says: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as as_cases:
        validate_file(path, load_rubric("faithfulness"))
    with pytest.raises(CalibrationInputError) as as_labels:
        read_labels(path, field="answer")
    where = f"{path}:{line}"
    assert f"{where}: " in str(as_cases.value) and says in str(as_cases.value)
    assert str(as_labels.value).startswith(f"{where}: ") and says in str(as_labels.value)


ACCEPTED: list[tuple[str, bytes]] = [
    ("bom.csv", ("\ufeff" + HEADER + ROW).encode()),
    ("bom.jsonl", b"\xef\xbb\xbf" + jsonl(CASE)),
    ("blank-rows.csv", (HEADER + ",,,,\n" + ROW + "\n").encode()),
    ("blank-lines.jsonl", b"\n" + jsonl(CASE) + b"  \n"),
    ("crlf.csv", (HEADER + ROW).replace("\n", "\r\n").encode()),
    ("tabs.tsv", (HEADER + ROW).replace(",", "\t").encode()),
    ("no-suffix", jsonl(CASE)),  # JSONL by its first character
    ("sheet.txt", (HEADER + ROW).encode()),  # CSV: it does not start with { or [
]


@pytest.mark.parametrize(("name", "data"), ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_cases_and_labels_accept_the_same_files(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    assert validate_file(path, load_rubric("faithfulness")).count == 1
    assert [c.id for c in iter_cases(path)] == ["c1"]
    assert [(r.id, r.value) for r in read_labels(path, field="answer").records] == [("c1", "a")]


def test_a_quoted_cell_over_lines_is_numbered_by_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "multi.csv"
    path.write_text(HEADER + 'c1,"q\nover\nlines?",c,a\nc2,q?,c,b\n')
    assert [r.line for r in read_labels(path, field="answer").records] == [2, 5]
    assert [c.question for c in iter_cases(path)] == ["q\nover\nlines?", "q?"]
