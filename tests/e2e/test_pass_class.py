"""Issue 51, item 2: one pass class, from the rubric, in every command that prints a pass rate.

Before, `judge calibrate` picked the pass class from a word list, else the alphabetically
last label: on trajectory records (`match`/`mismatch`) it counted `mismatch` as the pass,
so every pass rate, TPR and TNR were about failures, while `judge grade --human-labels`
counted `match`. Now the class is the rubric's (`Kind.pass_label`: the label it scores
1.0), for every built-in kind, and each command says which label it counts and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judge.cli import main
from judge.engine.measure.pass_class import FILE_RULE, pass_class_of
from judge.kinds import kind_names
from judge.rubric import Rubric, RubricLibrary, list_rubrics
from tests.helpers import REPO

# The pass class each kind declares, as its users name it (DESIGN.md, issue 51).
EXPECTED = {
    "citations": "supported",
    "context_relevance": "relevant",
    "conversation_faithfulness": "faithful",
    "conversation_pairwise": "A",
    "correctness": "correct",
    "criteria": "pass",
    "faithfulness": "faithful",
    "knowledge_retention": "pass",
    "labels": "compliant",  # examples/rubrics/policy: the label it scores 1.0
    "pairwise": "A",
    "relevance": "5",
    "retrieval": "hit",
    "role_adherence": "pass",
    "scale": "5",  # examples/rubrics/tone
    "task_completion": "completed",
    "tool_arguments": "valid",
    "trajectory": "match",
    "turn_relevancy": "pass",
}


def one_rubric_per_kind() -> dict[str, Rubric]:
    """A rubric of every registered kind: the built-in ones, and the bundled examples of
    the generic kinds (labels, scale, criteria)."""
    library = RubricLibrary([REPO / "examples" / "rubrics"])
    out: dict[str, Rubric] = {}
    for rubric in list_rubrics(library, latest_only=True):
        out.setdefault(rubric.kind, rubric)
    return out


RUBRICS = one_rubric_per_kind()


def test_every_kind_has_a_rubric_here_and_an_expected_pass_class() -> None:
    assert set(RUBRICS) == set(kind_names()) == set(EXPECTED)


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_the_pass_class_is_the_label_the_rubric_scores_one(kind: str) -> None:
    rubric = RUBRICS[kind]
    label = rubric.behaviour.pass_label(rubric)
    assert label == EXPECTED[kind]
    scores = {c.name: c.score for c in rubric.behaviour.choices(rubric)}
    assert scores[label] == 1.0


def records(rubric: Rubric, labels: list[str], scores: dict[str, float | None]) -> list[dict]:
    return [
        {"id": f"c{i}", "rubric": rubric.id, "rubric_version": rubric.version,
         "rubric_sha256": rubric.sha256, "judge": {"model": "rules", "output_mode": "rules"},
         "status": "ok", "label": label, "score": scores[label]}
        for i, label in enumerate(labels)
    ]  # fmt: skip


def write_pair(folder: Path, rubric: Rubric, seed: int = 0) -> tuple[Path, Path, list[str]]:
    """Graded records of two of the rubric's labels (the pass class and the lowest-scored
    other, 30% passes), and people's labels of them with a few slips."""
    choices = [c for c in rubric.behaviour.choices(rubric) if c.score is not None]
    scores = {c.name: c.score for c in choices}
    passed = rubric.behaviour.pass_label(rubric)
    other = min((c for c in choices if c.name != passed), key=lambda c: c.score or 0.0).name
    rng = np.random.default_rng(seed)
    judged = [passed if rng.random() < 0.3 else other for _ in range(60)]
    human = [j if rng.random() > 0.1 else (other if j == passed else passed) for j in judged]
    graded, labels = folder / "graded.jsonl", folder / "labels.csv"
    graded.write_text("".join(json.dumps(r) + "\n" for r in records(rubric, judged, scores)))
    labels.write_text("id,label\n" + "".join(f"c{i},{h}\n" for i, h in enumerate(human)))
    return graded, labels, judged


