"""A killed label server loses no label: `judge label` as a real process, SIGKILLed
between two labels, restarted on the same store; the export holds every label given."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from judge.cli import main
from tests.label_support import CASES, LabelServer, answer

# judge label as a real process, killed mid-run (.ci/slow runs it)
pytestmark = pytest.mark.slow


def _export(db: Path, out: Path) -> list[dict[str, str]]:
    assert main(["label", "export", "--db", str(db), "-o", str(out)]) == 0
    with out.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_sigkill_between_two_labels_loses_none(tmp_path: Path) -> None:
    db = tmp_path / "labels.sqlite"
    args = (
        str(CASES),
        "--rubric",
        "faithfulness",
        "--db",
        str(db),
        "--sample",
        "12",
        "--seed",
        "3",
    )
    given: dict[str, str] = {}
    server = LabelServer(*args).start()
    try:
        with server.client() as api:
            for choice in ("faithful", "unfaithful", "abstained"):
                state = answer(api, "ana", choice, note=f"note {choice}")
                given[state["labelled"]] = choice
        server.kill()  # between the third label and the fourth
        server = LabelServer(*args).start()
        with server.client() as api:
            state = api.get("/api/state", params={"annotator": "ana"}).json()
            assert state["progress"]["labelled"] == 3
            assert state["item"]["case_id"] not in given
            state = answer(api, "ana", "faithful")
            given[state["labelled"]] = "faithful"
        server.kill()  # right after a label: it must be on disk already
    finally:
        server.stop()
    rows = _export(db, tmp_path / "labels.csv")
    assert {r["id"]: r["label"] for r in rows} == given
    assert {r["annotator"] for r in rows} == {"ana"}
    assert {r["note"] for r in rows} >= {"note faithful", "note abstained"}
    assert all(r["labelled_at"].endswith("Z") for r in rows)


def test_restart_with_other_settings_is_refused(tmp_path: Path, capsys) -> None:
    db = tmp_path / "labels.sqlite"
    from judge.label.labelset import LabelPlan, open_label_store
    from judge.rubric import load_rubric

    rubric = load_rubric("faithfulness")
    open_label_store(db, LabelPlan(CASES, rubric, sample=10, seed=1)).close()
    code = main(
        [
            "label",
            str(CASES),
            "--rubric",
            "faithfulness",
            "--db",
            str(db),
            "--sample",
            "11",
            "--seed",
            "1",
        ]
    )
    assert code == 2
    assert "sample" in capsys.readouterr().err
