"""`judge compare RUN_A RUN_B`: runs from multi-rubric passes (or single records files)
compared per metric. Scores are set by construction (test kinds that read them from the
case), so every figure has a hand computation; ids on one side only are counted and
listed; a criteria rubric's criteria are compared too; gates and usage errors; and a
seeded simulation through the command: the planted difference is flagged, the null one
is not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from judge.cli import main
from judge.testing import FakeOpenAIServer
from tests.helpers import REPO, read_jsonl
from tests.rag_support import recorded_kinds, with_metadata, write_rubrics

__all__ = ["recorded_kinds"]


@pytest.fixture
def folder(tmp_path: Path, recorded_kinds: None) -> Path:
    kinds = {"recall": "test_recorded_retrieval", "grounded": "test_recorded_generation"}
    return write_rubrics(tmp_path / "mine", kinds)


def write_cases(path: Path, ids: list[str], **columns: list[Any]) -> Path:
    rows = [{"id": i, "question": f"question {i}?"} for i in ids]
    path.write_text("".join(json.dumps(r) + "\n" for r in with_metadata(rows, **columns)))
    return path


def grade_run(cases: Path, out: Path, folder: Path, rubrics: str = "recall,grounded") -> None:
    """A pass into folder `out` (a single rubric writes out/ID.jsonl, as a pass would)."""
    target = out if "," in rubrics else out / f"{rubrics}.jsonl"
    args = ["grade", str(cases), "--rubric", rubrics, "-o", str(target)]
    assert main(args, env={"JUDGE_RUBRICS_DIR": str(folder)}) == 0


def compare(*args: str, folder: Path) -> int:
    return main(["compare", *args], env={"JUDGE_RUBRICS_DIR": str(folder)})


def test_figures_equal_a_hand_computation_and_one_sided_ids_are_reported(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = ["c1", "c2", "c3", "c4", "c5", "c6"]
    a = write_cases(tmp_path / "a.jsonl", ids, recall=[1.0, 0.5, 0.0, 1.0, 0.2, 0.9],
                    grounded=[1.0, 1.0, 1.0, None, 0.5, 0.5])  # fmt: skip
    b = write_cases(tmp_path / "b.jsonl", [*ids[1:], "c7"],
                    recall=[1.0, 0.5, 1.0, 0.2, 0.9, 0.3],
                    grounded=[1.0, 1.0, 0.0, 0.0, 0.5, 1.0])  # fmt: skip
    grade_run(a, tmp_path / "A", folder)
    grade_run(b, tmp_path / "B", folder)
    out = tmp_path / "compare.json"
    assert compare(str(tmp_path / "A"), str(tmp_path / "B"), "--json", str(out), folder=folder) == 0
    result = json.loads(out.read_text("utf-8"))
    recall = result["metrics"]["recall.score"]
    # paired on c2..c6: A = .5 0 1 .2 .9, B = 1 .5 1 .2 .9
    assert recall["n"] == 5
    assert recall["a"] == pytest.approx(2.6 / 5) and recall["b"] == pytest.approx(3.6 / 5)
    assert recall["diff"] == pytest.approx(0.2)
    assert (recall["wins"], recall["ties"], recall["losses"]) == (2, 3, 0)
    assert recall["p_value"] == pytest.approx(stats.binomtest(2, 2).pvalue)  # 0.5
    assert recall["ci95"][0] <= 0.2 <= recall["ci95"][1]
    grounded = result["metrics"]["grounded.score"]
    # c4 abstained in A (no value): left out, not dropped silently
    assert grounded["n"] == 4 and grounded["left_out"] == 1
    assert (grounded["wins"], grounded["ties"], grounded["losses"]) == (0, 3, 1)
    assert grounded["diff"] == pytest.approx(-0.125)  # c5: 0.5 -> 0
    for entry in result["metrics"].values():
        assert set(entry) >= {"a", "b", "diff", "ci95", "p_value", "significant"}
    cases = result["comparisons"][0]["cases"]["recall"]
    assert (cases["cases_in_both"], cases["only_a"], cases["only_b"]) == (5, 1, 1)
    assert cases["only_a_ids"] == ["c1"] and cases["only_b_ids"] == ["c7"]
    text = capsys.readouterr().out
    assert "| recall.score | 5 | 0.520 | 0.720 | +0.200 |" in text
    assert "1 only in A (c1); 1 only in B (c7)" in text


def test_a_single_records_file_is_a_run_and_other_files_are_noted(
    folder: Path, tmp_path: Path
) -> None:
    ids = [f"c{i}" for i in range(4)]
    grade_run(write_cases(tmp_path / "a.jsonl", ids, recall=[1, 0, 1, 0]), tmp_path / "A",
              folder, "recall")  # fmt: skip
    grade_run(write_cases(tmp_path / "b.jsonl", ids, recall=[1, 1, 1, 0]), tmp_path / "B",
              folder, "recall")  # fmt: skip
    (tmp_path / "A" / "cases.jsonl").write_text('{"id": "x", "question": "q"}\n')
    out = tmp_path / "c.json"
    run_b = str(tmp_path / "B" / "recall.jsonl")
    assert compare(str(tmp_path / "A"), run_b, "--json", str(out), folder=folder) == 0
    result = json.loads(out.read_text("utf-8"))
    assert result["metrics"]["recall.score"]["diff"] == pytest.approx(0.25)
    assert "cases.jsonl skipped: not a records file" in result["comparisons"][0]["notes"]


def test_a_criteria_rubric_is_compared_criterion_by_criterion(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    mine = tmp_path / "mine"
    assert (
        main(["rubrics", "new", "quality", "--kind", "criteria", "--rubrics-dir", str(mine)]) == 0
    )
    assert main(["rubrics", "lock", "--rubrics-dir", str(mine)]) == 0
    env = {
        "OPENAI_BASE_URL": openai_server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "JUDGE_MODEL": "judge-test-2024-01-01",
        "JUDGE_RUBRICS_DIR": str(mine),
    }
    rows = [json.loads(x) for x in (REPO / "examples" / "cases.jsonl").read_text().splitlines()]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(json.dumps(r) + "\n" for r in rows[:12]))
    b.write_text(
        "".join(json.dumps({**r, "answer": r["answer"] + " Thanks!"}) + "\n" for r in rows[:12])
    )
    for cases, run in ((a, "A"), (b, "B")):
        args = ["grade", str(cases), "--rubric", "quality,relevance", "-o", str(tmp_path / run)]
        assert main(args, env=env) == 0
    out = tmp_path / "c.json"
    assert (
        main(["compare", str(tmp_path / "A"), str(tmp_path / "B"), "--json", str(out)], env=env)
        == 0
    )
    metrics = json.loads(out.read_text("utf-8"))["metrics"]
    names = {"quality.score", "quality.criteria.relevance", "quality.criteria.grounding",
             "quality.criteria.hallucination", "relevance.score"}  # fmt: skip
    assert set(metrics) == names
    for side, run in (("a", "A"), ("b", "B")):
        records = read_jsonl(tmp_path / run / "quality.jsonl")
        ok = [r for r in records if r["status"] == "ok"]
        by_hand = np.mean([r["verdict"]["grounding"]["score"] for r in ok])
        assert metrics["quality.criteria.grounding"][side] == pytest.approx(by_hand)


def test_gates_on_the_comparison(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [f"c{i}" for i in range(12)]
    grade_run(write_cases(tmp_path / "a.jsonl", ids, recall=[1.0] * 12, grounded=[1.0] * 12),
              tmp_path / "A", folder)  # fmt: skip
    grade_run(write_cases(tmp_path / "b.jsonl", ids, recall=[0.0] * 12, grounded=[1.0] * 12),
              tmp_path / "B", folder)  # fmt: skip
    runs = [str(tmp_path / "A"), str(tmp_path / "B")]
    assert compare(*runs, "--fail-if", "significant_lower > 0", folder=folder) == 3
    assert "gate:" in capsys.readouterr().err
    assert compare(*runs, "--fail-if", "grounded.score.diff < 0", folder=folder) == 0
    assert compare(*runs, "--fail-if", "recall.score.ci95_high < 0", folder=folder) == 3
    assert compare(*runs, "--fail-if", "nope.diff < 0", folder=folder) == 2
    assert "valid names" in capsys.readouterr().err
    # three runs: each later run against the first, every test in Holm's family
    grade_run(write_cases(tmp_path / "c.jsonl", ids, recall=[1.0] * 12, grounded=[1.0] * 12),
              tmp_path / "C", folder)  # fmt: skip
    out = tmp_path / "three.json"
    assert compare(*runs, str(tmp_path / "C"), "--json", str(out), folder=folder) == 0
    result = json.loads(out.read_text("utf-8"))
    assert result["tests"] == 4 and [c["b"] for c in result["comparisons"]] == runs[1:] + [
        str(tmp_path / "C")
    ]
    recall_b = result["comparisons"][0]["metrics"]["recall.score"]
    assert recall_b["p_adjusted"] == pytest.approx(min(1, 4 * recall_b["p_value"]))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["A"], "two runs or more"),
        (["A", "missing"], "no such file or folder"),
        (["A", "B", "--alpha", "1.5"], "--alpha"),
        (["A", "B", "--fail-if", "diff <"], "METRIC OP NUMBER"),
        (["A", "B", "--json", "a.jsonl"], "not a comparison"),
    ],
)
def test_usage_errors(
    folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    ids = ["c1", "c2"]
    grade_run(write_cases(tmp_path / "a.jsonl", ids, recall=[1, 0]), tmp_path / "A", folder)
    grade_run(write_cases(tmp_path / "b.jsonl", ids, recall=[1, 1]), tmp_path / "B", folder)
    monkeypatch.chdir(tmp_path)
    assert compare(*args, folder=folder) == 2
    assert message in capsys.readouterr().err


def test_simulation_through_the_command_flags_the_planted_difference_only(
    folder: Path, tmp_path: Path
) -> None:
    """Seeded: 200 cases; system B retrieves better (recall up by 0.1 on average) and
    writes answers as grounded as A's (no planted difference)."""
    rng = np.random.default_rng(20261201)
    n = 200
    ids = [f"q{i:03d}" for i in range(n)]
    hard_r, hard_g = rng.uniform(0.2, 0.8, n), rng.uniform(0.2, 0.8, n)

    def noisy(base: np.ndarray, shift: float) -> list[float]:
        return np.round(np.clip(base + shift + rng.normal(0, 0.15, n), 0, 1), 4).tolist()

    a = write_cases(tmp_path / "a.jsonl", ids, recall=noisy(hard_r, 0), grounded=noisy(hard_g, 0))
    b = write_cases(tmp_path / "b.jsonl", ids, recall=noisy(hard_r, 0.1), grounded=noisy(hard_g, 0))
    grade_run(a, tmp_path / "A", folder)
    grade_run(b, tmp_path / "B", folder)
    out = tmp_path / "c.json"
    assert compare(str(tmp_path / "A"), str(tmp_path / "B"), "--json", str(out), folder=folder) == 0
    metrics = json.loads(out.read_text("utf-8"))["metrics"]
    assert metrics["recall.score"]["significant"] is True
    assert metrics["recall.score"]["ci95"][0] > 0
    assert metrics["grounded.score"]["significant"] is False


