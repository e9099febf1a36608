"""Issue 54 item 3: two plain label files are read as columns by the engine.

Before, `judge calibrate` held both files as one Python record per row and joined them in
a dict (5.45 GB at 10 million pairs). Now two plain CSVs are read, checked and joined by
DuckDB, the labels handed on as pointers to a handful of strings and the ids packed: the
same result to the last digit (every field of `calibration.json`), and anything not plain
(quotes, a blank or repeated id, a blank label, other columns) read by the row reader,
with its messages naming file and line.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import calibration.pairs.prepare as prepare_module
from calibration.errors import CalibrationInputError
from calibration.io.columnar import PackedIds, read_label_columns
from calibration.pairs.prepare import Settings, prepare
from calibration.report.result import calibrate


def write(path: Path, rows: list[tuple[str, str]], header: str = "id,label") -> Path:
    path.write_text(header + "\n" + "".join(f"{i},{v}\n" for i, v in rows))
    return path


def labelled(tmp_path: Path, labels: list[str], n: int = 400, seed: int = 3) -> tuple[Path, Path]:
    rng = random.Random(seed)
    human = [(f"case-{k}", rng.choice(labels)) for k in range(n)]
    judge = [(i, v if rng.random() < 0.7 else rng.choice(labels)) for i, v in human]
    rng.shuffle(judge)  # another order than the human file's
    judge = judge[20:] + [(f"judge-only-{k}", rng.choice(labels)) for k in range(5)]
    human = human + [(f"human-only-{k}", rng.choice(labels)) for k in range(3)]
    return write(tmp_path / "judge.csv", judge), write(tmp_path / "human.csv", human)


def by_rows(monkeypatch: pytest.MonkeyPatch, judge: Path, human: Path, **options: Any) -> str:
    with monkeypatch.context() as patch:
        patch.setattr(prepare_module, "read_label_columns", lambda *a, **k: None)
        return json.dumps(calibrate(judge, human, **options), sort_keys=True, default=str)


@pytest.mark.parametrize(
    ("labels", "options"),
    [
        (["pass", "fail"], {}),
        (["pass", "fail", "Pass ", "FAIL"], {"positive_label": "pass"}),
        (["1", "2", "3", "4", "5", "4.0"], {"weights": "quadratic"}),
        (["faithful", "unfaithful", "abstained"], {"n_bootstrap": 300, "seed": 7}),
    ],
)
def test_the_columns_give_the_rows_result_to_the_last_digit(
    labels: list[str], options: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge, human = labelled(tmp_path, labels)
    assert read_label_columns(judge, human, judge_field="label", human_field="label")
    columns = json.dumps(calibrate(judge, human, **options), sort_keys=True, default=str)
    assert columns == by_rows(monkeypatch, judge, human, **options)


def test_no_python_object_a_row(tmp_path: Path) -> None:
    judge, human = labelled(tmp_path, ["pass", "fail"], n=2_000)
    pairs = prepare(judge, human, Settings()).pairs
    assert isinstance(pairs.ids, PackedIds) and len(pairs.ids) == 1_980
    assert len({id(v) for v in pairs.human}) == 2 and len({id(v) for v in pairs.judge}) == 2
    assert list(pairs.ids)[:2] == ["case-0", "case-1"]  # the human file's order


@pytest.mark.parametrize(
    ("judge_text", "message"),
    [
        ("id,label\nc1,pass\nc2,fail\nc1,fail\n", "judge.csv:4: duplicate id 'c1'"),
        ("id,label\nc1,pass\n ,fail\n", "judge.csv:3: missing id"),
        ("id,label\nc1,pass\nc2\n", "judge.csv:3: has 1 fields, the header has 2"),
        ("id,label\nc1,pass\nc2,fail,extra\n", "judge.csv:3"),
    ],
)
def test_bad_input_is_said_as_the_row_reader_says_it(
    judge_text: str, message: str, tmp_path: Path
) -> None:
    judge = tmp_path / "judge.csv"
    judge.write_text(judge_text)
    human = write(tmp_path / "human.csv", [("c1", "pass"), ("c2", "fail")])
    assert read_label_columns(judge, human, judge_field="label", human_field="label") is None
    with pytest.raises(CalibrationInputError, match=message):
        calibrate(judge, human)


def test_a_blank_label_is_read_by_rows_and_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = tmp_path / "judge.csv"
    judge.write_text("id,label\nc1,pass\nc2,\nc3,fail\n")
    human = write(tmp_path / "human.csv", [("c1", "pass"), ("c2", "fail"), ("c3", "pass")])
    result = calibrate(judge, human)
    assert result["excluded"]["judge_ids"] == {"no label": ["c2"]} and result["n"] == 2
    columns = json.dumps(result, sort_keys=True, default=str)
    assert columns == by_rows(monkeypatch, judge, human)


@pytest.mark.parametrize(
    "judge_text",
    [
        "\ufeffid,label\nc1,pass\nc2,fail\nc3,fail\n",  # a byte-order mark
        "id,label,note\nc1,pass,x\nc2,fail,y\nc3,fail,z\n",  # another column
        "id,label\nc1,'=pass\nc2,fail\nc3,fail\n",  # an escaped spreadsheet formula
        "id,label\nc1,pass\n\nc2,fail\nc3,fail\n",  # a blank line
    ],
)
def test_what_is_not_plain_is_read_by_rows_with_the_same_result(
    judge_text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = tmp_path / "judge.csv"
    judge.write_text(judge_text)
    human = write(tmp_path / "human.csv", [("c1", "pass"), ("c2", "fail"), ("c3", "pass")])
    assert read_label_columns(judge, human, judge_field="label", human_field="label") is None
    columns = json.dumps(calibrate(judge, human), sort_keys=True, default=str)
    assert columns == by_rows(monkeypatch, judge, human)


# ---- JSONL label files: the judge's graded records ----------------------------------------

STATUSES = ["ok"] * 12 + ["parse_error", "api_error", "escalated", "abstained"]


def graded(path: Path, rows: list[dict[str, Any]]) -> Path:
    """A records file as `judge grade -o` writes it: one JSON object a line."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    return path