def calibrate(tmp_path: Path, graded: Path, labels: Path, *extra: str) -> dict[str, Any]:
    out = tmp_path / "report"
    args = ["calibrate", str(graded), str(labels), "-o", str(out), "--bootstrap", "50", *extra]
    assert main(args, env={}) == 0
    return json.loads((out / "calibration.json").read_text("utf-8"))


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_calibrate_counts_the_rubrics_pass_class_for_every_kind(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example rubrics of the generic kinds are not installed with the tool: their
    records' scores (which their rubric gave) say the same class."""
    rubric = RUBRICS[kind]
    graded, labels, judged = write_pair(tmp_path, rubric)
    result = calibrate(tmp_path, graded, labels)
    binary = result["binary"]
    assert binary["positive_label"].lower() == EXPECTED[kind].lower()
    assert binary["positive_from"].startswith(f"rubric {rubric.id}@{rubric.version}")
    share = judged.count(EXPECTED[kind]) / len(judged)
    assert binary["judged"]["pass_rate"] == pytest.approx(share)
    assert f"pass = {binary['positive_label']!r} (rubric {rubric.id}@" in capsys.readouterr().out


def trajectory_stream(folder: Path) -> tuple[Path, Path]:
    """120 agent conversations (a booking call, its date right in about a third) and
    people's labels with a few slips: more `mismatch` than `match`, so the two readings of
    "pass" give different rates."""
    rng = np.random.default_rng(7)
    wanted = {"flight": "BA117", "date": "2026-05-01"}
    cases, labels = [], ["id,label"]
    for i in range(120):
        right = bool(rng.random() < 0.35)
        made = wanted if right else {**wanted, "date": "2026-05-10"}
        call = {"id": "call_1", "type": "function",
                "function": {"name": "book_flight", "arguments": json.dumps(made)}}  # fmt: skip
        cases.append({
            "id": f"t{i:03d}",
            "messages": [
                {"role": "user", "content": f"Book BA117 on 1 May for t{i:03d}."},  # distinct
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_1", "content": "booked"},
                {"role": "assistant", "content": "Booked."},
            ],
            "expected_tool_calls": [{"name": "book_flight", "arguments": wanted}],
        })  # fmt: skip
        human = right if rng.random() > 0.08 else not right
        labels.append(f"t{i:03d},{'match' if human else 'mismatch'}")
    path = folder / "conversations.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    label_file = folder / "labels.csv"
    label_file.write_text("\n".join(labels) + "\n", encoding="utf-8")
    return path, label_file


def test_on_trajectory_records_calibrate_and_drift_count_match_as_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases, labels = trajectory_stream(tmp_path)
    graded = tmp_path / "graded.jsonl"
    assert main(["grade", str(cases), "--rubric", "trajectory", "-o", str(graded)], env={}) == 0
    judged = [json.loads(line)["label"] for line in graded.read_text("utf-8").splitlines()]
    match_share = judged.count("match") / len(judged)
    assert 0.2 < match_share < 0.5  # far from its complement: the two readings differ
    capsys.readouterr()

    binary = calibrate(tmp_path, graded, labels)["binary"]
    out = capsys.readouterr().out
    assert binary["positive_label"] == "match" and binary["negative_label"] == "mismatch"
    assert binary["judged"]["pass_rate"] == pytest.approx(match_share)
    assert binary["judge_pass_rate"] == pytest.approx(match_share)  # every case labelled
    assert "pass = 'match' (rubric trajectory@1: the label it scores 1.0)" in out
    markdown = (tmp_path / "report" / "report.md").read_text("utf-8")
    assert "## Pass rates (pass = `match`)" in markdown
    assert "Pass class from rubric trajectory@1: the label it scores 1.0." in markdown

    report = tmp_path / "drift.json"
    args = ["drift", str(graded), "--labels", str(labels), "--window", "40", "--json"]
    assert main([*args, "-o", str(report), "--bootstrap", "50"], env={}) in (0, 3)
    drift = json.loads(report.read_text("utf-8"))
    assert drift["positive_label"] == "match"
    assert drift["positive_from"] == "rubric trajectory@1: the label it scores 1.0"
    for n, row in enumerate(drift["windows"]):
        window = judged[40 * n : 40 * (n + 1)]
        assert row["judge_pass_rate"] == pytest.approx(window.count("match") / len(window))


def test_positive_label_overrides_and_a_file_without_a_rubric_names_its_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases, labels = trajectory_stream(tmp_path)
    graded = tmp_path / "graded.jsonl"
    assert main(["grade", str(cases), "--rubric", "trajectory", "-o", str(graded)], env={}) == 0
    binary = calibrate(tmp_path, graded, labels, "--positive-label", "mismatch")["binary"]
    assert binary["positive_label"] == "mismatch"
    assert binary["positive_from"] == "--positive-label"
    plain = tmp_path / "plain.csv"  # another tool's id,label file: no rubric named
    rows = [json.loads(line) for line in graded.read_text("utf-8").splitlines()]
    plain.write_text("id,label\n" + "".join(f"{r['id']},{r['label']}\n" for r in rows))
    assert pass_class_of(plain).source == FILE_RULE
    capsys.readouterr()
    binary = calibrate(tmp_path, plain, labels)["binary"]
    assert binary["positive_label"] == "match"  # the rule reads `match` as a pass now
    assert binary["positive_from"] == FILE_RULE
    assert f"pass = 'match' ({FILE_RULE})" in capsys.readouterr().out