def test_the_rag_baseline_against_a_reranker(tmp_path: Path) -> None:
    """examples/rag: the baseline and `reranked.jsonl`, where a reranker brings the relevant
    document to rank 1 for the eight labelled retriever-broken and both-broken cases (and
    b05's) and the answers follow. Retrieval wins those 8 cases and ties the other 12
    labelled ones; with the scores alone (3 tests) retrieval and correctness are flagged,
    faithfulness (5 wins: p = 1/16) is not; with every per-case figure (23 tests) Holm's
    correction flags none: more metrics, a higher bar."""
    rag = REPO / "examples" / "rag"
    rubrics = "retrieval,faithfulness,correctness"
    for name, run in (("cases", "baseline"), ("reranked", "reranked")):
        args = ["grade", str(rag / f"{name}.jsonl"), "--rubric", rubrics, "-o", str(tmp_path / run)]
        assert main(args, env={}) == 0
    runs = [str(tmp_path / "baseline"), str(tmp_path / "reranked")]
    out = tmp_path / "scores.json"
    assert main(["compare", *runs, "--metric", "*.score", "--json", str(out)], env={}) == 0
    scores = json.loads(out.read_text("utf-8"))
    assert scores["tests"] == 3
    retrieval = scores["metrics"]["retrieval.score"]
    assert (retrieval["n"], retrieval["wins"], retrieval["ties"], retrieval["losses"]) == (
        20,
        8,
        12,
        0,
    )
    assert retrieval["a"] == pytest.approx(0.6) and retrieval["b"] == pytest.approx(1.0)
    assert retrieval["p_value"] == pytest.approx(2 / 2**8)
    assert retrieval["left_out"] == 4  # h07 g05 r05 b05: no ids labelled, retrieval abstains
    flagged = {n for n, e in scores["metrics"].items() if e["significant"]}
    assert flagged == {"retrieval.score", "correctness.score"}
    assert scores["metrics"]["faithfulness.score"]["p_value"] == pytest.approx(1 / 16)
    everything = tmp_path / "all.json"
    assert main(["compare", *runs, "--json", str(everything)], env={}) == 0
    result = json.loads(everything.read_text("utf-8"))
    assert result["tests"] == 23 and not any(e["significant"] for e in result["metrics"].values())
    assert result["metrics"]["retrieval.mrr"]["a"] == pytest.approx(0.575)
    assert {"correctness.precision", "correctness.recall", "retrieval.ndcg_at_10"} <= set(
        result["metrics"]
    )