def graded_record(case_id: str, label: Any, status: str, rng: random.Random) -> dict[str, Any]:
    """A record with every field of the contract; no label unless the status is ok."""
    ok = status == "ok"
    return {
        "id": case_id,
        "rubric": "faithfulness",
        "rubric_version": 1,
        "rubric_sha256": "ab" * 32,
        "judge": {"model": "m", "temperature": 0.0, "seed": 1, "max_tokens": 512},
        "status": status,
        "verdict": {"claims": [{"claim": "c [1]", "verdict": "supported", "evidence": "{"}]}
        if ok
        else None,
        "score": rng.choice([0.0, 0.5, 1.0, 0.25]) if ok else None,
        "label": label if ok else None,
        "error": None if ok else f"{status}: bad",
        "raw": None,
        "cached": False,
        "usage": {"prompt_tokens": 10, "completion_tokens": 3},
        "latency_ms": rng.random() * 100,
        "graded_at": "2026-01-01T00:00:00Z",
    }


def graded_pair(
    tmp_path: Path, labels: list[Any], n: int = 400, seed: int = 5, human_suffix: str = ".csv"
) -> tuple[Path, Path]:
    """A graded records file (mixed statuses, another order, judge-only ids) and the human
    labels (human-only ids) as CSV or as plain id/label JSONL."""
    rng = random.Random(seed)
    human = [(f"case-{k}", rng.choice(labels)) for k in range(n)]
    judge = [(i, v if rng.random() < 0.7 else rng.choice(labels)) for i, v in human]
    rng.shuffle(judge)
    judge = judge[20:] + [(f"judge-only-{k}", rng.choice(labels)) for k in range(5)]
    records = [graded_record(i, v, rng.choice(STATUSES), rng) for i, v in judge]
    human += [(f"human-only-{k}", rng.choice(labels)) for k in range(3)]
    judge_path = graded(tmp_path / "graded.jsonl", records)
    if human_suffix == ".csv":
        return judge_path, write(tmp_path / "human.csv", [(i, str(v)) for i, v in human])
    rows = [{"id": i, "label": v} for i, v in human]
    return judge_path, graded(tmp_path / f"human{human_suffix}", rows)


def same_as_rows(
    monkeypatch: pytest.MonkeyPatch, judge: Path, human: Path, **options: Any
) -> dict[str, Any]:
    result = calibrate(judge, human, **options)
    assert json.dumps(result, sort_keys=True, default=str) == by_rows(
        monkeypatch, judge, human, **options
    )
    return result


