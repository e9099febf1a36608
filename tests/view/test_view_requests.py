"""The viewer's requests under issue 45 (items 13, 20, 21, 26, 27, 28) and issue 46 item 6,
on held-out variants: huge offsets and long searches; glob characters in a records file's
name; symlinks planted in the label folder;
records with no label; runs of different rubrics; the Holm family of `judge compare`;
answers, histograms and runs that appear while served. Never a 500."""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.app.compare import compare_systems
from judge.app.requests import CompareRequest
from judge.cli import main
from judge.rubric import RubricLibrary
from judge.view import open_viewer
from tests.view.defects import AUTH, bounded, listed, one_line_error, record, run_file, serve
from tests.view.defects import viewer_of as viewer_of  # the fixture
from tests.view.support import CASES, grade, read_jsonl, write_jsonl

# ---- item 13: huge offsets, long searches -------------------------------------------------------


@pytest.fixture(scope="module")
def one_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str]]:
    root = tmp_path_factory.mktemp("one")  # real claims and rationales: a real vocabulary
    write_jsonl(root / "cases.jsonl", read_jsonl(CASES))
    grade(root / "cases.jsonl", root / "faithfulness.jsonl")
    viewer = open_viewer([root], index_dir=root / "idx")
    client = serve(viewer)
    yield client, next(iter(listed(client).values()))["id"]
    viewer.engine.close()


@pytest.mark.parametrize("offset", [2**63, 2**63 + 17, 10**30])
def test_an_offset_past_any_run_is_a_400_with_its_reason(
    one_run: tuple[TestClient, str], offset: int
) -> None:
    client, run = one_run
    response = client.get(f"/api/runs/{run}/records?offset={offset}", headers=AUTH)
    assert response.status_code == 400
    assert "offset" in one_line_error(response)


