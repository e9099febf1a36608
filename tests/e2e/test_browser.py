"""In a real headless Chromium (the OS package, driven by Playwright): labelling by
keyboard only, blind; and the HTML reports opening offline with nothing failed, no console
error and no script from a case running.

Marked `browser` and deselected by default; `.ci/run` installs chromium and runs
`python -m pytest -m browser`. Set JUDGE_SCREENSHOT_DIR to keep a copy of the screenshots.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from tests.engine.test_report_html import EXAMPLES, SCRIPT, hostile_cases
from tests.label_support import CASES, MARKER, SCORE, LabelServer, secret_records

pytestmark = pytest.mark.browser
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
KEYS = {"1": "faithful", "2": "unfaithful", "3": "abstained"}

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]'")
expect = playwright_api.expect


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set CHROMIUM)")
    with playwright_api.sync_playwright() as p:
        # --no-sandbox: CI containers run as root, where Chromium's sandbox cannot start
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


class Watch:
    """Every response body, console error and failed request of one page."""

    def __init__(self, page: Any, *, bodies: bool = True) -> None:
        self.bodies: list[str] = []
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("requestfailed", lambda r: self.errors.append(f"failed: {r.url}"))
        page.on(
            "response",
            lambda r: self.errors.append(f"{r.status}: {r.url}") if r.status >= 400 else None,
        )
        if bodies:  # http only: a report is a file:// page and loads nothing
            page.route("**/*", self._record)

    def _record(self, route: Any) -> None:
        # Fetch through the route so every body is kept, even those of pages reloaded since.
        response = route.fetch()
        self.bodies.append(response.text())
        route.fulfill(response=response)


def cli(*args: str) -> int:
    """`judge ...` in a worker thread: Playwright's sync API keeps an event loop running in
    this one, and the commands start their own with asyncio.run."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(main, list(args)).result()


def keep(screenshot: Path, name: str) -> None:
    folder = os.environ.get("JUDGE_SCREENSHOT_DIR")
    if folder:
        shutil.copyfile(screenshot, Path(folder) / name)


def _press_label(page: Any, key: str, done: int) -> str:
    case_id = page.locator("#case-id").inner_text()
    page.keyboard.press(key)
    expect(page.locator("#counts")).to_contain_text(f"You: {done} labelled")
    return case_id


def test_labelling_by_keyboard_is_blind_and_exports_what_was_given(
    browser: Any, tmp_path: Path
) -> None:
    records = secret_records(CASES, tmp_path / "graded.jsonl")
    db = tmp_path / "labels.sqlite"
    args = (str(CASES), "--rubric", "faithfulness", "--records", str(records), "--db", str(db))
    server = LabelServer(*args, "--sample", "5", "--seed", "11").start()
    page = browser.new_page(viewport={"width": 1100, "height": 1000})
    watch = Watch(page)
    given: dict[str, str] = {}
    try:
        page.goto(server.url)
        expect(page.locator("#name")).to_be_focused()
        page.keyboard.type("ana")
        page.keyboard.press("Enter")
        expect(page.locator("#case")).to_be_visible()
        for done, key in enumerate("12", 1):
            given[_press_label(page, key, done)] = KEYS[key]
        third = _press_label(page, "3", 3)
        page.keyboard.press("u")  # undo the third: it comes back, with its label marked
        expect(page.locator("#case-id")).to_have_text(third)
        expect(page.locator("#counts")).to_contain_text("You: 2 labelled")
        given[_press_label(page, "1", 3)] = "faithful"
        page.reload()
        expect(page.locator("#counts")).to_contain_text("You: 3 labelled, 2 left")
        page.keyboard.press("n")
        page.keyboard.type("claim 2 <b>not</b> in the contexts")
        page.keyboard.press("Escape")
        given[_press_label(page, "2", 4)] = "unfaithful"
        shot = tmp_path / "label.png"
        page.screenshot(path=str(shot), full_page=True)
        keep(shot, "label-screenshot.png")
        given[_press_label(page, "3", 5)] = "abstained"
        expect(page.locator("#done")).to_be_visible()
        html = page.content()
    finally:
        page.close()
        server.stop()
    out = tmp_path / "labels.csv"
    assert cli("label", "export", "--db", str(db), "-o", str(out)) == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert {r["id"]: r["label"] for r in rows} == given and len(given) == 5
    assert [r["note"] for r in rows if r["note"]] == ["claim 2 <b>not</b> in the contexts"]
    traffic = "\n".join([html, *watch.bodies])
    assert len(watch.bodies) >= 10  # page, script, style, icon and every API call
    assert MARKER not in traffic and str(SCORE) not in traffic
    assert watch.errors == []


