"""Bad-input catalogue (issue 6, item 3).

Each row is one malformed input: a file, a CLI argument, a label file or a rubric file.
Each must give exit code 2 and an `error:` message that names what is wrong and where
(file and line, field or option), and lose nothing: the input is left as it was, and an
existing records file is left byte for byte as it was (nothing is graded from a bad file).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from judge.cli import main

GOOD = {
    "id": "c1",
    "question": "How long is the free trial?",
    "contexts": ["The free trial lasts 14 days."],
    "answer": "The free trial lasts 14 days.",
}
RUBRIC = """id: mine
version: 1
kind: faithfulness
title: t
output_schema: FaithfulnessVerdict
inputs: [question, contexts, answer]
system: Grade it.
"""


def jsonl(*rows: object) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()


def good(**changes: object) -> dict[str, object]:
    row = dict(GOOD)
    row.update(changes)
    return {k: v for k, v in row.items() if v is not None}


@dataclass
class Bad:
    """One catalogue row: files to write, the arguments, and what the message must say."""

    name: str
    files: dict[str, bytes]
    args: list[str]
    says: list[str]
    extra: Callable[[Path], None] | None = field(default=None, repr=False)


def grade(path: str = "in.jsonl", *more: str) -> list[str]:
    return ["grade", path, "--rubric", "faithfulness", "-o", "out.jsonl", "--offline", *more]


def rubric_dir(text: str, name: str = "v1.yaml", encoding: str = "utf-8") -> dict[str, bytes]:
    return {f"rubrics/mine/{name}": text.encode(encoding), "in.jsonl": jsonl(GOOD)}


def calibrate(judge: bytes, human: bytes) -> dict[str, bytes]:
    return {"judge.jsonl": judge, "human.jsonl": human}


LABELS = jsonl({"id": "c1", "label": "faithful"}, {"id": "c2", "label": "unfaithful"})
CALIBRATE = ["calibrate", "judge.jsonl", "human.jsonl", "-o", "report"]
HUGE = 9 * 1024 * 1024

CATALOGUE = [
    # ---- input files ----
    Bad(
        "not json",
        {
            "in.jsonl": jsonl(GOOD, "{id: c2,"),
        },
        grade(),
        ["in.jsonl:2", "not valid JSON"],
    ),
    Bad(
        "json array line",
        {"in.jsonl": jsonl(GOOD, [1, 2])},
        grade(),
        ["in.jsonl:2", "expected a JSON object"],
    ),
    Bad("missing id", {"in.jsonl": jsonl(good(id=None))}, grade(), ["in.jsonl:1", "id"]),
    Bad("empty id", {"in.jsonl": jsonl(good(id=""))}, grade(), ["in.jsonl:1", "id"]),
    Bad(
        "duplicate id",
        {"in.jsonl": jsonl(GOOD, GOOD)},
        grade(),
        ["in.jsonl:2", "duplicate id", "line 1"],
    ),
    Bad(
        "missing answer", {"in.jsonl": jsonl(good(answer=None))}, grade(), ["in.jsonl:1", "answer"]
    ),
    Bad(
        "empty contexts",
        {"in.jsonl": jsonl(good(contexts=[]))},
        grade(),
        ["in.jsonl:1", "contexts"],
    ),
    Bad(
        "contexts wrong type",
        {"in.jsonl": jsonl(good(contexts=7))},
        grade(),
        ["in.jsonl:1", "contexts"],
    ),
    Bad(
        "answer wrong type",
        {"in.jsonl": jsonl(good(answer={"a": 1}))},
        grade(),
        ["in.jsonl:1", "answer"],
    ),
    Bad(
        "unknown field",
        {"in.jsonl": jsonl(good(anwser="typo"))},
        grade(),
        ["in.jsonl:1", "anwser", "unknown field"],
    ),
    Bad(
        "id too long", {"in.jsonl": jsonl(good(id="x" * 600))}, grade(), ["in.jsonl:1", "id", "512"]
    ),
    Bad("empty file", {"in.jsonl": b""}, grade(), ["in.jsonl", "empty"]),
    Bad("blank lines only", {"in.jsonl": b"\n  \n\n"}, grade(), ["in.jsonl", "empty"]),
    Bad(
        "latin-1 bytes",
        {"in.jsonl": jsonl(GOOD) + '{"id": "caf\u00e9"}\n'.encode("latin-1")},
        grade(),
        ["in.jsonl:2", "UTF-8"],
    ),
    Bad(
        "utf-16 file",
        {"in.jsonl": json.dumps(GOOD).encode("utf-16")},
        grade(),
        ["in.jsonl:1", "UTF-8"],
    ),
    Bad(
        "huge line",
        {"in.jsonl": jsonl(GOOD, good(id="big", answer="a" * HUGE))},
        grade(),
        ["in.jsonl:2", "limit"],
    ),
    Bad(
        "raw newline splits a record",
        {
            "in.jsonl": jsonl(GOOD)
            + b'{"id": "c2", "question": "q\n?", "contexts": ["c"], "answer": "a"}\n'
        },
        grade(),
        ["in.jsonl:2", "not valid JSON"],
    ),
    Bad(
        "two objects on one line",
        {"in.jsonl": jsonl(json.dumps(GOOD) + json.dumps(good(id="c2")))},
        grade(),
        ["in.jsonl:1", "not valid JSON"],
    ),
    Bad(
        "bad line far down",
        {
            "in.jsonl": jsonl(
                *[good(id=f"c{i}") for i in range(500)], good(id="late", question=None)
            )
        },
        grade(),
        ["in.jsonl:501", "question"],
    ),
    Bad(
        "csv missing column",
        {"in.csv": b"id,question,contexts\nc1,q?,ctx\n"},
        grade("in.csv"),
        ["in.csv:1", "answer"],
    ),
    Bad(
        "csv unquoted delimiter",
        {"in.csv": b"id,question,contexts,answer\nc1,q?,ctx,it lasts 14 days, then ends\n"},
        grade("in.csv"),
        ["in.csv:2", "5 fields", "header has 4"],
    ),
    Bad(
        "csv duplicate id",
        {"in.csv": b"id,question,contexts,answer\nc1,q,c,a\nc1,q,c,a\n"},
        grade("in.csv"),
        ["in.csv:3", "duplicate id"],
    ),
    Bad("no such file", {}, grade("missing.jsonl"), ["missing.jsonl", "no such file"]),
    Bad("a folder", {"folder/x": b""}, grade("folder"), ["folder", "folder"]),
    # ---- command-line arguments ----
    Bad(
        "unknown rubric",
        {"in.jsonl": jsonl(GOOD)},
        ["grade", "in.jsonl", "--rubric", "faithfullness", "--offline"],
        ["faithfullness", "no rubric named"],
    ),
    Bad(
        "unknown version",
        {"in.jsonl": jsonl(GOOD)},
        ["grade", "in.jsonl", "--rubric", "faithfulness@9", "--offline"],
        ["faithfulness", "no version 9"],
    ),
    Bad(
        "version not a number",
        {"in.jsonl": jsonl(GOOD)},
        ["grade", "in.jsonl", "--rubric", "faithfulness@x", "--offline"],
        ["faithfulness@x", "version must be a number"],
    ),
    Bad(
        "concurrency zero",
        {"in.jsonl": jsonl(GOOD)},
        grade("in.jsonl", "--concurrency", "0"),
        ["--concurrency"],
    ),
    Bad(
        "temperature too high",
        {"in.jsonl": jsonl(GOOD)},
        grade("in.jsonl", "--temperature", "9"),
        ["--temperature"],
    ),
    Bad(
        "limit zero",
        {"in.jsonl": jsonl(GOOD)},
        grade("in.jsonl", "--limit", "0"),
        ["--limit", "at least 1"],
    ),
    Bad(
        "output is the input",
        {"in.jsonl": jsonl(GOOD)},
        ["grade", "in.jsonl", "--rubric", "faithfulness", "-o", "in.jsonl", "--offline"],
        ["in.jsonl", "overwrite the input"],
    ),
    Bad(
        "not an integer",
        {"in.jsonl": jsonl(GOOD)},
        grade("in.jsonl", "--concurrency", "many"),
        ["--concurrency", "invalid int value", "many"],
    ),
    # ---- rubric files ----
    Bad(
        "rubric not yaml",
        rubric_dir("id: [unclosed\n"),
        [*grade(), "--rubrics-dir", "rubrics", "--rubric", "mine"],
        ["rubrics/mine/v1.yaml", "cannot read rubric"],
    ),
    Bad(
        "rubric not a mapping",
        rubric_dir("- a list\n"),
        [*grade(), "--rubrics-dir", "rubrics", "--rubric", "mine"],
        ["rubrics/mine/v1.yaml", "mapping"],
    ),
    Bad(
        "rubric missing system",
        rubric_dir(RUBRIC.replace("system: Grade it.\n", "")),
        [*grade(), "--rubrics-dir", "rubrics", "--rubric", "mine"],
        ["rubrics/mine/v1.yaml", "system"],
    ),
    Bad(
        "rubric unknown schema",
        rubric_dir(RUBRIC.replace("FaithfulnessVerdict", "Verdikt")),
        [*grade(), "--rubrics-dir", "rubrics", "--rubric", "mine"],
        ["rubrics/mine/v1.yaml", "Verdikt"],
    ),
    Bad(
        "rubric in the wrong place",
        rubric_dir(RUBRIC, name="v2.yaml"),
        [*grade(), "--rubrics-dir", "rubrics", "--rubric", "mine"],
        ["rubrics/mine/v2.yaml", "do not match"],
    ),
    Bad(
        "rubric not utf-8",
        rubric_dir(RUBRIC.replace("title: t", "title: caf\u00e9"), encoding="latin-1"),
        [*grade(), "--rubrics-dir", "rubrics", "--rubric", "mine"],
        ["rubrics/mine/v1.yaml", "cannot read rubric", "utf-8"],
    ),
    # ---- label files (judge calibrate) ----
    Bad(
        "labels: no such file", {"judge.jsonl": LABELS}, CALIBRATE, ["human.jsonl", "no such file"]
    ),
    Bad(
        "labels: not json",
        calibrate(LABELS, LABELS + b"{oops\n"),
        CALIBRATE,
        ["human.jsonl:3", "not valid JSON"],
    ),
    Bad(
        "labels: missing label field",
        calibrate(LABELS, jsonl({"id": "c1", "lable": "faithful"})),
        CALIBRATE,
        ["human.jsonl:1", "label"],
    ),
    Bad(
        "labels: missing id",
        calibrate(LABELS, jsonl({"label": "faithful"})),
        CALIBRATE,
        ["human.jsonl:1", "missing id"],
    ),
]


def lay_out(folder: Path, files: dict[str, bytes]) -> dict[Path, bytes]:
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return {folder / name: data for name, data in files.items()}


@pytest.mark.parametrize("bad", CATALOGUE, ids=[b.name for b in CATALOGUE])
def test_bad_input_is_refused_clearly_and_loses_nothing(bad, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    written = lay_out(tmp_path, bad.files)
    previous = b'{"id": "kept", "status": "ok"}\n'
    (tmp_path / "out.jsonl").write_bytes(previous)
    env = {"HOME": str(tmp_path)}
    try:
        code = main(bad.args, env=env)
    except SystemExit as exc:  # argparse refuses unparseable values itself, also with 2
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "error" in err.lower()
    for words in bad.says:
        assert words in err, f"{words!r} not in: {err}"
    assert "Traceback" not in err
    for path, data in written.items():
        assert path.read_bytes() == data, f"{path} changed"
    assert (tmp_path / "out.jsonl").read_bytes() == previous, "the records file changed"
    assert not (tmp_path / "report").exists() or not any((tmp_path / "report").iterdir())


def test_catalogue_is_big_enough():
    assert len(CATALOGUE) >= 20
    assert len({b.name for b in CATALOGUE}) == len(CATALOGUE)
