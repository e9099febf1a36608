"""The four-criterion benchmark rubric and the RAG example set: the benchmark's overall
score, summary and flags equal hand computations with a scripted judge; the example set
fills the four cells of the two-by-two; the test server simulates each RAG rubric; probes
on a kind that grades no answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.api import Judge
from judge.cli import main
from judge.kinds.criteria import flag as flag_of
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.testing import FakeOpenAIServer, Reply
from tests.helpers import read_jsonl, write_jsonl

QUESTION = "How long is the free trial?"
TRIAL = "The free trial lasts 14 days from the day you sign up."

# ---- the four-criterion benchmark -------------------------------------------------------


def benchmark_verdict(
    relevance: int, similarity: int, faithfulness: int, invented: bool
) -> dict[str, Any]:
    return {
        "context_relevance": {"rationale": "r", "score": relevance},
        "answer_similarity": {"rationale": "s", "score": similarity},
        "faithfulness": {"rationale": "f", "score": faithfulness},
        "hallucination": {"rationale": "h", "value": invented},
    }


def test_the_benchmark_overall_score_and_summary_equal_hand_computations(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_server.script(
        Reply(verdict=benchmark_verdict(8, 6, 9, False)),
        Reply(verdict=benchmark_verdict(10, 10, 10, True)),
        Reply(verdict=benchmark_verdict(6, 9, 8, False)),
        Reply(content="not json"),
        Reply(content="still not json"),
    )
    base = {
        "question": QUESTION,
        "contexts": [TRIAL],
        "answer": "14 days.",
        "reference": "14 days.",
    }
    rows = [{"id": f"b{i}", **base} for i in range(1, 5)]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "k", "JUDGE_MODEL": "m"}
    out, summary_path = tmp_path / "o.jsonl", tmp_path / "s.json"
    args = ["grade", str(source), "--rubric", "rag-benchmark", "-o", str(out), "--no-cache"]
    main(
        [*args, "--concurrency", "1", "--max-error-rate", "1", "--summary", str(summary_path)],
        env=env,
    )
    records, summary = read_jsonl(out), json.loads(summary_path.read_text())
    first = (0.3 * (8 - 1) + 0.4 * (6 - 1) + 0.3 * (9 - 1)) / 9  # 6.5/9, on 0..1
    third = (0.3 * 5 + 0.4 * 8 + 0.3 * 7) / 9
    assert [r["score"] for r in records[:3]] == pytest.approx([first, 0.0, third])
    assert [r["label"] for r in records] == ["pass", "fail", "pass", None]
    criteria = summary["criteria"]
    assert criteria["context_relevance"] == {"mean": 8.0, "flag": "good"}  # >= 8
    assert criteria["answer_similarity"] == {
        "mean": pytest.approx(25 / 3, abs=1e-6),
        "flag": "good",
    }
    assert criteria["faithfulness"] == {"mean": 9.0, "flag": "good"}  # >= 9
    assert criteria["hallucination"] == {"rate": pytest.approx(1 / 3, abs=1e-6), "flag": "warning"}
    assert (summary["total_questions"], summary["failed_questions"], summary["fails"]) == (4, 1, 1)
    assert summary["mean_score"] == pytest.approx((first + third) / 3, abs=1e-6)


@pytest.mark.parametrize(
    ("mean", "flag"), [(8.0, "good"), (7.9, "fair"), (6.0, "fair"), (5.99, "warning")]
)
def test_benchmark_flags_follow_the_interpretation_guide(mean: float, flag: str) -> None:
    criterion = load_rubric("rag-benchmark").spec.criteria[0]  # context relevance: 8 / 6
    assert flag_of(criterion, mean) == flag
    hallucination = load_rubric("rag-benchmark").spec.criteria[3]  # rate: <= 0.1 / > 0.2
    assert [flag_of(hallucination, r) for r in (0.1, 0.15, 0.2, 0.21)] == [
        "good",
        "fair",
        "fair",
        "warning",
    ]


# ---- the example set --------------------------------------------------------------------

RAG_EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rag" / "cases.jsonl"
MODES = ("json_schema", "json_object")


def test_the_example_set_fills_the_four_cells() -> None:
    """Retrieval signal: recall@5 from the ids, else (no labels) context precision; the
    generation signal: faithfulness; each high at 0.5 or above. Every case lands in the
    cell it was written for, on the offline rules judge."""
    judge = Judge()
    cases = [
        Case.model_validate(json.loads(line)) for line in RAG_EXAMPLES.read_text().splitlines()
    ]
    retrieval = judge.grade_many(cases, "retrieval")
    fallback = judge.grade_many(cases, "context_relevance")
    generation = judge.grade_many(cases, "faithfulness")
    cells = {
        (True, True): "healthy",
        (True, False): "generator_broken",
        (False, True): "retriever_broken",
        (False, False): "both_broken",
    }
    counted: dict[str, int] = {}
    for case, ids, chunks, faith in zip(cases, retrieval, fallback, generation, strict=True):
        signal = ids if ids.status == "ok" else chunks
        assert signal.score is not None and faith.score is not None, case.id
        cell = cells[(signal.score >= 0.5, faith.score >= 0.5)]
        assert cell == case.metadata["designed_cell"], case.id
        counted[cell] = counted.get(cell, 0) + 1
    assert counted == {"healthy": 9, "generator_broken": 5, "retriever_broken": 5, "both_broken": 5}
    assert sum(r.status == "abstained" for r in retrieval) == 4  # the unlabelled cases
    assert all(r.judge.model == "computed" for r in retrieval)


@pytest.mark.parametrize(
    ("rubric", "mode"),
    [
        *[(r, m) for r in ("context_relevance", "correctness", "citations") for m in MODES],
        ("rag-benchmark", "json_schema"),  # a criteria rubric's fields are in its schema only
    ],
)
def test_the_test_server_simulates_each_rag_rubric(
    openai_server: FakeOpenAIServer, tmp_path: Path, rubric: str, mode: str
) -> None:
    """Unscripted, the loopback server answers each kind with a valid verdict, also in JSON
    mode where no schema name is sent (the kind is recognised from the payload)."""
    rows = [json.loads(line) for line in RAG_EXAMPLES.read_text().splitlines()[:6]]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "k", "JUDGE_MODEL": "m"}
    out = tmp_path / "o.jsonl"
    args = ["grade", str(source), "--rubric", rubric, "-o", str(out), "--no-cache"]
    assert main([*args, "--output-mode", mode], env=env) == 0
    assert {r["status"] for r in read_jsonl(out)} <= {"ok", "abstained"}
    assert openai_server.stats.requests == len(rows)  # no repair was needed


def test_probes_on_a_kind_without_an_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [json.loads(line) for line in RAG_EXAMPLES.read_text().splitlines()[:3]]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    report = tmp_path / "p.json"
    base = [str(source), "--rubric", "context_relevance", "-o", str(report), "--offline"]
    assert main(["probe", "verbosity", *base]) == 2
    assert "grades no answer" in capsys.readouterr().err
    # the rules judge's clean verdicts on these three cases leave no variant to flip: the
    # probe says nothing could be measured and exits 1 (issue 37), still over the contexts
    assert main(["probe", "injection", *base]) == 1
    assert "nothing could be measured" in capsys.readouterr().err
    assert json.loads(report.read_text())["placements"] == ["context"]
