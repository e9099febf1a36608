"""Issue 33 item 10: Parquet input read as Parquet.

Before, a `.parquet` answer set went through the CSV header check (its first bytes read as
a CSV header): valid tables were refused with "CSV has no column id, ..." (an answer of a
million characters, lists stored as text, some random tables), and a file that is not
Parquet was an ArrowInvalid traceback. Now its rows are the Parquet schema's values,
checked row by row as a JSONL line is, in batches of bounded size; a file that is not
Parquet is one line naming it, exit 2.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge.cli import main
from tests.helpers import REPO, read_jsonl

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

VOLATILE = {"latency_ms", "graded_at"}


def grade(source: Path, out: Path, *extra: str) -> int:
    args = ["grade", str(source), "--rubric", "faithfulness", "-o", str(out), "--offline"]
    return main([*args, *extra], env={})


def comparable(path: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in read_jsonl(path)]


@pytest.mark.slow  # a million-character answer graded: .ci/slow
def test_an_answer_of_a_million_characters_grades(tmp_path: Path) -> None:
    source = tmp_path / "long.parquet"
    answer = "The refund window is thirty days. " * 30_000  # over a million characters
    rows = [
        {
            "id": "long",
            "question": "How long?",
            "contexts": ["Refunds: 30 days."],
            "answer": answer,
        },
        {
            "id": "short",
            "question": "How long?",
            "contexts": ["Refunds: 30 days."],
            "answer": "30 days.",
        },
    ]
    pq.write_table(pa.Table.from_pylist(rows), source)
    assert grade(source, tmp_path / "g.jsonl") == 0
    assert [r["id"] for r in read_jsonl(tmp_path / "g.jsonl")] == ["long", "short"]


def test_lists_stored_as_text_grade_as_lists(tmp_path: Path) -> None:
    """As a DataFrame's: a list column written as text (`"['a', 'b']"`, or JSON) is a list."""
    source = tmp_path / "text.parquet"
    table = pa.table(
        {
            "id": ["a", "b"],
            "user_input": ["What is the window?", "Who pays?"],
            "retrieved_contexts": [
                "['Refunds within 30 days.', 'Ask support.']",
                '["The buyer pays."]',
            ],
            "response": ["Within 30 days.", "The buyer pays."],
            "slices": ["policy|refunds", '["shipping"]'],
        }
    )
    pq.write_table(table, source)
    assert grade(source, tmp_path / "g.jsonl") == 0
    first, second = read_jsonl(tmp_path / "g.jsonl")
    assert first["status"] == second["status"] == "ok"
    assert first["verdict"]["claims"][0]["verdict"] == "supported"


GARBAGE = {
    "text": b"id,question,answer\nc1,q,a\n",
    "empty": b"",
    "magic-only": b"PAR1",
    "jsonl": b'{"id": "a", "question": "q", "contexts": ["c"], "answer": "a"}\n',
    "random": bytes(range(256)) * 40,
}


KINDS = [*GARBAGE, "truncated", "footer-length", "corrupt-pages"]


