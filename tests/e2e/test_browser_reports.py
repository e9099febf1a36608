"""The compare, pass and jury reports in a real headless Chromium: they open offline with
no console error (their style sheet passes the Content-Security-Policy), a two-by-two cell
leads to its cases in one click, and a changed case shows its two records side by side.
Marked `browser`, as tests/e2e/test_browser.py (whose browser fixture this reuses)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from judge.testing.jurors import plant_panel, planted_truth, write_cases
from tests.e2e.test_browser import Watch, browser, cli, expect, keep
from tests.e2e.test_jury import LABELS, NAMES, Make, grade, start_jurors, write_jury
from tests.helpers import REPO

__all__ = ["browser"]
pytestmark = pytest.mark.browser
RAG = REPO / "examples" / "rag"


def open_report(browser: Any, path: Path, shot: Path) -> tuple[Any, Watch]:
    page = browser.new_page(viewport={"width": 1200, "height": 1000})
    watch = Watch(page, bodies=False)
    page.goto(path.as_uri())
    page.screenshot(path=str(shot), full_page=False)
    keep(shot, shot.name)
    return page, watch


def test_pass_and_compare_reports_in_the_browser(browser: Any, tmp_path: Path) -> None:
    rubrics = "retrieval,faithfulness,correctness"
    runs = {"baseline": RAG / "cases.jsonl", "reranked": RAG / "reranked.jsonl"}
    for name, cases in runs.items():
        html = str(tmp_path / f"{name}.html")
        assert (
            cli(
                "grade", str(cases), "--rubric", rubrics, "-o", str(tmp_path / name), "--html", html
            )
            == 0
        )
    report = tmp_path / "compare.html"
    assert (
        cli(
            "compare", str(tmp_path / "baseline"), str(tmp_path / "reranked"), "--html", str(report)
        )
        == 0
    )

    page, watch = open_report(browser, tmp_path / "baseline.html", tmp_path / "pass-report.png")
    page.get_by_role("link", name="retriever broken", exact=False).click()
    heading = page.locator("h3#retriever_broken")
    expect(heading).to_be_in_viewport()
    expect(page.locator("details.case", has_text="r01").first).to_be_visible()
    assert watch.errors == []
    page.close()

    page, watch = open_report(browser, report, tmp_path / "compare-report.png")
    case = page.locator("details.case", has_text="r01").first
    expect(case.locator(".pair > div")).to_have_count(2)  # A and B side by side
    sides = case.locator(".pair > div").all()
    assert sides[0].bounding_box()["y"] == sides[1].bounding_box()["y"]  # in one row
    assert page.locator("svg").count() >= 1
    assert watch.errors == []
    page.close()


def test_jury_report_in_the_browser(browser: Any, server_factory: Make, tmp_path: Path) -> None:
    truth = planted_truth(12, seed=5, id_format="c{:03d}")
    jurors = plant_panel(truth, LABELS, error_rates=[0.3, 0.3, 0.3], seed=6)
    servers = start_jurors(server_factory, jurors, NAMES)
    cases, out, html = (
        write_cases(tmp_path / "cases.jsonl", truth),
        tmp_path / "out",
        tmp_path / "j.html",
    )
    jury = write_jury(tmp_path / "jury.yaml", servers)
    with ThreadPoolExecutor(1) as pool:  # the command runs its own event loop: not in this one
        assert pool.submit(grade, tmp_path, jury, cases, out, "--html", str(html)).result() == 0
    page, watch = open_report(browser, html, tmp_path / "jury-report.png")
    expect(page.get_by_role("heading", name="Votes by case")).to_be_visible()
    assert (
        page.locator("section").filter(has_text="Votes by case").locator("tbody tr").count() == 12
    )
    assert watch.errors == []
    page.close()
