"""The labelling app over HTTP (in process): token, headers, blindness, queues, undo,
skips, several annotators, pairwise order, and the export `judge calibrate` reads."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from judge.cli import main
from judge.label.app import CSP, LabelSession, create_label_app
from judge.label.choices import label_choices, shown_order
from judge.label.export import export_labels
from judge.label.labelset import LabelPlan, open_label_store
from judge.label.queue import Queues
from judge.rubric import load_rubric
from tests.helpers import REPO
from tests.label_support import CASES, MARKER, PAIRS, SCORE, ThreadServer, secret_records

# the label app over HTTP, a durable store committing each answer (.ci/slow runs it)
pytestmark = pytest.mark.slow

TOKEN = "t0ken-for-tests"


@contextmanager
def _client(db: Path, plan: LabelPlan, annotator: str | None = None) -> Iterator[httpx.Client]:
    store = open_label_store(db, plan)
    rubric = plan.rubric
    queues = Queues(store, plan.seed)
    session = LabelSession(
        rubric, label_choices(rubric), store, queues, plan.seed, TOKEN, annotator
    )
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with (
        ThreadServer(create_label_app(session)) as server,
        httpx.Client(base_url=server.base, headers=headers, timeout=30) as client,
    ):
        yield client
    store.close()


@pytest.fixture
def faithful(tmp_path: Path) -> Iterator[httpx.Client]:
    records = secret_records(CASES, tmp_path / "graded.jsonl")
    plan = LabelPlan(CASES, load_rubric("faithfulness"), records, sample=12, seed=5, overlap=0.25)
    with _client(tmp_path / "l.sqlite", plan) as client:
        yield client


def _post(client: httpx.Client, path: str, body: dict) -> dict:
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def _label(client: httpx.Client, who: str, choice: str | None, note: str = "") -> tuple[str, dict]:
    state = client.get("/api/state", params={"annotator": who}).json()
    case_id = state["item"]["case_id"]
    body = {"annotator": who, "case_id": case_id, "choice": choice, "note": note}
    return case_id, _post(client, "/api/answer", body)


def test_every_request_needs_the_token(faithful: httpx.Client) -> None:
    assert faithful.get("/", headers={"Authorization": ""}).status_code == 401
    assert faithful.get("/?token=wrong", headers={"Authorization": ""}).status_code == 401
    assert faithful.get("/api/state", headers={"Authorization": "Bearer nope"}).status_code == 401
    page = faithful.get(f"/?token={TOKEN}", headers={"Authorization": ""})
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CSP
    assert page.headers["referrer-policy"] == "no-referrer"
    assert "http" not in page.text.replace('"http-equiv"', "")  # no CDN, no external font
    assert faithful.get("/docs").status_code == 401 or faithful.get("/docs").status_code == 404


def test_nothing_the_judge_said_reaches_the_page(faithful: httpx.Client) -> None:
    bodies = [faithful.get(f"/?token={TOKEN}").text]
    bodies += [faithful.get(f"/static/{n}").text for n in ("label.js", "label.css", "favicon.svg")]
    for i in range(14):
        case_id, state = _label(faithful, "ana", ["faithful", "unfaithful", None][i % 3])
        bodies.append(json.dumps(state))
    bodies.append(json.dumps(_post(faithful, "/api/undo", {"annotator": "ana"})))
    text = "\n".join(bodies)
    assert MARKER not in text
    assert str(SCORE) not in text and "0.1234" not in text
    assert "judge-x" not in text  # not even the judge's name


def test_queue_undo_and_skips(faithful: httpx.Client) -> None:
    first, state = _label(faithful, "ana", "faithful", note="first")
    assert state["progress"]["labelled"] == 1
    skipped, state = _label(faithful, "ana", None)
    assert state["progress"]["skipped"] == 1
    undone = _post(faithful, "/api/undo", {"annotator": "ana"})
    assert undone["item"]["case_id"] == skipped  # undoing a skip brings the case back
    second, state = _label(faithful, "ana", "unfaithful")
    assert second == skipped
    undone = _post(faithful, "/api/undo", {"annotator": "ana"})
    assert undone["item"]["case_id"] == second
    assert undone["previous"] == {"choice": "unfaithful", "note": ""}
    assert undone["progress"]["labelled"] == 1


def test_skipped_cases_come_back_at_the_end(tmp_path: Path) -> None:
    plan = LabelPlan(CASES, load_rubric("relevance"), sample=3, seed=1)
    with _client(tmp_path / "l.sqlite", plan) as client:
        skipped, _ = _label(client, "bo", None)
        a, _ = _label(client, "bo", "5")
        b, state = _label(client, "bo", "4")
        assert state["item"]["case_id"] == skipped and skipped not in (a, b)
        _, state = _label(client, "bo", "3")
        assert state["item"] is None and state["progress"]["left"] == 0


def test_two_annotators_share_the_work_and_the_overlap(faithful: httpx.Client) -> None:
    done: dict[str, list[str]] = {"ana": [], "bo": []}
    for turn in range(40):
        who = ("ana", "bo")[turn % 2]
        state = faithful.get("/api/state", params={"annotator": who}).json()
        if state["item"] is None:
            continue
        case_id, _ = _label(faithful, who, "faithful")
        done[who].append(case_id)
    both = set(done["ana"]) & set(done["bo"])
    assert len(both) == 3  # round(0.25 * 12) overlap cases, each labelled by both
    assert len(set(done["ana"]) | set(done["bo"])) == 12
    final = faithful.get("/api/state", params={"annotator": "ana"}).json()["progress"]
    assert final["complete_items"] == 12 and final["labels_given"] == 15
    assert final["waiting_for_others"] == 0


def test_the_counter_says_which_cases_wait_for_a_second_annotator(
    faithful: httpx.Client,
) -> None:
    """One annotator alone: their queue empties while the overlap cases still need someone
    else; the counter says so instead of leaving '9 of 12 complete' unexplained."""
    while (state := faithful.get("/api/state", params={"annotator": "ana"}).json())["item"]:
        _label(faithful, "ana", "faithful")
    progress = state["progress"]
    assert progress["left"] == 0 and progress["complete_items"] == 9
    assert progress["waiting_for_others"] == 3  # round(0.25 * 12) overlap cases
    script = (REPO / "judge" / "label" / "static" / "label.js").read_text("utf-8")
    assert "p.waiting_for_others" in script and "another annotator" in script


def test_bad_answers_are_refused(faithful: httpx.Client) -> None:
    state = faithful.get("/api/state", params={"annotator": "ana"}).json()
    body = {"annotator": "ana", "case_id": state["item"]["case_id"], "choice": "maybe"}
    assert faithful.post("/api/answer", json=body).status_code == 422
    body = {"annotator": "ana", "case_id": "no-such-case", "choice": "faithful"}
    assert faithful.post("/api/answer", json=body).status_code == 404
    body = {"annotator": "<b>x</b>", "case_id": state["item"]["case_id"], "choice": "faithful"}
    assert faithful.post("/api/answer", json=body).status_code == 422


def test_pairwise_order_is_per_annotator_and_mapped_back(tmp_path: Path) -> None:
    plan = LabelPlan(PAIRS, load_rubric("pairwise"), seed=9)
    pairs = {json.loads(line)["id"]: json.loads(line) for line in PAIRS.read_text().splitlines()}
    orders = set()
    with _client(tmp_path / "p.sqlite", plan) as client:
        for _ in range(len(pairs)):
            state = client.get("/api/state", params={"annotator": "ana"}).json()
            item = state["item"]
            order = shown_order(9, "ana", item["case_id"])
            orders.add(order)
            pair = pairs[item["case_id"]]
            expected = [pair["answer_a"], pair["answer_b"]][:: 1 if order == "ab" else -1]
            assert item["answers"] == expected
            _post(
                client,
                "/api/answer",
                {"annotator": "ana", "case_id": item["case_id"], "choice": "first"},
            )
    assert orders == {"ab", "ba"}  # 14 fair coins: both orders occur
    out = tmp_path / "pairs.csv"
    export_labels(tmp_path / "p.sqlite", out)
    rows = list(csv.DictReader(out.open()))
    for row in rows:  # "first" is A when A was shown first, else B
        assert row["label"] == ("A" if row["shown_order"] == "ab" else "B")


def test_stratified_sample_keeps_inclusion_probabilities(
    faithful: httpx.Client, tmp_path: Path
) -> None:
    for _ in range(12):
        _label(faithful, "ana", "faithful")
    out = tmp_path / "labels.csv"
    assert main(["label", "export", "--db", str(tmp_path / "l.sqlite"), "-o", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0]) == [
        "id",
        "label",
        "annotator",
        "note",
        "labelled_at",
        "inclusion_probability",
    ]
    weights = sum(1 / float(r["inclusion_probability"]) for r in rows)
    assert weights == pytest.approx(43)  # Horvitz-Thompson: the sample stands for all 43 cases


def test_export_is_what_calibrate_reads(faithful: httpx.Client, tmp_path: Path) -> None:
    for turn in range(30):
        who = ("ana", "bo")[turn % 2]
        if faithful.get("/api/state", params={"annotator": who}).json()["item"]:
            _label(faithful, who, ["faithful", "unfaithful"][turn % 3 % 2])
    out = tmp_path / "labels.csv"
    export_labels(tmp_path / "l.sqlite", out)
    report = tmp_path / "cal"
    code = main(["calibrate", str(tmp_path / "graded.jsonl"), str(out), "-o", str(report)])
    assert code == 0
    result = json.loads((report / "calibration.json").read_text())
    assert sorted(result["inter_annotator"]["annotators"]) == ["ana", "bo"]
    assert result["n"] == 12 and result["excluded"]["human"] == {}  # ties kept, settled by rule


def test_export_needs_a_store(tmp_path: Path, capsys) -> None:
    assert main(["label", "export", "--db", str(tmp_path / "none.sqlite"), "-o", "x.csv"]) == 2
    (tmp_path / "junk.sqlite").write_text("not a database")
    assert main(["label", "export", "--db", str(tmp_path / "junk.sqlite"), "-o", "x.csv"]) == 2
    assert main(["label", "export"]) == 2
    assert "--db" in capsys.readouterr().err


def test_a_preset_annotator_and_only_the_inputs_the_rubric_judges(tmp_path: Path) -> None:
    plan = LabelPlan(CASES, load_rubric("relevance"), sample=2, seed=4)
    with _client(tmp_path / "r.sqlite", plan, annotator="cy") as client:
        state = client.get("/api/state").json()
        assert state["annotator"] == "cy"
        assert [c["name"] for c in state["choices"]] == ["1", "2", "3", "4", "5"]
        item = state["item"]
        assert item["contexts"] == [] and len(item["answers"]) == 1  # relevance: question, answer
        assert set(item) == {"case_id", "question", "contexts", "answers"}  # no metadata


def test_records_that_miss_cases_are_refused(tmp_path: Path, capsys) -> None:
    records = tmp_path / "graded.jsonl"
    secret_records(CASES, records)
    records.write_text("\n".join(records.read_text().splitlines()[:5]) + "\n")
    args = ["label", str(CASES), "--rubric", "faithfulness", "--records", str(records)]
    assert main([*args, "--db", str(tmp_path / "x.sqlite"), "--sample", "5"]) == 2
    assert "38 cases of the input have no record here" in capsys.readouterr().err
    assert not (tmp_path / "x.sqlite").exists()  # nothing created from bad input