def _open_report(browser: Any, path: Path, shot: Path) -> tuple[Any, Watch]:
    page = browser.new_page(viewport={"width": 1200, "height": 1400})
    watch = Watch(page, bodies=False)
    page.goto(path.as_uri())
    page.screenshot(path=str(shot), full_page=False)
    return page, watch


def test_reports_open_offline_with_no_error_and_no_case_script_running(
    browser: Any, tmp_path: Path
) -> None:
    cases = hostile_cases(tmp_path / "cases.jsonl")
    records, grade = tmp_path / "graded.jsonl", tmp_path / "grade.html"
    assert (
        cli(
            "grade",
            str(cases),
            "--rubric",
            "faithfulness",
            "-o",
            str(records),
            "--html",
            str(grade),
        )
        == 0
    )
    calibrate = tmp_path / "calibrate.html"
    human = EXAMPLES / "human_labels.csv"
    assert (
        cli(
            "calibrate",
            str(records),
            str(human),
            "-o",
            str(tmp_path / "c"),
            "--html",
            str(calibrate),
            "--cases",
            str(cases),
        )
        == 0
    )
    probe = tmp_path / "probe.html"
    assert (
        cli(
            "probe",
            "verbosity",
            str(cases),
            "--rubric",
            "faithfulness",
            "-o",
            str(tmp_path / "v.json"),
            "--html",
            str(probe),
        )
        == 0
    )

    page, watch = _open_report(browser, grade, tmp_path / "grade.png")
    keep(tmp_path / "grade.png", "report-screenshot.png")
    evil = page.locator("details.case", has_text="evil-001").first
    answer = evil.locator("p.text", has_text="The trial lasts 99 days.")
    expect(answer).to_be_visible()
    expect(answer).to_have_text(f"The trial lasts 99 days. {SCRIPT}")  # the markup, as text
    evil.screenshot(path=str(tmp_path / "case.png"))
    keep(tmp_path / "case.png", "report-case-screenshot.png")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("svg").count() >= 12
    assert watch.errors == []
    page.close()
    for path in (calibrate, probe):
        page, watch = _open_report(browser, path, tmp_path / f"{path.stem}.png")
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.locator("svg").count() >= 1
        assert watch.errors == [], path.name
        page.close()


def test_reports_show_what_they_claim_in_the_browser(browser: Any, tmp_path: Path) -> None:
    """Issue 28: the histogram's last bin reads 1.0 and holds the perfect scores; the
    calibration report shows AC1, alpha and the corrected pass rate, as report.md does."""
    records, grade = tmp_path / "graded.jsonl", tmp_path / "grade.html"
    source = str(EXAMPLES / "cases.jsonl")
    assert (
        cli("grade", source, "--rubric", "faithfulness", "-o", str(records), "--html", str(grade))
        == 0
    )
    calibrate = tmp_path / "calibrate.html"
    human = str(EXAMPLES / "human_labels.csv")
    assert (
        cli("calibrate", str(records), human, "-o", str(tmp_path / "c"), "--html", str(calibrate))
        == 0
    )

    page, watch = _open_report(browser, grade, tmp_path / "grade.png")
    first = page.locator("figure svg").first  # all cases' histogram: ten bins
    labels = first.locator("text").all_text_contents()
    assert labels[-1] == "0.9–1.0"
    perfect = sum(json.loads(line)["score"] == 1.0 for line in records.read_text().splitlines())
    assert labels[-2] == str(perfect)  # the count above the last bin
    assert watch.errors == []
    page.close()

    page, watch = _open_report(browser, calibrate, tmp_path / "calibrate.png")
    heading = page.get_by_role("heading", name="Agreement", exact=True)
    agreement = page.locator("section").filter(has=heading)
    for name in ("Gwet's AC1", "Krippendorff's alpha", "corrected pass rate (Rogan-Gladen)"):
        expect(agreement.get_by_text(name, exact=False).first).to_be_visible()
    assert watch.errors == []
    page.close()
