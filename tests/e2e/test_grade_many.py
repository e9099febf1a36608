"""Several rubrics in one pass: `judge grade cases.jsonl --rubric A,B,C -o out/`.

Through the loopback test server: one request per case for each model rubric, none for a
rubric whose kind needs no judge, none on a rerun; one validation of the input against
every rubric, resume and identity rules per records file, one concurrency budget across
rubrics, one summary, gates by rubric and the worst exit code."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from judge.api import open_graders
from judge.cli import main
from judge.config import JudgeConfig
from judge.rubric import load_rubric
from judge.testing import FakeOpenAIServer, Reply
from tests.helpers import REPO, read_jsonl
from tests.rag_support import recorded_kinds, with_metadata, write_rubrics

pytestmark = pytest.mark.slow  # several rubrics over one input, end to end (.ci/slow runs it)

__all__ = ["recorded_kinds"]  # the fixture, used by name

MODEL = "judge-test-2024-01-01"
N = 6


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    lines = (REPO / "examples" / "cases.jsonl").read_text("utf-8").splitlines()[:N]
    rows = with_metadata([json.loads(x) for x in lines], recall=[1.0, 0.0, 0.5, 1.0, 0.2, 1.0])
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path, recorded_kinds: None) -> Path:
    return write_rubrics(tmp_path / "mine", {"recall": "test_recorded_retrieval"})


def env_for(server: FakeOpenAIServer, folder: Path) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "JUDGE_MODEL": MODEL,
        "JUDGE_RUBRICS_DIR": str(folder),
    }


def grade(cases: Path, out: Path, rubrics: str, env: dict[str, str], *extra: str) -> int:
    return main(["grade", str(cases), "--rubric", rubrics, "-o", str(out), *extra], env=env)


def input_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text("utf-8").splitlines()]


def test_three_rubrics_send_one_request_per_case_per_model_rubric_and_none_on_rerun(
    openai_server: FakeOpenAIServer, folder: Path, cases: Path, tmp_path: Path
) -> None:
    out, env = tmp_path / "out", env_for(openai_server, folder)
    summary = tmp_path / "summary.json"
    rubrics = "recall,faithfulness,relevance"
    assert grade(cases, out, rubrics, env, "--summary", str(summary)) == 0
    # two model rubrics: one request per case each; the recorded kind needs no judge
    assert openai_server.stats.requests == 2 * N
    assert sorted(p.name for p in out.iterdir()) == [
        "faithfulness.jsonl",
        "recall.jsonl",
        "relevance.jsonl",
    ]
    for name in ("recall", "faithfulness", "relevance"):
        records = read_jsonl(out / f"{name}.jsonl")
        assert [r["id"] for r in records] == input_ids(cases)  # input order, one per case
        assert {r["rubric"] for r in records} == {name}
    recall = read_jsonl(out / "recall.jsonl")
    assert {r["judge"]["model"] for r in recall} == {"computed"}  # no judge asked
    assert [r["score"] for r in recall] == [1.0, 0.0, 0.5, 1.0, 0.2, 1.0]
    assert {r["judge"]["model"] for r in read_jsonl(out / "faithfulness.jsonl")} == {MODEL}
    written = json.loads(summary.read_text("utf-8"))
    assert list(written["rubrics"]) == ["recall@1", "faithfulness@1", "relevance@1"]
    assert written["rubrics"]["recall@1"]["mean_score"] == pytest.approx(3.7 / 6, abs=1e-6)
    assert written["diagnosis"] is not None  # a retrieval and a generation signal

    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert grade(cases, out, rubrics, env, "--summary", str(summary)) == 0  # ours: replaced
    assert openai_server.stats.requests == 2 * N  # the rerun sends none
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_second_pass_elsewhere_is_served_from_the_shared_cache(
    openai_server: FakeOpenAIServer, folder: Path, cases: Path, tmp_path: Path
) -> None:
    env = env_for(openai_server, folder)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert grade(cases, tmp_path / "a", "faithfulness,relevance", env, *cache) == 0
    assert openai_server.stats.requests == 2 * N
    assert grade(cases, tmp_path / "b", "relevance,faithfulness,recall", env, *cache) == 0
    assert openai_server.stats.requests == 2 * N
    for name in ("faithfulness", "relevance"):
        assert all(r["cached"] for r in read_jsonl(tmp_path / "b" / f"{name}.jsonl"))


def test_a_resumed_pass_grades_only_what_is_missing(
    openai_server: FakeOpenAIServer, folder: Path, cases: Path, tmp_path: Path
) -> None:
    out, env = tmp_path / "out", env_for(openai_server, folder)
    assert grade(cases, out, "faithfulness,recall", env, "--no-cache", "--limit", "2") == 0
    assert openai_server.stats.requests == 2
    assert grade(cases, out, "faithfulness,recall,relevance", env, "--no-cache") == 0
    assert openai_server.stats.requests == 2 + (N - 2) + N
    for name in ("faithfulness", "recall", "relevance"):
        assert [r["id"] for r in read_jsonl(out / f"{name}.jsonl")] == input_ids(cases)


def test_one_concurrency_budget_across_rubrics(
    server_factory: Any, folder: Path, cases: Path, tmp_path: Path
) -> None:
    server = server_factory(latency=0.02)
    args = ["--no-cache", "--concurrency", "2"]
    assert (
        grade(cases, tmp_path / "out", "faithfulness,relevance", env_for(server, folder), *args)
        == 0
    )
    assert server.stats.requests == 2 * N
    assert server.stats.peak_concurrency <= 2


def test_model_rubrics_share_one_backend_and_cache(tmp_path: Path) -> None:
    config = JudgeConfig(model=MODEL, base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path)
    rubrics = [load_rubric("faithfulness"), load_rubric("relevance")]

    async def check() -> None:
        async with open_graders(config, rubrics) as graders:
            assert graders[0].backend is graders[1].backend
            assert graders[0].cache is graders[1].cache is not None

    asyncio.run(check())


def test_the_input_is_validated_once_against_every_rubric(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"id": "a", "question": "q?", "contexts": ["c"], "answer": "c."},
        {"id": "b", "question": "q?", "answer": "c."},  # faithfulness needs contexts
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    out = tmp_path / "out"
    env = {"JUDGE_RUBRICS_DIR": str(folder)}
    assert grade(path, out, "relevance,faithfulness", env) == 2
    err = capsys.readouterr().err
    assert "cases.jsonl:2 (id 'b'): missing contexts (needed by rubric faithfulness@1)" in err
    assert not out.exists()  # nothing graded, nothing written


def test_a_conflicting_records_file_stops_the_pass_before_any_request(
    openai_server: FakeOpenAIServer, folder: Path, cases: Path, tmp_path: Path
) -> None:
    out, env = tmp_path / "out", env_for(openai_server, folder)
    assert (
        main(["grade", str(cases), "--rubric", "relevance", "-o", str(out / "relevance.jsonl")])
        == 0
    )
    before = (out / "relevance.jsonl").read_bytes()  # graded by the rules judge
    assert grade(cases, out, "faithfulness,relevance", env) == 2
    assert openai_server.stats.requests == 0
    assert (out / "relevance.jsonl").read_bytes() == before
    assert not (out / "faithfulness.jsonl").exists()


def test_gates_by_rubric_id_and_for_every_rubric(
    folder: Path, cases: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"JUDGE_RUBRICS_DIR": str(folder)}
    out = tmp_path / "out"
    assert grade(cases, out, "recall,relevance", env, "--fail-if", "recall.mean_score < 0.5") == 0
    assert grade(cases, out, "recall,relevance", env, "--fail-if", "recall.mean_score < 0.7") == 3
    assert "gate: recall.mean_score < 0.7: 0.616667 -> failed" in capsys.readouterr().err
    # no prefix: every rubric that has the figure, one gate each
    assert grade(cases, out, "recall,relevance", env, "--fail-if", "error_rate > 0") == 0
    err = capsys.readouterr().err
    assert "gate: recall.error_rate > 0: 0 -> ok" in err
    assert "gate: relevance.error_rate > 0: 0 -> ok" in err
    assert grade(cases, out, "recall,relevance", env, "--fail-if", "claims > 1") == 2
    assert "valid names" in capsys.readouterr().err
    assert grade(cases, out, "recall,faithfulness", env, "--fail-if", "claims < 1") == 0


def test_the_exit_code_is_the_worst_rubrics(
    server_factory: Any,
    folder: Path,
    cases: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = server_factory(
        responder=lambda chat: Reply(status=500) if chat.kind == "relevance" else Reply()
    )
    env = env_for(server, folder)
    args = ["--no-cache", "--max-retries", "0", "--fail-if", "recall.mean_score < 0.9"]
    assert grade(cases, tmp_path / "out", "faithfulness,relevance,recall", env, *args) == 1
    err = capsys.readouterr().err
    assert f"{N} of {N} cases failed (api_error {N})" in err and "relevance.jsonl" in err
    assert len(read_jsonl(tmp_path / "out" / "faithfulness.jsonl")) == N  # kept


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rubric", "faithfulness,,relevance"], "empty rubric"),
        (["--rubric", "faithfulness,faithfulness@1"], "more than once"),
        (["--rubric", "faithfulness,relevance", "--batch-api"], "one rubric at a time"),
        (["--rubric", "faithfulness,relevance", "--human-labels", "h.csv"], "one rubric at a time"),
        (["--rubric", "faithfulness,relevance", "--retrieval-threshold", "0.5"], "two-by-two"),
        (["--rubric", "faithfulness", "--generation-threshold", "0.5"], "two-by-two"),
        (["--rubric", "recall,faithfulness", "--generation-threshold", "2"], "between 0 and 1"),
    ],
)
def test_usage_errors_of_a_pass(
    folder: Path,
    cases: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    args = ["grade", str(cases), "-o", str(tmp_path / "out"), *extra]
    assert main(args, env={"JUDGE_RUBRICS_DIR": str(folder)}) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_o_must_be_a_folder_with_several_rubrics(
    cases: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "graded.jsonl"
    target.write_text("", "utf-8")
    assert grade(cases, target, "faithfulness,relevance", {}) == 2
    assert "names a folder" in capsys.readouterr().err


RAG = REPO / "examples" / "rag" / "cases.jsonl"
R05_QUESTION = "Can I export invoices to PDF?"


R05_CORRECTNESS = {  # the test server's rules stand-in finds no fact in r05's reference
    "answer_claims": [
        {
            "claim": "Tallyhub was founded in 2019 in Lisbon.",
            "verdict": "not_in_reference",
            "evidence": "",
        }  # fmt: skip
    ],
    "reference_facts": [
        {"fact": "The retrieved documents do not say.", "verdict": "missed", "evidence": ""}
    ],
}


def test_retrieval_faithfulness_correctness_on_the_rag_set(
    server_factory: Any, tmp_path: Path
) -> None:
    """The issue's three-rubric pass: exactly one request per case for each model rubric
    (each case's question asked once of faithfulness and once of correctness), none for
    `retrieval` (computed from the ids), none on a rerun."""
    asked: Counter[tuple[str | None, str, bool]] = Counter()

    def count(chat: Any) -> Reply:
        asked[(chat.kind, str(chat.payload.get("question")), chat.is_repair)] += 1
        if chat.kind == "correctness" and chat.payload.get("question") == R05_QUESTION:
            return Reply(verdict=R05_CORRECTNESS)
        return Reply()

    server = server_factory(responder=count)
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test", "JUDGE_MODEL": MODEL}
    out, cache = tmp_path / "out", ["--cache-dir", str(tmp_path / "cache")]
    questions = [json.loads(x)["question"] for x in RAG.read_text("utf-8").splitlines()]
    rubrics = "retrieval,faithfulness,correctness"
    assert grade(RAG, out, rubrics, env, *cache) == 0
    expected = {(kind, q, False): 1 for kind in ("faithfulness", "correctness") for q in questions}
    assert len(questions) == 24 and dict(asked) == expected  # nothing for retrieval
    assert server.stats.requests == 2 * 24
    for name in ("retrieval", "faithfulness", "correctness"):
        records = read_jsonl(out / f"{name}.jsonl")
        assert len(records) == 24 and not {"api_error", "parse_error"} & {
            r["status"] for r in records
        }
    assert {r["judge"]["model"] for r in read_jsonl(out / "retrieval.jsonl")} == {"computed"}
    assert {r["judge"]["model"] for r in read_jsonl(out / "correctness.jsonl")} == {MODEL}
    assert grade(RAG, out, rubrics, env, *cache) == 0
    assert server.stats.requests == 2 * 24  # the rerun sends none