# Each kind of damage once, under the two suffixes in turn: a subprocess a case (a crash
# in the reader must show as one), so not every kind under both.
@pytest.mark.parametrize(
    ("kind", "suffix"), [(k, (".parquet", ".pq")[i % 2]) for i, k in enumerate(KINDS)]
)
def test_a_file_that_is_not_parquet_is_one_line_exit_2(
    kind: str, suffix: str, tmp_path: Path
) -> None:
    path = tmp_path / f"cases{suffix}"
    if kind in GARBAGE:
        path.write_bytes(GARBAGE[kind])
    else:
        good = tmp_path / "good.parquet"
        rows = [{"id": f"c{i}", "question": "q?", "contexts": ["c " * 50], "answer": "a " * 50}
                for i in range(2000)]  # fmt: skip
        pq.write_table(pa.Table.from_pylist(rows), good, compression="snappy")
        data = bytearray(good.read_bytes())
        if kind == "truncated":
            data = data[: len(data) // 2]
        elif kind == "footer-length":
            data[-8:-4] = (2**31 - 1).to_bytes(4, "little")  # a footer longer than the file
        else:
            data[200:4000] = bytes(range(256)) * 14 + bytes(216)
        path.write_bytes(bytes(data))
    out = tmp_path / "g.jsonl"
    args = [sys.executable, "-m", "judge.cli", "grade", str(path), "--rubric", "faithfulness"]
    done = subprocess.run([*args, "--offline", "-o", str(out)], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert "Traceback" not in done.stderr and len(errors) == 1, done.stderr
    assert str(path) in errors[0] and "Parquet" in errors[0]
    assert not out.exists() or out.read_text() == ""


def test_a_row_nested_too_deeply_is_that_rows_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep: Any = "x"
    for _ in range(80):
        deep = {"a": deep}
    rows = [
        {"id": "a", "question": "q", "contexts": ["c"], "answer": "a", "metadata": None},
        {"id": "b", "question": "q", "contexts": ["c"], "answer": "a", "metadata": deep},
    ]
    source = tmp_path / "deep.parquet"
    pq.write_table(pa.Table.from_pylist(rows), source)
    assert grade(source, tmp_path / "g.jsonl") == 2
    assert f"{source}:2: nested more than 64 levels deep" in capsys.readouterr().err


def test_batches_are_bounded_by_bytes_not_rows(tmp_path: Path) -> None:
    """Cells of a megabyte: a batch holds a few dozen rows, not 4096 (memory stays flat)."""
    from judge.engine.frames import _BATCH_BYTES, _batch_rows

    source = tmp_path / "wide.parquet"
    # distinct cells, no dictionary: 40 equal cells were one dictionary entry of 1 MB
    rows = [{"id": f"c{i}", "answer": f"{i:02d}" + "x" * 999_998} for i in range(40)]
    pq.write_table(pa.Table.from_pylist(rows), source, use_dictionary=False)
    rows_per_batch = _batch_rows(pq.ParquetFile(source).metadata)
    assert 1 <= rows_per_batch <= _BATCH_BYTES // 1_000_000


TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60
).filter(lambda t: t.strip() != "")


@st.composite
def valid_tables(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Rows a JSONL file of the same values grades: unique ids (text or whole numbers),
    any text (quotes, commas, newlines, brackets, other scripts), lists as lists, optional
    reference, slices and metadata."""
    count = draw(st.integers(1, 6))
    numeric = draw(st.booleans())
    ids = draw(
        st.lists(st.integers(0, 10**9), min_size=count, max_size=count, unique=True)
        if numeric
        else st.lists(
            TEXT.filter(lambda t: len(t) <= 512), min_size=count, max_size=count, unique=True
        )
    )
    with_reference, with_slices, with_metadata = (draw(st.booleans()) for _ in range(3))
    rows = []
    for case_id in ids:
        row: dict[str, Any] = {
            "id": case_id,
            "question": draw(TEXT),
            "contexts": draw(st.lists(TEXT, min_size=1, max_size=3)),
            "answer": draw(TEXT),
        }
        if with_reference:
            row["reference"] = draw(TEXT)
        if with_slices:
            row["slices"] = draw(st.lists(TEXT, max_size=2))
        if with_metadata:
            row["metadata"] = {"source": draw(TEXT), "n": draw(st.integers(-5, 5))}
        rows.append(row)
    return rows


@pytest.mark.slow  # 30 hypothesis tables, each graded twice: .ci/slow
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=valid_tables(), row_group_size=st.sampled_from([1, 2, 1000]))
def test_every_valid_table_grades_as_its_jsonl_does(
    rows: list[dict[str, Any]], row_group_size: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("table")
    jsonl, table = folder / "cases.jsonl", folder / "cases.parquet"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pq.write_table(pa.Table.from_pylist(rows), table, row_group_size=row_group_size)
    assert grade(jsonl, folder / "from-jsonl.jsonl") == 0  # the rows are valid cases
    assert grade(table, folder / "from-parquet.jsonl") == 0
    assert comparable(folder / "from-parquet.jsonl") == comparable(folder / "from-jsonl.jsonl")


def test_the_examples_grade_the_same_from_parquet(tmp_path: Path) -> None:
    rows = read_jsonl(REPO / "examples" / "cases.jsonl")
    source = tmp_path / "cases.parquet"
    pq.write_table(pa.Table.from_pylist(rows), source)
    assert grade(REPO / "examples" / "cases.jsonl", tmp_path / "a.jsonl") == 0
    assert grade(source, tmp_path / "b.jsonl") == 0
    assert comparable(tmp_path / "a.jsonl") == comparable(tmp_path / "b.jsonl")
