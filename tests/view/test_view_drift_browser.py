"""The drift page in a real headless Chromium (as tests/view/test_view_browser.py drives it),
on examples/drift, whose judge starts to disagree with people after its third window: the
runs list links the page, the chart shows one point per window with the alarms marked, and
clicking an alarmed window's point opens that window's disagreements, every row of which
disagrees with people's label.

Marked `browser`: deselected by default, run by .ci/browser (`python -m pytest -m browser`).
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import REPO
from tests.view.test_view_browser import ViewServer, expect, page, shoot  # noqa: F401

pytestmark = pytest.mark.browser
RECORDS = REPO / "examples" / "drift" / "graded.jsonl"
LABELS = REPO / "examples" / "drift" / "labels.csv"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewServer]:
    work = tmp_path_factory.mktemp("work")
    env = {**os.environ, "JUDGE_VIEW_INDEX": str(work / "index"), "WORK": str(work)}
    started = ViewServer(str(RECORDS), "--labels", str(LABELS), env=env)
    yield started
    started.stop()


def test_the_chart_marks_the_alarm_and_a_point_opens_its_disagreements(
    page: Any,  # noqa: F811
    server: ViewServer,
) -> None:
    judged = {r["id"]: r["label"] for r in map(json.loads, RECORDS.read_text().splitlines())}
    with LABELS.open(newline="") as handle:
        people = {row["id"]: row["label"] for row in csv.DictReader(handle)}
    page.goto(server.url)
    page.locator("#runs tbody tr a", has_text="drift").click()
    expect(page.locator("#drift-chart")).to_be_visible()  # by week: the records carry a time
    expect(page.locator("#drift-by")).to_have_value("week")
    page.locator("#drift-window").fill("60")
    page.locator("#drift-by").select_option("")
    page.locator("form.filters button").click()
    expect(page.locator("#drift-table tr[data-window='1']")).to_have_count(1)
    expect(page.locator("#drift-chart circle.point")).to_have_count(6)  # 360 labels, 60 each
    expect(page.locator("#drift-table tbody tr")).to_have_count(6)
    expect(page.locator("#drift-reference")).to_have_count(1)
    alarms = page.locator("#drift-chart circle.point.alarm")
    expect(alarms).to_have_count(3)
    assert [alarms.nth(i).get_attribute("data-window") for i in range(3)] == ["4", "5", "6"]
    expect(page.locator("#drift-status")).to_contain_text("alarm")
    shoot(page, "drift")
    expected = page.locator("#drift-table tr[data-window='4'] td a").inner_text()
    alarms.first.click()
    expect(page.locator("#records tbody tr")).to_have_count(int(expected))
    shown = page.locator("#records tbody tr").evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert shown and all(people[i] != judged[i] for i in shown)
    shoot(page, "drift-disagreements")


def test_against_the_past_each_window_shows_its_own_reference(
    page: Any,  # noqa: F811
    server: ViewServer,
) -> None:
    page.goto(server.url)
    page.locator("#runs tbody tr a", has_text="drift").click()
    expect(page.locator("#drift-chart")).to_be_visible()
    page.evaluate("location.hash = location.hash.split('?')[0] + '?by=week&reference=past'")
    expect(page.locator("main")).to_contain_text("each window against all the windows before it")
    page.locator("#drift-window").fill("60")
    page.locator("#drift-by").select_option("")
    page.locator("form.filters button").click()  # the form keeps the reference
    expect(page.locator("#drift-table tbody tr")).to_have_count(6)
    expect(page.locator("#drift-reference")).to_have_count(0)  # no one band: each its own
    expect(page.locator("#drift-chart line.past")).to_have_count(5)  # all but the first
    expect(page.locator("#drift-table tr[data-window='1']")).to_contain_text("reference")
    expect(page.locator("#drift-chart circle.point.alarm").first).to_have_attribute(
        "data-window", "4"
    )
    expect(page.locator("main")).to_contain_text("each window against all the windows before it")
    shoot(page, "drift-past")
