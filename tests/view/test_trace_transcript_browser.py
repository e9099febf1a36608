"""From an agent trace to a transcript a person reads, in a real headless Chromium: `judge
traces pull` turns the shipped OTLP JSON agent trace into one conversation case with its
tool calls in order; `judge grade` records it; `judge view` shows the case as a transcript
whose calls are in the trace's order, and `judge label` shows the same transcript, blind.

Marked `browser`: deselected by default, run by .ci/browser (`python -m pytest -m browser`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from tests.helpers import REPO
from tests.label_support import LabelServer
from tests.view.test_view_browser import ViewServer, playwright_api

pytestmark = pytest.mark.browser
expect = playwright_api.expect
TRACE = REPO / "examples" / "traces" / "agent.otlp.jsonl"
RUBRICS = REPO / "examples" / "traces" / "rubrics"


@pytest.fixture(scope="module")
def pulled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """run/cases.jsonl pulled from the trace, and run/agent-goal.jsonl graded from it."""
    run = tmp_path_factory.mktemp("trace-run") / "run"
    run.mkdir()
    cases = run / "cases.jsonl"
    pull = ["traces", "pull", "--otlp", str(TRACE), "--as", "conversations", "-o", str(cases)]
    assert main(pull) == 0
    grade = ["grade", str(cases), "--rubric", "agent-goal", "--rubrics-dir", str(RUBRICS)]
    assert main([*grade, "--offline", "-o", str(run / "agent-goal.jsonl")]) == 0
    return cases


def first_agent_case(cases: Path) -> dict[str, Any]:
    rows = [json.loads(line) for line in cases.read_text().splitlines()]
    return next(r for r in rows if any(m.get("tool_calls") for m in r["messages"]))


def tool_names(case: dict[str, Any]) -> list[str]:
    return [c["function"]["name"] for m in case["messages"] for c in m.get("tool_calls") or []]


def test_the_pulled_case_holds_the_tool_calls_in_the_traces_order(pulled: Path) -> None:
    case = first_agent_case(pulled)
    assert tool_names(case) == ["search_flights", "book_flight"]
    answered = [m["tool_call_id"] for m in case["messages"] if m["role"] == "tool"]
    assert answered == ["call_search", "call_book"]


def test_the_viewer_and_the_label_app_show_its_transcript(
    browser: Any, pulled: Path, tmp_path: Path
) -> None:
    case = first_agent_case(pulled)
    env = {**os.environ, "JUDGE_VIEW_INDEX": str(tmp_path / "index"), "WORK": str(tmp_path)}
    viewer = ViewServer(str(pulled.parent), "--rubrics-dir", str(RUBRICS), env=env)
    page = browser.new_page(viewport={"width": 1200, "height": 1000})
    try:
        page.goto(viewer.url)
        page.locator("#runs a", has_text="agent-goal@1").click()
        page.locator("#records a", has_text=case["id"]).click()
        calls = page.locator("#transcript .messages .tool-call")
        expect(calls).to_have_count(2)
        assert [calls.nth(i).get_attribute("data-tool") for i in range(2)] == tool_names(case)
        expect(page.locator("#goal")).to_contain_text(case["goal"])
    finally:
        page.close()
        viewer.stop()
    db = tmp_path / "labels.sqlite"
    args = (str(pulled), "--rubric", "agent-goal", "--rubrics-dir", str(RUBRICS), "--db", str(db))
    server = LabelServer(*args, "--annotator", "ana").start()
    page = browser.new_page(viewport={"width": 1100, "height": 1000})
    try:
        page.goto(server.url)
        rows = {r["id"]: r for r in map(json.loads, pulled.read_text().splitlines())}
        seen_calls = []
        for done in range(1, len(rows) + 1):  # every case, in the order the page gives
            conversation = page.locator("#conversation")
            expect(conversation.locator(".messages > li.msg").first).to_be_visible()
            wanted = tool_names(rows[page.locator("#case-id").inner_text()])
            calls = conversation.locator(".messages .tool-call")
            expect(calls).to_have_count(len(wanted))
            shown = [calls.nth(i).get_attribute("data-tool") for i in range(len(wanted))]
            assert shown == wanted
            seen_calls += shown
            expect(page.locator("#choices button")).to_have_count(5)
            page.keyboard.press("3")
            expect(page.locator("#counts")).to_contain_text(f"You: {done} labelled")
        assert seen_calls.count("book_flight") >= 1
    finally:
        page.close()
        server.stop()