@pytest.mark.parametrize(
    ("labels", "human_suffix", "options"),
    [
        (["faithful", "unfaithful"], ".csv", {}),
        (["faithful", "unfaithful"], ".jsonl", {"n_bootstrap": 300, "seed": 7}),
        (["pass", "fail", "Pass ", "FAIL"], ".ndjson", {"positive_label": "pass"}),
        ([1, 2, 3, 4, 5, 4.0, "4"], ".jsonl", {"weights": "quadratic"}),
        ([1, 2, 3, 4, 5, 4.0, "4"], ".csv", {"weights": "linear"}),
        ([True, False], ".jsonl", {}),
    ],
)
def test_graded_records_give_the_rows_result_to_the_last_digit(
    labels: list[Any],
    human_suffix: str,
    options: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judge, human = graded_pair(tmp_path, labels, human_suffix=human_suffix)
    columns = read_label_columns(judge, human, judge_field="label", human_field="label")
    assert columns is not None  # the fast path took them
    result = same_as_rows(monkeypatch, judge, human, **options)
    excluded = result["excluded"]["judge"]
    assert set(excluded) == {"status parse_error", "status api_error", "status escalated"}
    assert excluded == {k: len(v) for k, v in columns.judge_excluded.items()}
    # abstained records are compared as the label "abstained", never dropped
    assert "abstained" in {str(v) for v in columns.judge}


def test_the_judge_field_score_of_graded_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge, _ = graded_pair(tmp_path, ["faithful", "unfaithful"])
    rows = [json.loads(line) for line in judge.read_text().splitlines()]
    scores = [(r["id"], r["score"] if r["score"] is not None else 0.5) for r in rows]
    human = write(tmp_path / "scores.csv", [(i, str(1.0 - s)) for i, s in scores], "id,score")
    assert read_label_columns(judge, human, judge_field="score", human_field="score")
    result = same_as_rows(monkeypatch, judge, human, judge_field="score", human_field="score")
    assert result["excluded"]["judge"]["status parse_error"] > 0


def test_an_excluded_id_on_one_side_is_not_unmatched_on_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(1)
    rows = [graded_record(f"c{k}", "pass", "ok", rng) for k in range(6)]
    rows[2] = graded_record("c2", None, "api_error", rng)  # labelled by people, not graded
    rows.append(graded_record("c0", None, "parse_error", rng))  # an earlier failure kept
    judge = graded(tmp_path / "graded.jsonl", rows)
    human = graded(
        tmp_path / "human.jsonl",
        [
            {"id": f"c{k}", "label": "pass", "status": "ok" if k != 4 else "skipped"}
            for k in range(7)
        ],
    )
    columns = read_label_columns(judge, human, judge_field="label", human_field="label")
    assert columns is not None
    assert columns.judge_excluded == {"status api_error": ["c2"], "status parse_error": ["c0"]}
    assert columns.human_excluded == {"status skipped": ["c4"]}
    assert columns.human_only == ["c6"] and columns.judge_only == []
    same_as_rows(monkeypatch, judge, human)


def test_graded_records_hold_no_python_object_a_row(tmp_path: Path) -> None:
    judge, human = graded_pair(tmp_path, ["faithful", "unfaithful"], n=2_000)
    pairs = prepare(judge, human, Settings()).pairs
    assert isinstance(pairs.ids, PackedIds)
    assert len({id(v) for v in pairs.judge}) == 3  # faithful, unfaithful, abstained


def _line(**fields: Any) -> str:
    return json.dumps(fields)


GOOD = [_line(id=f"c{k}", status="ok", label="pass") for k in range(1, 4)]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([*GOOD, _line(id="c1", status="ok", label="fail")], "graded.jsonl:4: duplicate id 'c1'"),
        ([*GOOD, _line(id=" ", label="fail")], "graded.jsonl:4: missing id"),
        ([*GOOD, _line(status="ok", label="fail")], "graded.jsonl:4: missing id"),
        ([*GOOD, _line(id="c4", status="ok")], "graded.jsonl:4: no field 'label'"),
        ([*GOOD, _line(id="c4", label=["a"])], "graded.jsonl:4: label must be a single value"),
        ([*GOOD, _line(id="c4", label={"a": 1})], "graded.jsonl:4: label must be a single value"),
        ([*GOOD, '{"id": "c4", "label": "x",}'], "graded.jsonl:4: not valid JSON"),
        ([*GOOD, '{"id": "c4", "label": nan}'], "graded.jsonl:4: not valid JSON"),
        ([*GOOD, '\x0c{"id": "c4", "label": "x"}'], "graded.jsonl:4: not valid JSON"),
        ([*GOOD, '{"id": "c4", "label": "x"}{"id": "c5"}'], "graded.jsonl:4: not valid JSON"),
        ([*GOOD, "[1, 2]"], "graded.jsonl:4: expected a JSON object"),
        ([*GOOD, '{"id": "c4", "label": "x"}\x0b'], "graded.jsonl:4: not valid JSON"),
        ([*GOOD, '"text"'], "graded.jsonl:4: expected a JSON object"),
        (
            [*GOOD, '{"id": "c4", "label": "x", "v": ' + "[" * 70 + "]" * 70 + "}"],
            "graded.jsonl:4: nested",
        ),
        (
            [*GOOD, '{"id": "c4", "label": "x", "v": ' + "9" * 5000 + "}"],
            "graded.jsonl:4: a number of 5000",
        ),
        (
            [*GOOD, '{"id": "c4", "label": "x", "annotator": "a"}'],
            "graded.jsonl: the judge file has an annotator",
        ),
    ],
)
def test_bad_jsonl_is_said_as_the_row_reader_says_it(
    lines: list[str], message: str, tmp_path: Path
) -> None:
    judge = tmp_path / "graded.jsonl"
    judge.write_text("\n".join(lines) + "\n", "utf-8")
    human = write(tmp_path / "human.csv", [("c1", "pass"), ("c2", "fail"), ("c4", "pass")])
    assert read_label_columns(judge, human, judge_field="label", human_field="label") is None
    with pytest.raises(CalibrationInputError, match=message):
        calibrate(judge, human)