@pytest.mark.parametrize(
    "words",
    [
        " ".join(chr(ord("a") + i % 26) + chr(ord("a") + i // 26) for i in range(260)),
        " ".join(chr(ord("a") + i % 26) for i in range(200)),
        " ".join("x" for _ in range(300)),
        "-".join("q" + str(i % 10) for i in range(240)),
    ],
)
def test_a_search_of_hundreds_of_short_words_is_bounded(
    one_run: tuple[TestClient, str], words: str
) -> None:
    client, run = one_run
    response = bounded(
        lambda: client.get(f"/api/runs/{run}/records", params={"q": words}, headers=AUTH)
    )
    if response.status_code != 200:
        assert response.status_code == 400 and "search" in one_line_error(response)


# ---- item 20: glob characters in a name ---------------------------------------------------------


@pytest.mark.parametrize("name", ["run*.jsonl", "r?n1.jsonl", "run[1].jsonl", "x*y?z.parquet"])
def test_a_name_with_glob_characters_is_read_as_itself(
    tmp_path: Path, viewer_of: Callable[..., TestClient], name: str
) -> None:
    root = tmp_path / "runs"
    run_file(root / "run1.jsonl", 7)
    run_file(root / "runz.jsonl", 5)
    target = root / name
    if name.endswith(".parquet"):
        jsonl = root / "graded.jsonl"
        code = main(["grade", str(CASES), "--rubric", "faithfulness", "-o", str(jsonl),
                     "--parquet", str(target), "--offline"])  # fmt: skip
        assert code == 0
        expected = len(read_jsonl(CASES))
    else:
        run_file(target, 3)
        expected = 3
    runs = listed(viewer_of(root))
    assert runs[name]["n"] == expected
    assert runs["run1.jsonl"]["n"] == 7


# ---- item 21: symlinks planted in the label folder ----------------------------------------------


@pytest.mark.parametrize("planted", ["cases.jsonl", "labels.sqlite", "labels.sqlite-journal"])
def test_label_these_never_writes_through_a_planted_symlink(
    tmp_path: Path, viewer_of: Callable[..., TestClient], planted: str
) -> None:
    root = tmp_path / "runs"
    run_file(root / "faithfulness.jsonl", 4)
    cases = [
        {"id": f"case-{i:03d}", "question": "q?", "contexts": ["c."], "answer": "a."}
        for i in range(4)
    ]
    write_jsonl(root / "cases.jsonl", cases)
    label_dir = tmp_path / "sets"
    label_dir.mkdir()
    client = viewer_of(root, label_dir=label_dir)
    run = listed(client)["faithfulness.jsonl"]["id"]
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim"
    victim.write_text("keep me\n")
    for number in (1, 2):  # the names the next two sets would take
        (label_dir / f"{run}-{number}.{planted}").symlink_to(
            victim if number == 1 else outside / "new-file"
        )
    response = client.post("/api/label", json={"run": run, "ids": ["case-001"]}, headers=AUTH)
    assert response.status_code == 200, response.text  # a set of a free number
    written = Path(response.json()["cases"])
    assert not written.is_symlink() and written.parent == label_dir
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert victim.read_text() == "keep me\n"
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]


# ---- item 26: records with no label -------------------------------------------------------------


def test_records_with_no_label_are_reachable_from_the_facet_and_the_confusion_cell(
    tmp_path: Path, viewer_of: Callable[..., TestClient]
) -> None:
    root = tmp_path / "runs"
    rows = [record(f"k{i}") for i in range(5)]
    rows += [record(f"n{i}", status="abstained", score=None, label=None) for i in range(3)]
    rows += [record("e0", status="parse_error", score=None, label=None)]
    root.mkdir()
    write_jsonl(root / "faithfulness.jsonl", rows)
    labels = tmp_path / "labels.csv"
    labels.write_text("id,label\nn0,abstained\nn1,abstained\nk0,faithful\nn2,faithful\n")
    client = viewer_of(root, labels=labels)
    run = listed(client)["faithfulness.jsonl"]["id"]

    def ids(**params: Any) -> list[str]:
        response = client.get(f"/api/runs/{run}/records", params=params, headers=AUTH)
        assert response.status_code == 200, response.text
        return [r["id"] for r in response.json()["records"]]

    facets = client.get(f"/api/runs/{run}/records", headers=AUTH).json()["facets"]
    assert facets["label"]["null"] == 4
    assert ids(label="null") == ["n0", "n1", "n2", "e0"]
    matrix = client.get(f"/api/runs/{run}/confusion", headers=AUTH).json()
    cell = matrix["matrix"][matrix["labels"].index("abstained")][
        matrix["labels"].index("abstained")
    ]
    assert cell == 2
    assert ids(human_label="abstained", judged="abstained") == ["n0", "n1"]
    assert ids(human_label="faithful", judged="abstained") == ["n2"]


# ---- item 27: runs of different rubrics; the base named -----------------------------------------


def test_runs_of_different_rubrics_are_not_compared(
    tmp_path: Path, viewer_of: Callable[..., TestClient]
) -> None:
    root = tmp_path / "runs"
    run_file(root / "a" / "faithfulness.jsonl", 9)
    run_file(root / "b" / "relevance.jsonl", 9, rubric="relevance", score=0.25)
    client = viewer_of(root)
    runs = listed(client)
    a, b = runs["faithfulness.jsonl"]["id"], runs["relevance.jsonl"]["id"]
    response = client.get("/api/compare", params={"base": a, "candidate": b}, headers=AUTH)
    message = one_line_error(response)
    assert "faithfulness" in message and "relevance" in message


def test_a_comparison_names_its_base(tmp_path: Path, viewer_of: Callable[..., TestClient]) -> None:
    root = tmp_path / "runs"
    run_file(root / "a" / "faithfulness.jsonl", 9)
    run_file(root / "b" / "faithfulness.jsonl", 9, score=0.5, label="unfaithful")
    client = viewer_of(root)
    ids = {r["path"]: r["id"] for r in client.get("/api/runs", headers=AUTH).json()}
    a, b = ids[str(root / "a" / "faithfulness.jsonl")], ids[str(root / "b" / "faithfulness.jsonl")]
    result = client.get("/api/compare", params={"base": a, "candidate": b}, headers=AUTH).json()
    assert result["base"] == a
    assert result["base_path"] == str(root / "a" / "faithfulness.jsonl")


# ---- issue 46 item 6: the Holm family of judge compare ------------------------------------------


def test_the_viewers_p_values_are_judge_compares_for_the_same_passes(
    tmp_path: Path, viewer_of: Callable[..., TestClient]
) -> None:
    cases = read_jsonl(CASES)[:30]
    changed = [c | {"answer": c["answer"] + " It costs 77 dollars."} if i % 3 else c
               for i, c in enumerate(cases)]  # fmt: skip
    passes = []
    for name, rows in (("before", cases), ("after", changed)):
        folder = tmp_path / "runs" / name
        source = write_jsonl(tmp_path / f"{name}.jsonl", rows)
        rubrics = "faithfulness,relevance"
        assert (
            main(["grade", str(source), "--rubric", rubrics, "-o", str(folder), "--offline"]) == 0
        )
        passes.append(folder)
    request = CompareRequest(
        runs=tuple(passes), json=None, alpha=0.05, resamples=2000, seed=0, metric=(),
        fail_if=(), from_tool=None, rubrics_dir=(),
    )  # fmt: skip
    expected = compare_systems(request, RubricLibrary()).result["metrics"]
    client = viewer_of(tmp_path / "runs")
    ids = {r["path"]: r["id"] for r in client.get("/api/runs", headers=AUTH).json()}
    base, candidate = (ids[str(p / "faithfulness.jsonl")] for p in passes)
    result = client.get("/api/compare", params={"base": base, "candidate": candidate}, headers=AUTH)
    got = {m["name"]: m for m in result.json()["metrics"]}
    assert set(got) == set(expected)
    for name, entry in expected.items():
        assert got[name]["p"] == pytest.approx(entry["p_adjusted"], abs=1e-12)
        assert got[name]["p_value"] == pytest.approx(entry["p_value"], abs=1e-12)


# ---- item 28: answers and reasoning, histograms, new runs without a restart --------------------


def test_records_carry_their_answers_and_runs_their_score_histogram(
    tmp_path: Path, viewer_of: Callable[..., TestClient]
) -> None:
    root = tmp_path / "runs"
    scores = [0.0, 0.05, 0.5, 0.55, 0.95, 1.0, 1.0]
    root.mkdir()
    write_jsonl(
        root / "faithfulness.jsonl", [record(f"h{i}", score=s) for i, s in enumerate(scores)]
    )
    write_jsonl(root / "cases.jsonl", [{"id": f"h{i}", "question": "q?", "answer": f"answer {i}"}
                                       for i in range(len(scores))])  # fmt: skip
    client = viewer_of(root)
    run = listed(client)["faithfulness.jsonl"]
    histogram = run["histogram"]
    assert sum(histogram["counts"]) == len(scores)
    assert len(histogram["counts"]) == len(histogram["edges"]) - 1
    assert histogram["counts"][0] == 2 and histogram["counts"][-1] == 3
    page = client.get(f"/api/runs/{run['id']}/records", headers=AUTH).json()
    assert page["answers"] == {f"h{i}": f"answer {i}" for i in range(len(scores))}


def test_a_new_run_in_a_watched_folder_appears_without_a_restart(
    tmp_path: Path, viewer_of: Callable[..., TestClient]
) -> None:
    root = tmp_path / "runs"
    run_file(root / "first" / "faithfulness.jsonl", 3)
    client = viewer_of(root)
    before = client.get("/api/runs", headers=AUTH).json()
    run_file(root / "second" / "relevance.jsonl", 6, rubric="relevance")
    after = {r["path"]: r for r in client.get("/api/runs", headers=AUTH).json()}
    assert after[str(root / "second" / "relevance.jsonl")]["n"] == 6
    assert {r["id"] for r in before} <= {r["id"] for r in after.values()}


def test_label_these_serves_the_sets_labelling_page(tmp_path: Path) -> None:
    """The viewer's `open_labelling` (judge.app.view_label): the set's page is served, with
    its own token, until the viewer closes."""
    import httpx

    from judge.app.view_label import LabelPages

    root = tmp_path / "runs"
    run_file(root / "faithfulness.jsonl", 3)
    cases = [
        {"id": f"case-{i:03d}", "question": "q?", "contexts": ["c."], "answer": "a."}
        for i in range(3)
    ]
    write_jsonl(root / "cases.jsonl", cases)
    pages = LabelPages("127.0.0.1", RubricLibrary())
    viewer = open_viewer(
        [root], index_dir=tmp_path / "idx", label_dir=tmp_path / "sets", open_labelling=pages.open
    )
    try:
        client = serve(viewer)
        run = listed(client)["faithfulness.jsonl"]["id"]
        response = client.post("/api/label", json={"run": run, "ids": ["case-002"]}, headers=AUTH)
        assert response.status_code == 200, response.text
        url = response.json()["url"]
        assert bounded(lambda: httpx.get(url, timeout=30)).status_code == 200
        assert bounded(lambda: httpx.get(url.split("?")[0], timeout=30)).status_code == 401
    finally:
        pages.close()
        viewer.engine.close()
