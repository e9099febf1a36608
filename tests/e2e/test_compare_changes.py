"""`judge compare`: the cases that regressed, improved and cannot be compared, in its JSON,
its Markdown and its `--html` report. Runs are generated with seeded scores (test kinds
that read them from the case; some cases abstain, some records are turned into parse
errors), and the expected lists are computed from those planted scores, not from the
records."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judge.cli import main
from judge.report.html import esc
from tests.e2e.test_compare_cli import compare, grade_run, write_cases
from tests.engine.test_report_html import SCRIPT, assert_self_contained
from tests.rag_support import recorded_kinds, write_rubrics

__all__ = ["recorded_kinds"]

N = 80
IDS = [f"q{i:03d}" for i in range(N)]
RUBRICS = ("recall", "grounded")
BROKEN = {"q005", "q017", "q042"}  # grounded records of B turned into parse errors


@pytest.fixture
def folder(tmp_path: Path, recorded_kinds: None) -> Path:
    kinds = {"recall": "test_recorded_retrieval", "grounded": "test_recorded_generation"}
    return write_rubrics(tmp_path / "mine", kinds)


def planted(rng: np.random.Generator) -> list[float | None]:
    """Scores on a coarse grid (ties happen) and about one case in ten abstaining."""
    return [None if rng.uniform() < 0.1 else float(rng.integers(0, 5)) / 4 for _ in IDS]


def break_records(path: Path, ids: set[str]) -> None:
    """Those ids' records become parse errors (no verdict, no score, the raw text kept)."""
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    for row in rows:
        if row["id"] in ids:
            row |= {"status": "parse_error", "verdict": None, "score": None, "label": None,
                    "error": "not JSON", "raw": "Sure! The answer is"}  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")


def add_rationale(path: Path, text: str) -> None:
    """Every scored record's verdict gets a rationale: text from a judge is untrusted."""
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    for row in rows:
        if row["verdict"] is not None:
            row["verdict"]["rationale"] = f"{text} on {row['id']}"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")


def expected(a: list[float | None], b: list[float | None], broken: set[str]) -> dict[str, Any]:
    """By hand: both sides scored (ok) and B lower / higher; the rest with statuses."""
    out: dict[str, Any] = {"regressed": set(), "improved": set(), "not_comparable": []}
    for case_id, x, y in zip(IDS, a, b, strict=True):
        status_b = "parse_error" if case_id in broken else ("abstained" if y is None else "ok")
        if x is None or status_b != "ok":
            out["not_comparable"].append(
                {"id": case_id, "a": "abstained" if x is None else "ok", "b": status_b}
            )
        elif y < x:  # type: ignore[operator]
            out["regressed"].add(case_id)
        elif y > x:  # type: ignore[operator]
            out["improved"].add(case_id)
    return out


@pytest.fixture
def runs(folder: Path, tmp_path: Path) -> dict[str, Any]:
    rng = np.random.default_rng(20261203)
    scores = {side: {r: planted(rng) for r in RUBRICS} for side in ("a", "b")}
    for side in ("a", "b"):
        cases = write_cases(tmp_path / f"{side}.jsonl", IDS, **scores[side])
        grade_run(cases, tmp_path / side.upper(), folder)
    break_records(tmp_path / "B" / "grounded.jsonl", BROKEN)
    add_rationale(tmp_path / "A" / "recall.jsonl", SCRIPT)
    return {
        r: expected(scores["a"][r], scores["b"][r], BROKEN if r == "grounded" else set())
        for r in RUBRICS
    }


def test_json_markdown_and_html_list_the_cases_that_fell_and_rose(
    folder: Path, tmp_path: Path, runs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out, html = tmp_path / "c.json", tmp_path / "c.html"
    args = [str(tmp_path / "A"), str(tmp_path / "B"), "--json", str(out), "--html", str(html)]
    assert compare(*args, folder=folder) == 0
    markdown = capsys.readouterr().out
    result = json.loads(out.read_text("utf-8"))
    for rubric_id, want in runs.items():
        assert {c["id"] for c in result["regressed"][rubric_id]} == want["regressed"]
        assert {c["id"] for c in result["improved"][rubric_id]} == want["improved"]
        assert result["not_comparable"][rubric_id] == want["not_comparable"]
        assert want["regressed"] and want["improved"]  # the planted runs move both ways
        for case in result["regressed"][rubric_id]:
            assert case["b"] < case["a"] and case["diff"] == pytest.approx(case["b"] - case["a"])
    assert any(c["b"] == "parse_error" for c in result["not_comparable"]["grounded"])
    first = result["comparisons"][0]
    for key in ("regressed", "improved", "not_comparable"):
        assert result[key] == first[key]  # the top level is the first comparison's, as metrics
    # existing keys are unchanged
    assert {"runs", "baseline", "metrics", "comparisons", "tests"} <= set(result)

    # Markdown: one line per rubric and list, with the count and the cases
    for rubric_id, want in runs.items():
        line = re.search(
            rf"^Regressed .*\n(?:- .*\n)*?- {rubric_id} \((\d+)\): (.*)$", markdown, re.M
        )
        assert line and int(line.group(1)) == len(want["regressed"])
        named = re.findall(r"(q\d{3}) \(", line.group(2))
        assert set(named) <= want["regressed"] and len(named) == min(20, len(want["regressed"]))
    assert "Improved (both runs ok" in markdown and "Not comparable" in markdown
    assert "q005 (ok, parse_error)" in markdown or "q005 (abstained, parse_error)" in markdown

    text = html.read_text("utf-8")
    assert_self_contained(text)
    for want in runs.values():
        for case_id in want["regressed"] | want["improved"]:
            assert f"<strong>{case_id}</strong>" in text
    assert "<h2>Regressed (" in text and "<h2>Improved (" in text
    assert 'class="grid pair"' in text and text.count("status in B") == 1
    assert "Sure! The answer is" not in text  # a not-comparable case is listed, not carded
    shown = result["regressed"]["recall"][0]["id"]
    assert esc(f"{SCRIPT} on {shown}") in text  # the rationale of A's record, as text
    assert "p (Holm)" in text and 'aria-label="paired differences"' in text


def test_metric_filter_keeps_the_lists_of_the_rubrics_it_keeps(
    folder: Path, tmp_path: Path, runs: dict[str, Any]
) -> None:
    out = tmp_path / "c.json"
    args = [str(tmp_path / "A"), str(tmp_path / "B"), "--metric", "recall.*", "--json", str(out)]
    assert compare(*args, folder=folder) == 0
    result = json.loads(out.read_text("utf-8"))
    assert set(result["regressed"]) == {"recall"} == set(result["improved"])


def test_html_of_a_comparison_refuses_to_overwrite_a_records_file(
    folder: Path, tmp_path: Path, runs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "A" / "recall.jsonl"
    before = target.read_bytes()
    args = ["compare", str(tmp_path / "A"), str(tmp_path / "B"), "--html", str(target)]
    assert main(args, env={"JUDGE_RUBRICS_DIR": str(folder)}) == 2
    assert target.read_bytes() == before and "--html" in capsys.readouterr().err
