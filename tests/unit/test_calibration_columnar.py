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
