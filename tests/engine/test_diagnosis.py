"""The two-by-two diagnosis: hand-made records counted into the four cells overall and per
slice, the rule that picks among several rubrics of one signal, thresholds from the kind
and from the flags, and a pass through the command whose counts equal a hand count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.engine.diagnosis import CELLS, SignalSource, diagnose, signal_sources
from judge.rubric import RubricLibrary, load_rubric
from tests.helpers import REPO
from tests.rag_support import recorded_kinds, with_metadata, write_rubrics

__all__ = ["recorded_kinds"]

R1 = SignalSource("recall@1", "retrieval", 0.5)
R2 = SignalSource("ctx@1", "retrieval", 0.7)
G1 = SignalSource("faith@1", "generation", 1.0)


def rec(score: float | None, status: str = "ok") -> dict[str, Any]:
    return {"status": status, "score": score}


def test_hand_made_records_land_in_their_cells() -> None:
    rows = [
        ("a", ["billing"], {"recall@1": rec(1.0), "faith@1": rec(1.0)}),  # healthy
        ("b", ["billing"], {"recall@1": rec(0.5), "faith@1": rec(0.5)}),  # generator (0.5 = high)
        ("c", ["returns"], {"recall@1": rec(0.0), "faith@1": rec(1.0)}),  # retriever
        ("d", ["returns"], {"recall@1": rec(0.2), "faith@1": rec(0.0)}),  # both
        ("e", [], {"recall@1": rec(0.0), "faith@1": rec(0.99)}),  # both
        ("f", ["billing"], {"recall@1": rec(1.0), "faith@1": rec(None, "parse_error")}),
    ]
    out = diagnose(rows, {"retrieval": [R1], "generation": [G1]})
    counts = {name: cell["count"] for name, cell in out["cells"].items()}
    assert counts == {"retriever_broken": 1, "generator_broken": 1, "both_broken": 2, "healthy": 1}
    assert out["cells"]["both_broken"]["ids"] == ["d", "e"]
    assert out["cells"]["both_broken"]["rate"] == pytest.approx(2 / 5)
    assert (out["classified"], out["unclassified"], out["unclassified_ids"]) == (5, 1, ["f"])
    billing = out["by_slice"]["billing"]
    assert billing["classified"] == 2 and billing["unclassified"] == 1
    assert billing["cells"]["healthy"] == {"count": 1, "rate": 0.5}
    assert out["by_slice"]["returns"]["cells"]["retriever_broken"]["count"] == 1
    for name, (retrieval, generation, meaning) in CELLS.items():
        cell = out["cells"][name]
        assert (cell["retrieval"], cell["generation"], cell["meaning"]) == (
            retrieval,
            generation,
            meaning,
        )
    assert "retriever" in CELLS["both_broken"][2] and "first" in CELLS["both_broken"][2]


def test_the_first_listed_rubric_that_scored_the_case_gives_the_signal() -> None:
    rows = [
        ("a", [], {"recall@1": rec(1.0), "ctx@1": rec(0.0), "faith@1": rec(1.0)}),
        ("b", [], {"recall@1": rec(None, "abstained"), "ctx@1": rec(0.0), "faith@1": rec(1.0)}),
        ("c", [], {"recall@1": rec(None, "abstained"), "ctx@1": rec(0.8), "faith@1": rec(1.0)}),
    ]
    out = diagnose(rows, {"retrieval": [R1, R2], "generation": [G1]})
    assert out["cells"]["healthy"]["ids"] == ["a", "c"]  # a by recall, c by context relevance
    assert out["cells"]["retriever_broken"]["ids"] == ["b"]
    assert out["signals"]["retrieval"] == [
        {"rubric": "recall@1", "threshold": 0.5, "cases": 1},
        {"rubric": "ctx@1", "threshold": 0.7, "cases": 2},
    ]
    assert "first rubric listed" in out["rule"]
    swapped = diagnose(rows, {"retrieval": [R2, R1], "generation": [G1]})
    assert swapped["cells"]["retriever_broken"]["ids"] == ["a", "b"]


def test_signals_and_thresholds_come_from_the_kinds(recorded_kinds: None, tmp_path: Path) -> None:
    folder = write_rubrics(
        tmp_path / "mine",
        {"recall": "test_recorded_retrieval", "grounded": "test_recorded_generation"},
    )
    library = RubricLibrary([folder])
    rubrics = [library.load("grounded"), load_rubric("faithfulness"), library.load("recall")]
    rubrics.append(load_rubric("relevance"))  # no signal: not in the table
    sources = signal_sources(rubrics)
    assert sources["retrieval"] == [SignalSource("recall@1", "retrieval", 0.5)]
    assert sources["generation"] == [
        SignalSource("grounded@1", "generation", 0.8),
        SignalSource("faithfulness@1", "generation", 1.0),
    ]
    moved = signal_sources(rubrics, {"generation": 0.6, "retrieval": None})
    assert [s.threshold for s in moved["generation"]] == [0.6, 0.6]
    assert moved["retrieval"][0].threshold == 0.5


# A hand count: (recall, grounded) per case with the kinds' thresholds 0.5 and 0.8
HAND = {
    "healthy": ["c01", "c05", "c08"],
    "retriever_broken": ["c02", "c07"],
    "generator_broken": ["c03", "c06", "c09"],
    "both_broken": ["c04"],
}
RECALL = [1.0, 0.0, 0.5, 0.4, 0.9, 1.0, 0.49, 0.5, 0.75, 1.0]
GROUNDED = [0.8, 0.9, 0.79, 0.1, 1.0, 0.0, 0.95, 0.8, 0.5, None]
SLICES = [["a"], ["a"], ["b"], ["a", "b"], ["b"], ["a"], ["b"], ["a"], ["b"], ["a"]]


@pytest.fixture
def pass_setup(recorded_kinds: None, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    folder = write_rubrics(
        tmp_path / "mine",
        {"recall": "test_recorded_retrieval", "grounded": "test_recorded_generation"},
    )
    rows = [{"id": f"c{i:02d}", "question": "q?", "slices": SLICES[i - 1]} for i in range(1, 11)]
    cases = tmp_path / "cases.jsonl"
    rows = with_metadata(rows, recall=RECALL, grounded=GROUNDED)
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return cases, {"JUDGE_RUBRICS_DIR": str(folder)}


def test_a_pass_counts_the_cells_as_a_hand_count(
    pass_setup: tuple[Path, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases, env = pass_setup
    summary = tmp_path / "summary.json"
    args = ["grade", str(cases), "--rubric", "grounded,recall", "-o", str(tmp_path / "out")]
    assert main([*args, "--summary", str(summary)], env=env) == 0
    diagnosis = json.loads(summary.read_text("utf-8"))["diagnosis"]
    for name, ids in HAND.items():
        assert diagnosis["cells"][name]["ids"] == ids
        assert diagnosis["cells"][name]["count"] == len(ids)
    assert diagnosis["unclassified_ids"] == ["c10"]  # no grounded score: abstained
    a = diagnosis["by_slice"]["a"]["cells"]
    assert {n: c["count"] for n, c in a.items()} == {
        "retriever_broken": 1,
        "generator_broken": 1,
        "both_broken": 1,
        "healthy": 2,
    }
    assert diagnosis["signals"]["generation"] == [
        {"rubric": "grounded@1", "threshold": 0.8, "cases": 9}
    ]
    out = capsys.readouterr().out
    assert "two-by-two diagnosis" in out and "retriever broken: 2 (22%)" in out
    assert "healthy: 3 (33%)" in out and "ids: c02, c07" in out


def test_the_flags_move_the_thresholds_and_gates_read_the_cells(
    pass_setup: tuple[Path, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases, env = pass_setup
    summary = tmp_path / "summary.json"
    args = ["grade", str(cases), "--rubric", "recall,grounded", "-o", str(tmp_path / "out")]
    flags = ["--retrieval-threshold", "0.95", "--generation-threshold", "0.5"]
    assert main([*args, *flags, "--summary", str(summary)], env=env) == 0
    cells = json.loads(summary.read_text("utf-8"))["diagnosis"]["cells"]
    # recall >= 0.95: c01 c06; grounded >= 0.5: c01 c02 c03 c05 c07 c08 c09
    assert cells["healthy"]["ids"] == ["c01"]
    assert cells["generator_broken"]["ids"] == ["c06"]
    assert cells["retriever_broken"]["ids"] == ["c02", "c03", "c05", "c07", "c08", "c09"]
    assert cells["both_broken"]["ids"] == ["c04"]
    gate = ["--fail-if", "diagnosis.cells.retriever_broken.rate > 0.5"]
    assert main([*args, *flags, *gate], env=env) == 3
    assert "gate: diagnosis.cells.retriever_broken.rate > 0.5: 0.666667 -> failed" in (
        capsys.readouterr().err
    )
    assert main([*args, "--fail-if", "diagnosis.cells.healthy.count < 3"], env=env) == 0


RAG = REPO / "examples" / "rag" / "cases.jsonl"
# The hand count: each case of examples/rag/cases.jsonl was written for one cell (its id
# says which, and its README); retrieval from the ids, context relevance on the four cases
# with no ids labelled, faithfulness for generation.
RAG_CELLS = {
    "healthy": [f"h0{i}" for i in range(1, 10)],
    "generator_broken": [f"g0{i}" for i in range(1, 6)],
    "retriever_broken": [f"r0{i}" for i in range(1, 6)],
    "both_broken": [f"b0{i}" for i in range(1, 6)],
}


def test_the_rag_example_set_counts_as_the_hand_count(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    args = ["grade", str(RAG), "--rubric", "retrieval,context_relevance,faithfulness"]
    assert main([*args, "-o", str(tmp_path / "out"), "--summary", str(summary)], env={}) == 0
    diagnosis = json.loads(summary.read_text("utf-8"))["diagnosis"]
    assert {n: c["ids"] for n, c in diagnosis["cells"].items()} == RAG_CELLS
    assert (diagnosis["classified"], diagnosis["unclassified"]) == (24, 0)
    assert diagnosis["signals"]["retrieval"] == [
        {"rubric": "retrieval@1", "threshold": 0.5, "cases": 20},
        {"rubric": "context_relevance@1", "threshold": 0.5, "cases": 4},  # h07 g05 r05 b05
    ]
    assert diagnosis["signals"]["generation"] == [
        {"rubric": "faithfulness@1", "threshold": 1.0, "cases": 24}
    ]
    by_slice: dict[str, dict[str, int]] = {}
    for line in RAG.read_text("utf-8").splitlines():
        case = json.loads(line)
        cell = next(n for n, ids in RAG_CELLS.items() if case["id"] in ids)
        assert case["metadata"]["designed_cell"] == cell
        for name in case["slices"]:
            by_slice.setdefault(name, dict.fromkeys(RAG_CELLS, 0))[cell] += 1
    got = {
        name: {cell: group["cells"][cell]["count"] for cell in RAG_CELLS}
        for name, group in diagnosis["by_slice"].items()
    }
    assert got == by_slice and sum(map(len, RAG_CELLS.values())) == 24
