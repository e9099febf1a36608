"""The grade report's summary table (no raw JSON in a cell) and `--html` on a pass of
several rubrics (`judge grade --rubric retrieval,faithfulness,... --html`): each rubric's
summary, and the two-by-two with each cell's cases listed. The jury's report is in
tests/e2e/test_jury_report.py."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from judge.cli import main
from tests.engine.test_report_html import assert_self_contained
from tests.helpers import REPO

RAG = REPO / "examples" / "rag"
CELLS = ("retriever_broken", "generator_broken", "both_broken", "healthy")


def cells_of(html: str) -> list[list[str]]:
    """Every table cell's text, row by row."""
    rows = re.findall(r"<tr>(.*?)</tr>", html)
    return [[unescape(c) for c in re.findall(r"<t[dh]>(.*?)</t[dh]>", row)] for row in rows]


def test_the_summary_table_shows_figures_not_json(tmp_path: Path) -> None:
    """The `run` figures of a summary (what this run kept, graded, sent) were one cell of
    raw JSON; a kind's figures by name (pairwise `win_rates`) too."""
    records, html = tmp_path / "p.jsonl", tmp_path / "p.html"
    args = ["grade", str(REPO / "examples" / "pairs.jsonl"), "--rubric", "pairwise"]
    assert (
        main(
            [*args, "-o", str(records), "--html", str(html), "--summary", str(tmp_path / "s.json")],
            env={},
        )
        == 0
    )
    summary = json.loads((tmp_path / "s.json").read_text("utf-8"))
    assert isinstance(summary["run"], dict) and isinstance(summary["win_rates"], dict)
    text = html.read_text("utf-8")
    table = text.split("<h2>Summary</h2>")[1].split("</table>")[0]
    cells = cells_of(table)
    assert not any(c.startswith("{") for row in cells for c in row)
    head = cells[0]
    assert "run" not in head and "win rates: A" in head
    assert cells[1][head.index("win rates: A")] == f"{summary['win_rates']['A']:.3f}"
    assert f"<dt>graded this run</dt><dd>{summary['run']['graded']}</dd>" in text


@pytest.fixture(scope="module")
def rag_pass(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("rag")
    html = folder / "rag.html"
    args = ["grade", str(RAG / "cases.jsonl"), "--rubric", "retrieval,faithfulness,correctness"]
    summary = folder / "summary.json"
    assert (
        main(
            [*args, "-o", str(folder / "out"), "--summary", str(summary), "--html", str(html)],
            env={},
        )
        == 0
    )
    return html, json.loads(summary.read_text("utf-8"))


def test_a_rag_pass_report_has_each_rubric_and_the_two_by_two(rag_pass: tuple[Path, dict]) -> None:
    html, summary = rag_pass
    text = html.read_text("utf-8")
    assert_self_contained(text)
    for ref in summary["rubrics"]:
        assert f"<h2>{ref}</h2>" in text
    assert "recall at 5" in text  # a retrieval figure, by name
    grid = text.split("<h2>Two-by-two</h2>")[1].split("</table>")[0]
    diagnosis = summary["diagnosis"]
    for cell in CELLS:
        assert (
            f"{diagnosis['cells'][cell]['count']} ({diagnosis['cells'][cell]['rate']:.0%})" in grid
        )
        assert f'<a href="#{cell}">' in grid  # the cell links to its cases below
    for cell in CELLS:  # each cell's cases, one section each, every id listed
        part = text.split(f'<h3 id="{cell}">')[1].split("<h3")[0]
        listed = re.findall(r"<strong>([^<]+)</strong>", part)
        assert listed == diagnosis["cells"][cell]["ids"]
    unclassified = text.split('<h3 id="unclassified">')[1]
    assert all(i in unclassified for i in diagnosis["unclassified_ids"])
    assert "question" in text and "judge's reasons (faithfulness@1)" in text  # text, reasons


def test_a_pass_without_both_signals_says_so(tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    args = ["grade", str(REPO / "examples" / "cases.jsonl"), "--rubric", "faithfulness,relevance"]
    assert main([*args, "-o", str(tmp_path / "out"), "--html", str(html)], env={}) == 0
    text = html.read_text("utf-8")
    assert_self_contained(text)
    assert "<h2>faithfulness@1</h2>" in text and "<h2>relevance@1</h2>" in text
    assert "no two-by-two" in text
