"""`judge view` in a real headless Chromium (the OS package, driven by Playwright), reached
by clicking only: runs list -> comparison -> a regressed case -> its evidence; a confusion
cell -> its cases; "label these" -> a `judge label` set. No console error, no failed
request. Screenshots go to $JUDGE_SCREENSHOTS (else build/screenshots/), for a person.

Marked `browser`: deselected by default, run by .ci/browser (`python -m pytest -m browser`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, ChildProcess
from tests.view.support import Runs, make_runs, read_jsonl

pytestmark = pytest.mark.browser
SHOTS = Path(os.environ.get("JUDGE_SCREENSHOTS") or REPO / "build" / "screenshots")
playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]'")
expect = playwright_api.expect
expect.set_options(timeout=60_000)  # the first page builds each run's index (a shared CI box)


class ViewServer(ChildProcess):
    """`python -m judge.cli view ... --port 0`; the URL is read from the line it prints once
    its socket listens."""

    def __init__(self, *args: str, env: dict[str, str]) -> None:
        command = [sys.executable, "-m", "judge.cli", "view", *args, "--port", "0"]
        self.work = Path(env["WORK"])
        self.proc = subprocess.Popen(
            command, cwd=env["WORK"], env=env, stderr=subprocess.PIPE, text=True
        )
        assert self.proc.stderr is not None
        self.log: list[str] = []
        for line in self.proc.stderr:
            self.log.append(line)
            match = re.search(r"open (http://\S+)", line)
            if match:
                self.url = match[1]
                threading.Thread(target=self._drain, daemon=True).start()
                return
        raise RuntimeError(f"judge view exited without its URL: {''.join(self.log)}")

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    # in a worker thread: Playwright's sync API may already run an event loop in this one,
    # and grading starts its own with asyncio.run
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(make_runs, tmp_path_factory.mktemp("browser") / "runs").result()


@pytest.fixture(scope="module")
def server(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewServer]:
    work = tmp_path_factory.mktemp("work")
    env = {**os.environ, "JUDGE_VIEW_INDEX": str(work / "index"), "WORK": str(work)}
    started = ViewServer(str(runs.root), "--labels", str(runs.labels), env=env)
    yield started
    started.stop()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: errors.append(f"failed: {r.url}"))
    yield page
    page.close()
    assert errors == []


def shoot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"view-{name}.png"), full_page=True)


def row_of(page: Any, path: Path) -> Any:
    return page.locator("#runs tbody tr").filter(has_text=f"{path.parent.name}/{path.name}")


def test_runs_to_comparison_to_regressed_case_to_its_evidence(
    page: Any, server: ViewServer, runs: Runs
) -> None:
    base = {r["id"]: r for r in read_jsonl(runs.base)}
    candidate = {r["id"]: r for r in read_jsonl(runs.candidate)}
    page.goto(server.url)
    expect(page.locator("#runs tbody tr")).to_have_count(4)
    shoot(page, "runs")
    row_of(page, runs.base).locator("input[type=checkbox]").check()
    row_of(page, runs.candidate).locator("input[type=checkbox]").check()
    page.locator("#compare").click()
    expect(page.locator("#metrics")).to_contain_text("faithfulness.score")
    shoot(page, "compare")
    first = page.locator("#regressed a").first
    case_id = first.inner_text()
    assert candidate[case_id]["score"] < base[case_id]["score"]  # a real regression
    first.click()
    expect(page.locator("#base h1, #base h2").first).to_contain_text("base")
    # the evidence: the base's supported claims have their evidence highlighted in the
    # contexts, and the candidate's unsupported claim is marked in its answer
    evidence = page.locator("#base mark.evidence")
    expect(evidence.first).to_be_visible()
    expected = next(c["evidence"] for c in base[case_id]["verdict"]["claims"] if c["evidence"])
    assert expected in page.locator("#base .contexts").inner_text()
    flagged = page.locator("#candidate #answer .claim.not_enough_information")
    expect(flagged.first).to_be_visible()
    # provenance as the record holds it: the rules judge sets no temperature nor seed
    provenance = page.locator("#base #provenance")
    expect(provenance).to_contain_text("temperature")
    assert "null" not in provenance.inner_text()
    expect(provenance.locator("tr", has_text="seed")).to_contain_text("not recorded")
    shoot(page, "regressed-case")


def test_confusion_cell_to_its_cases(page: Any, server: ViewServer, runs: Runs) -> None:
    page.goto(server.url)
    row_of(page, runs.base).get_by_role("link", name="confusion").click()
    cell = page.locator('#confusion a[data-cell="faithful|unfaithful"]')
    count = int(cell.inner_text())
    shoot(page, "confusion")
    cell.click()
    expect(page.locator("#records tbody tr")).to_have_count(count)
    for label in page.locator("#records tbody tr td:nth-child(5)").all_inner_texts():
        assert label == "unfaithful"
    shoot(page, "confusion-cell")


def test_label_these_puts_the_selected_cases_in_a_label_set(
    page: Any, server: ViewServer, runs: Runs
) -> None:
    page.goto(server.url)
    row_of(page, runs.base).get_by_role("link", name=re.compile("faithfulness@1")).click()
    page.locator('.facets [data-facet="human"] button[data-value="disagree"]').click()
    # the filtered page has replaced the first one once its facet shows as chosen
    expect(page.locator('.facets [data-facet="human"] button.on')).to_have_attribute(
        "data-value", "disagree"
    )
    rows = page.locator("#records tbody tr")
    expect(rows.first).to_be_visible()
    chosen = [rows.nth(i).get_attribute("data-id") for i in range(min(2, rows.count()))]
    for case_id in chosen:
        page.locator(f'#records input[data-id="{case_id}"]').check()
    with page.expect_popup() as opened:  # the set's labelling page, served by the viewer
        page.locator("#label-these").click()
    labelling = opened.value
    expect(labelling.locator("#rubric")).to_contain_text("faithfulness")
    shoot(labelling, "label-these-page")
    labelling.close()
    expect(page.locator("#label-result")).to_contain_text(f"{len(chosen)} cases queued")
    expect(page.locator("#label-open")).to_be_visible()  # for a browser that blocks it
    shoot(page, "label-these")
    command = page.locator("#label-result code").inner_text().split()
    assert command[:2] == ["judge", "label"]
    cases_file = server.work / command[2]  # relative to the server's folder
    assert [c["id"] for c in read_jsonl(cases_file)] == chosen


def test_judge_serve_shows_its_jobs_at_slash(
    page: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`judge serve` with a token: the URL with `?token=` opens its job list, then the
    job's records, then a case."""
    from tests.helpers import case
    from tests.test_service_support import TOKEN, ServiceProcess, wait_for_job, write_config

    folder = tmp_path_factory.mktemp("serve")
    config = write_config(folder / "service.yaml", data_dir=str(folder / "data"), token=TOKEN)
    server = ServiceProcess(config).start(timeout=180)  # a loaded CI box starts slowly
    try:
        with server.client() as client:
            cases = [case("served-1"), case("served-2", answer="The trial lasts 40 days.")]
            job = client.post("/v1/jobs", json={"rubric": "faithfulness", "cases": cases})
            job_id = job.json()["id"]
            assert wait_for_job(client, job_id)["status"] == "done"
        page.goto(f"{server.base_url}/?token={TOKEN}")
        expect(page.locator("#runs tbody tr")).to_have_count(1)
        expect(page.locator("#runs tbody tr")).to_contain_text(job_id)
        shoot(page, "serve-jobs")
        page.get_by_role("link", name=re.compile("faithfulness@1")).click()
        expect(page.locator("#records tbody tr")).to_have_count(2)
        page.locator("#records tbody tr a").first.click()
        expect(page.locator("#provenance")).to_contain_text("not recorded")
        shoot(page, "serve-case")
    finally:
        server.stop()


