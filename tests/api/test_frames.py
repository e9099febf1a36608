"""DataFrames in and out (issue 23 item 2): pandas and polars frames and Arrow tables grade to
the same records as the file they were read from; records become a frame with the verdict's
figures as columns; `judge grade` reads Parquet and writes it with --parquet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge import Judge, records_frame
from judge.cli import main
from judge.errors import InputError
from judge.schemas import GradedRecord
from tests.helpers import REPO, read_jsonl

pd = pytest.importorskip("pandas")  # the frames extra, in the dev extra
pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

EXAMPLES = REPO / "examples" / "cases.jsonl"
VOLATILE = {"latency_ms", "graded_at"}


def comparable(records: list[GradedRecord] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = [r.model_dump(mode="json") if isinstance(r, GradedRecord) else r for r in records]
    return [{k: v for k, v in row.items() if k not in VOLATILE} for row in rows]


@pytest.fixture(scope="module")
def from_file(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("file") / "graded.jsonl"
    Judge().grade_file(EXAMPLES, out)
    return comparable(read_jsonl(out))


def example_rows() -> list[dict[str, Any]]:
    return read_jsonl(EXAMPLES)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda rows: pd.DataFrame(rows), id="pandas"),
        pytest.param(lambda rows: pd.read_json(EXAMPLES, lines=True), id="pandas-read_json"),
        pytest.param(lambda rows: pl.DataFrame(rows), id="polars"),
        pytest.param(lambda rows: pa.Table.from_pylist(rows), id="arrow"),
    ],
)
def test_a_frame_of_the_examples_grades_to_the_records_of_the_file(
    make: Any, from_file: list[dict[str, Any]]
) -> None:
    records = Judge().grade_many(make(example_rows()))
    assert comparable(records) == from_file


def test_grade_file_takes_a_frame(tmp_path: Path, from_file: list[dict[str, Any]]) -> None:
    out = tmp_path / "graded.jsonl"
    summary = Judge().grade_file(pd.DataFrame(example_rows()), out)
    assert comparable(read_jsonl(out)) == from_file
    assert summary["cases"] == len(from_file)


def test_ragas_names_and_list_cells_saved_as_text_are_read_as_a_files() -> None:
    """A Ragas-style frame read back from CSV: `retrieved_contexts` is a Python list's text,
    there is no id column (ids are row numbers, as for a file)."""
    frame = pd.DataFrame(
        {
            "user_input": ["How long is the trial?", "What does it cost?"],
            "retrieved_contexts": [str(["The free trial lasts 14 days."]), "['It is free.']"],
            "response": ["The trial lasts 14 days.", "It costs 9 dollars."],
        }
    )
    records = Judge().grade_many(frame)
    assert [r.id for r in records] == ["row-1", "row-2"]
    assert [r.label for r in records] == ["faithful", "unfaithful"]


def test_missing_cells_are_no_value_not_nan() -> None:
    rows = [
        {"id": "a", "question": "q?", "contexts": ["c"], "answer": "c.", "reference": "c."},
        {"id": "b", "question": "q?", "contexts": ["c"], "answer": "c."},
    ]
    records = Judge().grade_many(pd.DataFrame(rows))  # b's reference is NaN in the frame
    assert [r.status for r in records] == ["ok", "ok"]


def test_bad_rows_are_named_and_nothing_is_graded() -> None:
    frame = pd.DataFrame(
        [
            {"id": "a", "question": "q?", "contexts": ["c"], "answer": "c."},
            {"id": "b", "question": "q?", "contexts": ["c"]},
            {"id": "a", "question": "q?", "contexts": ["c"], "answer": "c."},
        ]
    )
    with pytest.raises(InputError) as caught:
        Judge().grade_many(frame)
    text = str(caught.value)
    assert "DataFrame (id 'b'): row 2: missing answer" in text
    assert "row 3: duplicate id (first on row 1)" in text


def test_records_frame_has_one_row_per_record_with_the_verdicts_figures() -> None:
    records = Judge().grade_many(example_rows())
    frame = records_frame(records)
    assert list(frame["id"]) == [r.id for r in records]
    for column in (
        "status",
        "score",
        "label",
        "slices",
        "claims",
        "supported_claims",
        "judge_model",
        "rubric_sha256",
        "verdict",
    ):
        assert column in frame.columns
    first = records[0]
    claims = first.verdict["claims"]
    row = frame.iloc[0]
    assert row["claims"] == len(claims)
    assert row["supported_claims"] == sum(c["verdict"] == "supported" for c in claims)
    assert json.loads(row["verdict"]) == first.verdict
    assert row["judge_model"] == first.judge.model


def test_judge_grade_reads_parquet_and_writes_it(tmp_path: Path) -> None:
    source = tmp_path / "cases.parquet"
    pq.write_table(pa.Table.from_pylist(example_rows()), source)
    jsonl_out, parquet_out = tmp_path / "from-jsonl.jsonl", tmp_path / "graded.jsonl"
    table = tmp_path / "graded.parquet"
    assert (
        main(["grade", str(EXAMPLES), "--rubric", "faithfulness", "-o", str(jsonl_out)], env={})
        == 0
    )
    args = ["grade", str(source), "--rubric", "faithfulness", "-o", str(parquet_out)]
    assert main([*args, "--parquet", str(table)], env={}) == 0
    assert comparable(read_jsonl(parquet_out)) == comparable(read_jsonl(jsonl_out))
    back = pq.read_table(table).to_pylist()
    assert [r["id"] for r in back] == [r["id"] for r in read_jsonl(jsonl_out)]
    assert {"claims", "supported_claims", "status", "judge_id"} <= back[0].keys()
    # a rerun resumes the JSONL and may replace its own Parquet table
    assert main([*args, "--parquet", str(table)], env={}) == 0


def test_records_in_parquet_are_refused_and_a_foreign_file_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "graded.parquet"
    args = ["grade", str(EXAMPLES), "--rubric", "faithfulness"]
    assert main([*args, "-o", str(out)], env={}) == 2
    assert "--parquet" in capsys.readouterr().err
    foreign = tmp_path / "mine.parquet"
    pq.write_table(pa.table({"x": [1]}), foreign)
    assert main([*args, "-o", str(tmp_path / "g.jsonl"), "--parquet", str(foreign)], env={}) == 2
    assert pq.read_table(foreign).to_pylist() == [{"x": 1}]


def test_a_bad_parquet_row_names_the_file_and_row(tmp_path: Path) -> None:
    source = tmp_path / "cases.parquet"
    rows = example_rows()[:2]
    rows[1] = {k: v for k, v in rows[1].items() if k != "answer"}
    pq.write_table(pa.Table.from_pylist(rows), source)
    out = tmp_path / "g.jsonl"
    assert main(["grade", str(source), "--rubric", "faithfulness", "-o", str(out)], env={}) == 2
    assert not out.exists() or out.read_text() == ""


def test_the_docs_dataframe_example_runs(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.api.test_readme_python import folder_with_examples, readme_blocks

    (block,) = readme_blocks("## DataFrames and Parquet")
    done = subprocess.run(
        [sys.executable, "-c", block],
        cwd=folder_with_examples(tmp_path / "run"),
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert "supported_claims" in done.stdout and "returns-001" in done.stdout
