"""`retrieval`: rank metrics equal trec_eval's (through ir-measures and pytrec_eval) to
1e-12 on a set with edge cases, each edge case's rule, and no request ever sent."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import ir_measures
import pytest
from ir_measures import AP, RR, P, R, Success, nDCG

from judge.cli import main
from judge.engine.cache import VerdictCache
from judge.engine.rules import RulesJudge
from judge.kinds._ranking import grades_of, metric_names, ranked_slots, ranking_metrics
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.testing import FakeOpenAIServer
from tests.helpers import read_jsonl, write_jsonl

KS = (1, 3, 5, 10)
RUBRIC = load_rubric("retrieval")


def library_metrics(retrieved: list[str], grades: dict[str, float]) -> dict[str, float]:
    """trec_eval's figures for one query. A run is a dict (one score per id), so a repeated
    id is given as a fresh non-relevant id at its rank: our rule for repeats, in a form
    the library can read. An empty ranking is one non-relevant id (trec_eval leaves out a
    query with no retrieved document; every metric of one non-relevant id is 0, as ours)."""
    slots = [d if d is not None else f"~repeat-{i}" for i, d in enumerate(ranked_slots(retrieved))]
    slots = slots or ["~nothing"]
    run = {"q": {doc: float(len(slots) - rank) for rank, doc in enumerate(slots)}}
    qrels = {"q": {doc: int(grade) for doc, grade in grades.items()}}
    names = {}
    for k in KS:
        names |= {
            Success @ k: f"hit_at_{k}",
            R @ k: f"recall_at_{k}",
            P @ k: f"precision_at_{k}",
            nDCG @ k: f"ndcg_at_{k}",
        }
    names |= {RR: "mrr", AP: "average_precision"}
    found = ir_measures.pytrec_eval.iter_calc(list(names), qrels, run)
    return {names[m.measure]: m.value for m in found}


# (name, retrieved, relevant_ids, relevance)
EDGE_CASES: list[tuple[str, list[str], list[str] | None, dict[str, float] | None]] = [
    ("plain", ["a", "b", "c", "d", "e"], ["b", "e", "z"], None),
    ("first hit at rank one", ["a", "b"], ["a"], None),
    ("repeated ids", ["a", "b", "a", "c", "b"], ["a", "c"], None),
    ("a repeat of a relevant id before the next hit", ["x", "x", "a"], ["x", "a"], None),
    ("k beyond the list", ["a", "b"], ["b"], None),
    ("more ids than contexts", ["a", "b", "c", "d"], ["d"], None),
    ("empty ranking", [], ["a"], None),
    ("relevant ids never retrieved", ["a", "b", "c"], ["x", "y"], None),
    ("graded relevance", ["c", "d", "a", "b"], None, {"a": 3, "b": 1, "c": 2, "x": 2}),
    ("graded with zeros", ["a", "b", "c"], None, {"a": 0, "b": 2, "c": 0, "d": 1}),
    ("set and grades together", ["a", "b", "c"], ["a", "c"], {"b": 2, "c": 3}),
    ("eleven ids, hit at 11", [f"n{i}" for i in range(10)] + ["a"], ["a"], None),
]


@pytest.mark.parametrize(
    ("retrieved", "relevant_ids", "relevance"),
    [case[1:] for case in EDGE_CASES],
    ids=[case[0] for case in EDGE_CASES],
)
def test_metrics_equal_trec_eval_on_edge_cases(
    retrieved: list[str], relevant_ids: list[str] | None, relevance: dict[str, float] | None
) -> None:
    grades = grades_of(relevant_ids, relevance)
    ours = ranking_metrics(retrieved, grades, KS)
    theirs = library_metrics(retrieved, grades)
    assert set(ours) == set(theirs) == set(metric_names(KS))
    for name in ours:
        assert ours[name] == pytest.approx(theirs[name], abs=1e-12, rel=0), name


def test_metrics_equal_trec_eval_on_random_rankings() -> None:
    rng = random.Random(20240613)
    pool = [f"d{i}" for i in range(30)]
    for _ in range(300):
        retrieved = [rng.choice(pool) for _ in range(rng.randint(0, 15))]  # repeats happen
        graded = rng.sample(pool, rng.randint(1, 8))
        grades = {d: float(rng.choice([0, 1, 1, 2, 3])) for d in graded}
        grades[rng.choice(graded)] = float(rng.randint(1, 3))  # at least one relevant
        ours, theirs = ranking_metrics(retrieved, grades, KS), library_metrics(retrieved, grades)
        for name in ours:
            assert ours[name] == pytest.approx(theirs[name], abs=1e-12, rel=0), (name, retrieved)


def test_edge_case_rules_by_hand() -> None:
    # a repeat is a non-relevant slot: [a, b, a, c] with {a, c} has c at rank 4
    repeated = ranking_metrics(["a", "b", "a", "c"], grades_of(["a", "c"], None), KS)
    assert repeated["precision_at_3"] == pytest.approx(1 / 3)  # not 2/3: the copy is no hit
    assert repeated["average_precision"] == pytest.approx((1 / 1 + 2 / 4) / 2)
    # k beyond the list: precision divides by k, as trec_eval's P_k
    short = ranking_metrics(["a", "b"], grades_of(["b"], None), KS)
    assert short["precision_at_10"] == pytest.approx(0.1) and short["recall_at_10"] == 1.0
    assert short["mrr"] == 0.5
    empty = ranking_metrics([], grades_of(["a"], None), KS)
    assert set(empty.values()) == {0.0}
    # graded: DCG@3 of gains [2, 0, 3] over the ideal [3, 2, 2] (the reference's formula)
    graded = ranking_metrics(["c", "d", "a"], {"a": 3, "c": 2, "x": 2}, KS)
    ideal = 3 + 2 / 1.584962500721156 + 2 / 2
    assert graded["ndcg_at_3"] == pytest.approx((2 + 3 / 2) / ideal, abs=1e-12)
    with pytest.raises(ValueError, match="undefined"):
        ranking_metrics(["a"], {"a": 0.0}, KS)


def retrieval_case(**fields: Any) -> Case:
    return Case.model_validate({"id": "r", "retrieved_ids": ["a", "b", "c"], **fields})


def test_no_relevant_id_abstains_where_trec_eval_says_zero() -> None:
    """The one deliberate difference: trec_eval scores 0 a query whose judged ids are all
    grade 0; 0/0 is undefined, so the kind abstains and the case stays out of the means."""
    assert set(library_metrics(["a", "c"], {"a": 0, "b": 0}).values()) == {0.0}
    outcome = RulesJudge().evaluate_sync(RUBRIC, retrieval_case(relevance={"a": 0, "b": 0}))
    assert outcome.status == "abstained" and outcome.verdict is None


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({}, "no relevance labels"),
        ({"relevant_ids": []}, "no relevant id"),
        ({"relevance": {"a": 0, "b": 0}}, "no relevant id"),
    ],
)
def test_a_case_without_a_relevant_id_abstains(fields: dict[str, Any], reason: str) -> None:
    outcome = RulesJudge().evaluate_sync(RUBRIC, retrieval_case(**fields))
    assert outcome.status == "abstained" and reason in (outcome.error or "")


def test_the_record_scores_the_primary_metric_and_labels_hit_or_miss() -> None:
    outcome = RulesJudge().evaluate_sync(
        RUBRIC, retrieval_case(relevant_ids=["c", "z"], contexts=["one", "two"])
    )
    assert outcome.verdict is not None
    scored = RUBRIC.behaviour.score(RUBRIC, outcome.verdict)
    assert (scored.score, scored.label) == (0.5, "hit")  # recall@5 = 1/2; c at rank 3 <= 5
    verdict = outcome.verdict.model_dump()
    assert verdict["first_relevant_rank"] == 3 and verdict["relevant"] == 2
    assert "3 retrieved ids but 2 contexts" in verdict["notes"][0]
    miss = RulesJudge().evaluate_sync(RUBRIC, retrieval_case(relevant_ids=["z"]))
    assert miss.verdict is not None
    assert RUBRIC.behaviour.score(RUBRIC, miss.verdict).label == "miss"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"retrieved_ids": "a"}, "retrieved_ids: input should be a valid list"),
        ({"retrieved_ids": ["a", ""]}, "ids must be non-empty strings"),
        ({"relevance": {"a": -1}}, "must be a finite number >= 0"),
        ({"relevance": {"a": "high"}}, "must be a number"),
        ({"relevant_ids": ["a"], "relevance": {"a": 0}}, "relevance grades them 0"),
    ],
)
def test_bad_retrieval_fields_are_refused_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: dict[str, Any], message: str
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [{"id": "r1", "retrieved_ids": ["a"], **row}])
    code = main(["grade", str(source), "--rubric", "retrieval", "-o", str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and "in.jsonl:1" in err and message in err.lower()
    assert not (tmp_path / "o.jsonl").exists()


def test_a_case_without_retrieved_ids_is_refused_but_an_empty_ranking_is_graded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o.jsonl"
    missing = write_jsonl(tmp_path / "in.jsonl", [{"id": "r1", "relevant_ids": ["a"]}])
    assert main(["grade", str(missing), "--rubric", "retrieval", "-o", str(out)]) == 2
    assert "missing retrieved_ids" in capsys.readouterr().err
    empty = write_jsonl(
        tmp_path / "e.jsonl", [{"id": "r1", "retrieved_ids": [], "relevant_ids": ["a"]}]
    )
    assert main(["grade", str(empty), "--rubric", "retrieval", "-o", str(out)]) == 0
    assert read_jsonl(out)[0]["score"] == 0.0


def test_csv_reads_id_lists_and_graded_relevance(tmp_path: Path) -> None:
    source = tmp_path / "in.csv"
    source.write_text(
        'id,retrieved_ids,relevant_ids,relevance\nr1,a|b|c,c,\nr2,"[""x"", ""y""]",,"{""y"": 2}"\n'
    )
    out = tmp_path / "o.jsonl"
    assert main(["grade", str(source), "--rubric", "retrieval", "-o", str(out)]) == 0
    first, second = read_jsonl(out)
    assert first["verdict"]["first_relevant_rank"] == 3
    assert second["verdict"]["metrics"]["mrr"] == 0.5


def rag_rows() -> list[dict[str, Any]]:
    return [
        {"id": "q1", "retrieved_ids": ["a", "b", "c"], "relevant_ids": ["a"], "slices": ["s"]},
        {"id": "q2", "retrieved_ids": ["d", "e"], "relevance": {"e": 2, "f": 1}},
        {"id": "q3", "retrieved_ids": ["g"]},  # no labels: abstains
    ]


def test_no_request_is_sent_with_a_model_judge_configured(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", rag_rows())
    out, cache, summary = tmp_path / "out.jsonl", tmp_path / "cache", tmp_path / "s.json"
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "sk-x", "JUDGE_MODEL": "m"}
    args = [
        "grade",
        str(source),
        "--rubric",
        "retrieval",
        "-o",
        str(out),
        "--cache-dir",
        str(cache),
    ]
    assert main([*args, "--summary", str(summary)], env=env) == 0
    assert openai_server.stats.requests == 0 and openai_server.stats.requests_by_path == {}
    records = read_jsonl(out)
    assert [r["status"] for r in records] == ["ok", "ok", "abstained"]
    assert all(r["judge"]["model"] == "computed" and not r["cached"] for r in records)
    stored = VerdictCache(cache)
    assert len(stored) == 0  # nothing cached: cheaper to recompute than to look up
    stored.close()
    figures = json.loads(summary.read_text())
    assert figures["mrr"] == pytest.approx((1 + 0.5) / 2) and figures["status"]["abstained"] == 1
    assert figures["recall_at_1"] == pytest.approx((1 + 0) / 2)
    assert figures["by_slice"]["s"]["hit_at_1"] == 1.0
    # a rerun resumes (nothing to do) and a model judge still sends nothing
    assert main(args, env=env) == 0 and openai_server.stats.requests == 0


def test_batch_export_refuses_it_and_import_computes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", rag_rows())
    env = {"JUDGE_MODEL": "m", "OPENAI_API_KEY": "sk-x"}
    requests = tmp_path / "req.jsonl"
    code = main(
        ["grade", str(source), "--rubric", "retrieval", "--export-batch", str(requests)], env=env
    )
    assert code == 2 and "nothing to batch" in capsys.readouterr().err
    assert not requests.exists()
    results, out = tmp_path / "results.jsonl", tmp_path / "out.jsonl"
    results.write_text("")
    args = ["grade", str(source), "--rubric", "retrieval", "--import-batch", str(results)]
    assert main([*args, "-o", str(out)], env=env) == 0
    assert [r["status"] for r in read_jsonl(out)] == ["ok", "ok", "abstained"]


@pytest.mark.parametrize("probe", ["injection", "verbosity", "repeat"])
def test_probes_refuse_it_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], probe: str
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", rag_rows())
    code = main(
        ["probe", probe, str(source), "--rubric", "retrieval", "-o", str(tmp_path / "p.json")]
    )
    assert code == 2
    assert "computed from the cases alone" in capsys.readouterr().err