# ---- issue 45: items 22, 26, 27, 28 --------------------------------------------------------


def test_an_unknown_run_says_no_such_run(page: Any, server: ViewServer) -> None:
    page.goto(f"{server.url}#/run/faithfulness-0000dead")
    expect(page.locator("#error")).to_contain_text("no such run: faithfulness-0000dead")
    page.goto(f"{server.url}#/compare/nope-1/nope-2")
    expect(page.locator("#error")).to_contain_text("no such run: nope-1")


@pytest.fixture(scope="module")
def abstained_server(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewServer]:
    """The base run alone, with people's labels that call some abstained records
    `abstained` too, and one of them `faithful`."""
    work = tmp_path_factory.mktemp("work-abstained")
    labels = work / "people.csv"
    rows = read_jsonl(runs.base)
    abstained = [r["id"] for r in rows if r["status"] == "abstained"]
    ok = [r["id"] for r in rows if r["status"] == "ok"][:5]
    lines = [f"{i},abstained" for i in abstained[:-1]] + [f"{abstained[-1]},faithful"]
    labels.write_text("id,label\n" + "\n".join(lines + [f"{i},faithful" for i in ok]) + "\n")
    env = {**os.environ, "JUDGE_VIEW_INDEX": str(work / "index"), "WORK": str(work)}
    started = ViewServer(str(runs.base), "--labels", str(labels), env=env)
    yield started
    started.stop()


