"""The viewer under the defects of issue 45 (items 1, 2, 7, 10, 12, 13, 20, 21, 26, 27, 28)
and issue 46 item 6, on held-out variants: files that change, vanish or cannot be read
beside good runs; links to devices and FIFOs; deep nesting; huge offsets and long
searches; glob characters in names; symlinks planted in the label folder; records with
no label; runs of different rubrics; the Holm family of `judge compare`. Every answer is
a 2xx or a 4xx with one line, never a 500, and every good run is still served."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from fastapi.testclient import TestClient

from judge.app.compare import compare_systems
from judge.app.requests import CompareRequest
from judge.cli import main
from judge.rubric import RubricLibrary
from judge.view import create_view_app, open_viewer
from judge.view.viewer import Viewer
from tests.view.support import CASES, TOKEN, grade, read_jsonl, write_jsonl

AUTH = {"Authorization": f"Bearer {TOKEN}"}
BOUND_S = 120  # a hang is a failure, not a slow pass: far above any honest start-up


def record(
    case_id: str,
    *,
    rubric: str = "faithfulness",
    score: float | None = 1.0,
    status: str = "ok",
    label: str | None = "faithful",
) -> dict[str, Any]:
    return {
        "id": case_id, "rubric": rubric, "rubric_version": 1, "rubric_sha256": "0" * 64,
        "judge": {"model": "rules"}, "status": status, "verdict": None, "score": score,
        "label": label, "error": None, "raw": None, "cached": False,
        "usage": {"prompt_tokens": 1, "completion_tokens": 1}, "latency_ms": 1.0,
    }  # fmt: skip


def run_file(path: Path, n: int, **fields: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_jsonl(path, [record(f"case-{i:03d}", **fields) for i in range(n)])


def bounded(work: Callable[[], Any]) -> Any:
    """`work()` in a thread, failed if it has not returned within BOUND_S."""
    out: dict[str, Any] = {}

    def call() -> None:
        try:
            out["value"] = work()
        except BaseException as exc:  # re-raised here, in the test's thread
            out["error"] = exc

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(BOUND_S)
    assert not thread.is_alive(), "hung"
    if "error" in out:
        raise out["error"]
    return out["value"]


def serve(viewer: Viewer) -> TestClient:
    return TestClient(create_view_app(viewer, token=TOKEN), base_url="http://127.0.0.1")


def listed(client: TestClient) -> dict[str, dict[str, Any]]:
    response = client.get("/api/runs", headers=AUTH)
    assert response.status_code == 200, response.text
    return {Path(r["path"]).name: r for r in response.json()}


def one_line_error(response: Any) -> str:
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    message = response.json()["error"]["message"]
    assert "\n" not in message and "Traceback" not in message
    return str(message)


@pytest.fixture
def viewer_of(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    opened: list[Viewer] = []

    def make(*paths: Path, **options: Any) -> TestClient:
        viewer = bounded(lambda: open_viewer(list(paths), index_dir=tmp_path / "idx", **options))
        opened.append(viewer)
        return serve(viewer)

    yield make
    for viewer in opened:
        viewer.engine.close()


# ---- item 1: a records file that changes while served, with several runs --------------------


def test_a_run_that_grows_while_served_keeps_every_run_listed(
    tmp_path: Path, viewer_of: Callable[..., TestClient]
) -> None:
    files = [run_file(tmp_path / "runs" / f"p{i}" / f"r{i}.jsonl", 3 + i) for i in range(4)]
    client = viewer_of(tmp_path / "runs")
    assert {r["n"] for r in listed(client).values()} == {3, 4, 5, 6}
    for round_ in range(3):  # each file grows in turn: the resumed grade's appended line
        grown = files[round_ % 2]
        with grown.open("a") as handle:
            handle.write(json.dumps(record(f"more-{round_}")) + "\n")
        runs = listed(client)
        for file in files:
            assert runs[file.name]["n"] == len(read_jsonl(file))
            page = client.get(f"/api/runs/{runs[file.name]['id']}/records", headers=AUTH)
            assert page.json()["total"] == len(read_jsonl(file))


# ---- item 2: one unreadable file ----------------------------------------------------------------


def test_one_unreadable_file_is_listed_with_its_error_and_the_others_served(
    tmp_path: Path, viewer_of: Callable[..., TestClient]
) -> None:
    root = tmp_path / "runs"
    good = run_file(root / "good" / "faithfulness.jsonl", 5)
    write_jsonl(root / "good" / "cases.jsonl", [{"id": f"case-{i:03d}", "question": "q?",
                                                  "answer": "a."} for i in range(5)])  # fmt: skip
    with duckdb.connect() as db:  # the cases table `judge grade cases.parquet` leaves beside
        db.execute(
            f"COPY (SELECT 'c' || i AS id, 'q' AS question FROM range(4) t(i)) "
            f"TO '{root / 'good' / 'inputs.parquet'}' (FORMAT parquet)"
        )
    (root / "bad").mkdir()
    (root / "bad" / "garbage.parquet").write_bytes(b"PAR1" + os.urandom(300))
    valid = root / "bad" / "whole.parquet"
    with duckdb.connect() as db:
        db.execute(f"COPY (SELECT 1 AS id) TO '{valid}' (FORMAT parquet)")
    (root / "bad" / "truncated.parquet").write_bytes(valid.read_bytes()[:-9])
    huge = run_file(root / "huge" / "relevance.jsonl", 2)
    with huge.open("a") as handle:  # a line past DuckDB's 16 MiB object limit
        handle.write(json.dumps(record("huge") | {"raw": "x" * (19 << 20)}) + "\n")
    gone = run_file(root / "gone" / "faithfulness.jsonl", 4)
    client = viewer_of(root)
    runs = listed(client)
    assert runs["faithfulness.jsonl"]["n"] in (4, 5)
    gone.rename(tmp_path / "elsewhere.jsonl")  # moved away while served
    by_path = {r["path"]: r for r in client.get("/api/runs", headers=AUTH).json()}
    assert by_path[str(good)]["n"] == 5 and by_path[str(good)].get("error") is None
    assert "error" in by_path[str(gone)] and "\n" not in by_path[str(gone)]["error"]
    for path, entry in by_path.items():
        if path != str(good):
            assert entry.get("error"), entry  # every other file here is unreadable or not a run
        if entry.get("error"):
            one_line_error(client.get(f"/api/runs/{entry['id']}/records", headers=AUTH))
    page = client.get(f"/api/runs/{by_path[str(good)]['id']}/records", headers=AUTH)
    assert page.json()["total"] == 5
    inputs = str(root / "good" / "inputs.parquet")
    assert inputs not in by_path or by_path[inputs].get("error")


# ---- item 7: the index is private ---------------------------------------------------------------


def test_the_index_and_its_folders_are_private(tmp_path: Path) -> None:
    run_file(tmp_path / "runs" / "faithfulness.jsonl", 3)
    index = tmp_path / "cache" / "deeper" / "view-index"
    old = os.umask(0o022)
    try:
        viewer = open_viewer([tmp_path / "runs"], index_dir=index)
        listed(serve(viewer))
        viewer.engine.close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(index.stat().st_mode) == 0o700
    files = [p for p in index.rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


# ---- items 10 and 12: devices, FIFOs, deep nesting ---------------------------------------------


def test_links_to_devices_fifos_and_deep_nesting_are_passed_over(
    tmp_path: Path, viewer_of: Callable[..., TestClient]
) -> None:
    root = tmp_path / "runs"
    run_file(root / "pass" / "faithfulness.jsonl", 3)
    (root / "pass" / "endless.json").symlink_to("/dev/zero")
    (root / "pass" / "endless.jsonl").symlink_to("/dev/urandom")
    os.mkfifo(root / "pass" / "pipe.jsonl")
    os.mkfifo(root / "pass" / "summary.json")
    (root / "pass" / "deep.jsonl").write_text("[" * 60_000 + "]" * 60_000 + "\n")
    (root / "pass" / "deep.json").write_text('{"a":' * 40_000 + "1" + "}" * 40_000)
    client = viewer_of(root)
    runs = listed(client)
    assert runs["faithfulness.jsonl"]["n"] == 3
    assert {name for name, r in runs.items() if not r.get("error")} == {"faithfulness.jsonl"}


def test_a_fifo_given_as_the_path_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "records.jsonl"
    os.mkfifo(fifo)
    code = bounded(lambda: main(["view", str(fifo), "--port", "0"]))
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err


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
    cases = [{"id": f"case-{i:03d}", "question": "q?", "answer": "a."} for i in range(4)]
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
    if response.status_code == 200:
        written = Path(response.json()["cases"])
        assert not written.is_symlink() and written.parent == label_dir
        assert stat.S_IMODE(written.stat().st_mode) == 0o600
    else:
        one_line_error(response)
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