@pytest.mark.parametrize(
    "lines",
    [
        [*GOOD, _line(id="c4", status="ok", label=None)],  # a null label: excluded, counted
        [*GOOD, _line(id="c4", status="ok", label="  ")],  # a blank one
        [*GOOD, _line(id=5, status="ok", label="fail")],  # a number as id
        [*GOOD, _line(id="c4 ", status="ok", label="fail")],  # an id with a space at its end
        [*GOOD, _line(id="cé", status="ok", label="fail")],  # an id not ASCII
        [*GOOD, _line(id="c4", status=3, label="fail")],  # a status that is not text
        [*GOOD, _line(id="c4", status="ok", label=float("nan"))],  # NaN (Python reads it)
        [*GOOD, _line(id="c4", status="ok", label="fail"), ""],  # a blank line
        ["\ufeff" + GOOD[0], *GOOD[1:]],  # a byte-order mark
        [*GOOD, _line(id="c1", status="api_error", label=None)],  # an id repeated, excluded
        [line.replace(", ", ",\t ") + "\r" for line in GOOD],  # CRLF, tabs
        [*GOOD, '{"id": "c4", "label": "x", "v": ' + "[" * 60 + "]" * 60 + "}"],
        [*GOOD, '{"id": "c4", "label": "x", "v": "' + "[" * 70 + '"}'],  # brackets in text
        [*GOOD, '{"id": "c4", "label": "x", "v": "a, }"}'],  # a trailing comma in text
        [*GOOD, '{"id": "c4", "status": "bad", "status": "ok", "label": "x"}'],  # key twice
        [*GOOD, '{"id": "c4", "l\\u0061bel": "fail"}'],  # an escaped key
        [*GOOD, '{"id": "c4", "label": "x", "v": "\\ud800"}'],  # a lone surrogate
        [*GOOD, '{"id": "c4", "status": "ok\u00a0", "label": 1e400}'],  # odd status, inf
    ],
)
def test_odd_jsonl_gives_the_rows_result(
    lines: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = tmp_path / "graded.jsonl"
    judge.write_text("\n".join(lines) + "\n", "utf-8")
    human = write(tmp_path / "human.csv", [("c1", "pass"), ("c2", "fail"), ("c4", "pass")])
    same_as_rows(monkeypatch, judge, human)


def test_nan_inf_and_commas_inside_strings_keep_the_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(2)
    rows = [graded_record(f"c{k}", "pass", "ok", rng) for k in range(3)]
    for row, text in zip(
        rows, ["NaN, inf,}", "[1, 2, ]: Infinity", "information, nan"], strict=True
    ):
        row["verdict"] = {"rationale": text, "nested": [[[[text]]]]}
        row["error"] = text + ' \\"escaped\\" ' + "{" * 80
    judge = graded(tmp_path / "graded.jsonl", rows)
    human = write(tmp_path / "human.csv", [("c0", "pass"), ("c1", "fail"), ("c2", "pass")])
    assert read_label_columns(judge, human, judge_field="label", human_field="label")
    same_as_rows(monkeypatch, judge, human)


def test_a_file_of_failures_is_said_as_the_row_reader_says_it(tmp_path: Path) -> None:
    judge = graded(
        tmp_path / "graded.jsonl", [{"id": "c1", "status": "parse_error", "label": None}]
    )
    human = write(tmp_path / "human.csv", [("c1", "pass")])
    with pytest.raises(CalibrationInputError, match="every one of its 1 records was left out"):
        calibrate(judge, human)


def test_graded_records_given_as_human_labels_are_refused_as_before(tmp_path: Path) -> None:
    judge, _ = graded_pair(tmp_path, ["faithful", "unfaithful"])
    human = tmp_path / "human.jsonl"
    human.write_bytes(judge.read_bytes())
    assert read_label_columns(human, judge, judge_field="label", human_field="label") is None
    with pytest.raises(CalibrationInputError, match="looks like a judge's graded records"):
        calibrate(human, judge)