def test_records_with_no_label_are_reached_from_the_facet_and_the_confusion_cell(
    page: Any, abstained_server: ViewServer, runs: Runs
) -> None:
    rows = read_jsonl(runs.base)
    unlabelled = [r["id"] for r in rows if r["label"] is None]
    assert unlabelled
    page.goto(abstained_server.url)
    page.get_by_role("link", name=re.compile("faithfulness@1")).click()
    page.locator('.facets [data-facet="label"] button[data-value="null"]').click()
    expect(page.locator("#records tbody tr")).to_have_count(len(unlabelled))
    assert (
        page.locator("#records tbody tr").evaluate_all("rows => rows.map(r => r.dataset.id)")
        == unlabelled
    )
    expect(page.locator(".facets")).to_be_visible()  # the sidebar stays
    shoot(page, "label-null")
    page.goto(abstained_server.url)
    page.get_by_role("link", name="confusion").click()
    cell = page.locator('#confusion a[data-cell="abstained|abstained"]')
    count = int(cell.inner_text())
    assert count == len(unlabelled) - 1
    cell.click()
    expect(page.locator("#records tbody tr")).to_have_count(count)
    for status in page.locator("#records tbody tr td:nth-child(3)").all_inner_texts():
        assert status == "abstained"
    expect(page.locator(".facets")).to_be_visible()


def test_runs_of_different_rubrics_are_refused_and_a_comparison_names_its_base(
    page: Any, server: ViewServer, runs: Runs
) -> None:
    page.goto(server.url)
    row_of(page, runs.base).locator("input[type=checkbox]").check()
    row_of(page, runs.rag / "retrieval.jsonl").locator("input[type=checkbox]").check()
    page.locator("#compare").click()
    expect(page.locator("#error")).to_contain_text("runs of different rubrics are not compared")
    expect(page.locator("#metrics")).to_have_count(0)
    shoot(page, "compare-refused")
    page.goto(server.url)
    row_of(page, runs.candidate).locator("input[type=checkbox]").check()
    row_of(page, runs.base).locator("input[type=checkbox]").check()
    page.locator("#compare").click()
    expect(page.locator("#roles")).to_contain_text("base: faithfulness@1 · runs/candidate/")
    expect(page.locator("#roles")).to_contain_text(str(runs.candidate))
    expect(page.locator("#notes")).to_contain_text("Holm's correction over")


def test_records_show_answers_and_reasoning_and_runs_their_histogram(
    page: Any, server: ViewServer, runs: Runs
) -> None:
    cases = {c["id"]: c for c in read_jsonl(runs.cases)}
    page.goto(server.url)
    expect(row_of(page, runs.base).locator("svg.histogram rect")).to_have_count(10)
    row_of(page, runs.base).get_by_role("link", name=re.compile("faithfulness@1")).click()
    first = page.locator("#records tbody tr").first
    expect(first).to_be_visible()
    case_id = first.get_attribute("data-id")
    assert cases[case_id]["answer"][:40] in first.locator("td.answer").inner_text()
    assert first.locator("td.reasoning").inner_text().strip()
    shoot(page, "records-answers")


def test_a_run_graded_while_served_appears_on_the_runs_page(
    page: Any, server: ViewServer, runs: Runs
) -> None:
    """Last in this file: it adds a run to the served folder."""
    page.goto(server.url)
    rows = page.locator("#runs tbody tr")
    expect(rows.first).to_be_visible()
    before = rows.count()
    late = runs.root / "late" / "faithfulness.jsonl"
    late.parent.mkdir()
    late.write_bytes(runs.base.read_bytes())
    row_of(page, runs.base).get_by_role("link", name=re.compile("faithfulness@1")).click()
    expect(page.locator("#records")).to_be_visible()
    page.locator("#home").click()  # back to the runs page: no reload, no restart
    expect(rows).to_have_count(before + 1)
    expect(row_of(page, late)).to_contain_text("faithfulness@1")
