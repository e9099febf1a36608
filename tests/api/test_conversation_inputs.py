"""Conversation cases through every way in (issue 43 item 1): JSONL, CSV with JSON cells,
Parquet with nested lists of structs, pandas and polars frames, the Python API and the
service give the same records as the JSONL file; resume keeps the work done; a model kind's
cache key covers the whole transcript; bad conversations are one line each, exit 2."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from judge import Judge
from judge.cli import main
from judge.engine.cache import cache_key
from judge.rubric import RubricLibrary
from judge.schemas import Case
from tests.helpers import REPO, read_jsonl

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

EXAMPLES = REPO / "examples" / "conversations.jsonl"
JSON_CELLS = ("messages", "expected_tool_calls", "tools")
RUBRICS = ("trajectory", "tool_arguments")


def rows() -> list[dict[str, Any]]:
    return read_jsonl(EXAMPLES)


def outcomes(records: list[Any]) -> list[tuple[Any, ...]]:
    """What a record says about its case (not when or how fast it was graded)."""
    dumped = [r.model_dump(mode="json") if hasattr(r, "model_dump") else r for r in records]
    return [
        (r["id"], r["status"], r["score"], r["label"], r["verdict"], r["error"]) for r in dumped
    ]


@pytest.fixture(scope="module", params=RUBRICS)
def rubric(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def from_jsonl(rubric: str, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, ...]]:
    out = tmp_path_factory.mktemp("jsonl") / "graded.jsonl"
    assert main(["grade", str(EXAMPLES), "--rubric", rubric, "--offline", "-o", str(out)]) == 0
    graded = outcomes(read_jsonl(out))
    assert {o[1] for o in graded} == {"ok", "abstained"}  # the examples show both
    return graded


def test_csv_cells_hold_json(rubric: str, from_jsonl: Any, tmp_path: Path) -> None:
    source = tmp_path / "conversations.csv"
    with source.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["id", *JSON_CELLS, "goal", "slices"])
        writer.writeheader()
        for row in rows():
            cells = {k: json.dumps(row[k]) for k in JSON_CELLS if k in row}
            writer.writerow(
                {"id": row["id"], "goal": row["goal"], "slices": "|".join(row["slices"]), **cells}
            )
    out = tmp_path / "graded.jsonl"
    assert main(["grade", str(source), "--rubric", rubric, "--offline", "-o", str(out)]) == 0
    assert outcomes(read_jsonl(out)) == from_jsonl


def test_parquet_with_nested_lists_of_structs(rubric: str, from_jsonl: Any, tmp_path: Path) -> None:
    """Messages and their tool calls as Arrow lists of structs; the tools' schemas (free
    JSON, no one struct type) as JSON text cells."""
    table = pa.Table.from_pylist([{**r, "tools": json.dumps(r["tools"])} for r in rows()])
    assert pa.types.is_list(table.schema.field("messages").type)
    source = tmp_path / "conversations.parquet"
    pq.write_table(table, source)
    out = tmp_path / "graded.jsonl"
    assert main(["grade", str(source), "--rubric", rubric, "--offline", "-o", str(out)]) == 0
    assert outcomes(read_jsonl(out)) == from_jsonl


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_dataframes_through_grade_many(rubric: str, from_jsonl: Any, library: str) -> None:
    frame = (
        pd.DataFrame(rows())
        if library == "pandas"
        else pl.DataFrame(
            [{**r, "tools": json.dumps(r["tools"])} for r in rows()]  # polars: one type a column
        )
    )
    assert outcomes(Judge().grade_many(frame, rubric)) == from_jsonl


def test_python_api_takes_mappings_and_cases(rubric: str, from_jsonl: Any) -> None:
    judge = Judge()
    assert outcomes(judge.grade_many(rows(), rubric)) == from_jsonl
    first = Case.model_validate(rows()[0])
    assert outcomes([judge.grade(first, rubric)]) == from_jsonl[:1]


def test_the_service_grades_conversations(rubric: str, from_jsonl: Any, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from judge.service import create_app, load_service_config

    config = load_service_config(
        None, {}, data_dir=tmp_path / "data", cache_dir=None, database=None
    )
    with TestClient(create_app(config)) as api:
        reply = api.post("/v1/grade", json={"rubric": rubric, "cases": rows()})
        assert reply.status_code == 200, reply.text
        assert outcomes(reply.json()["records"]) == from_jsonl
        bad = {"id": "x", "messages": [{"role": "robot", "content": "hi"}]}
        refused = api.post("/v1/grade", json={"rubric": rubric, "cases": [bad]})
        assert refused.status_code in (400, 422) and "unknown role" in refused.text


def test_resume_keeps_the_records_done(rubric: str, from_jsonl: Any, tmp_path: Path) -> None:
    out = tmp_path / "graded.jsonl"
    args = ["grade", str(EXAMPLES), "--rubric", rubric, "--offline", "-o", str(out)]
    assert main(args) == 0
    done = out.read_text("utf-8").splitlines(keepends=True)
    out.write_text("".join(done[:4]) + done[4][:40], "utf-8")  # a run killed mid-line
    assert main(args) == 0
    lines = out.read_text("utf-8").splitlines(keepends=True)
    assert lines[:4] == done[:4] and outcomes(read_jsonl(out)) == from_jsonl


def test_a_model_kinds_cache_key_covers_the_whole_transcript(tmp_path: Path) -> None:
    folder = tmp_path / "mine" / "helpful"
    folder.mkdir(parents=True)
    (folder / "v1.yaml").write_text(
        "id: helpful\nversion: 1\nkind: scale\ntitle: Helpful\ninputs: [goal, messages]\n"
        "scale: {min: 1, max: 5}\nsystem: |\n  Did the assistant help the user reach the goal?\n"
    )
    rubric = RubricLibrary([tmp_path / "mine"]).load("helpful")
    row = rows()[0]
    identity = {"model": "m", "temperature": 0}
    key = cache_key(rubric, identity, Case.model_validate(row))
    assert key == cache_key(rubric, identity, Case.model_validate(json.loads(json.dumps(row))))
    changed = json.loads(json.dumps(row))
    changed["messages"][3]["content"] = '{"status": "delivered", "total": 3.55}'  # a tool result
    assert cache_key(rubric, identity, Case.model_validate(changed)) != key
    payload = json.loads(rubric.render(Case.model_validate(row))[1]["content"])
    assert payload["messages"][2]["tool_calls"][0]["function"]["name"] == "lookup_order"


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ({"id": "r1", "messages": [{"role": "robot", "content": "x"}]}, "unknown role 'robot'"),
        (
            {
                "id": "r2",
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "tool", "tool_call_id": "a", "content": "y"},
                ],
            },
            "a tool message with no tool call before it",
        ),
        ({"id": "r3", "question": "Where is my order?"}, "a case with neither answer nor messages"),
    ],
)
def test_a_bad_conversation_is_one_line_naming_the_case(
    row: dict[str, Any], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(row) + "\n", "utf-8")
    out = tmp_path / "graded.jsonl"
    assert main(["grade", str(source), "--rubric", "trajectory", "--offline", "-o", str(out)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and f"in.jsonl:1 (id '{row['id']}')" in errors[0] and said in errors[0]
    assert not out.exists()
