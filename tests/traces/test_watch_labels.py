"""`judge watch --label-rate R --label-dir DIR`: a seeded share of what is graded queued for
people (blind, private, once only), labelled through the label app while it runs, read by
`judge drift`; and the live agreement and the labels waiting on /metrics."""

from __future__ import annotations

import asyncio
import http.client
import json
import math
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from judge.api import open_grader
from judge.app.watch_labels import LiveGauges, open_production_labels
from judge.cli import main
from judge.config import JudgeConfig
from judge.engine.metrics import GradingMetrics
from judge.label.app import LabelSession, create_label_app
from judge.label.choices import label_choices
from judge.label.production import (
    open_production_store,
    production_db,
    queued,
    reopen_production_store,
)
from judge.label.queue import Queues
from judge.label.sampling import Item
from judge.label.store import LabelStore
from judge.rubric import load_rubric
from judge.traces.mapping import TraceMapping
from judge.traces.metrics_http import serve_metrics
from judge.traces.sampling import Sampling
from judge.traces.sources import OtlpFileSource
from judge.traces.watch import WatchOptions, watch
from tests.label_support import ThreadServer
from tests.traces.test_watch import Traffic, _record_ids

TOKEN = "t0ken-for-watch-labels"
RUBRIC = load_rubric("faithfulness")


def _watch(traffic: Traffic, folder: Path, labels: Path, rate: str = "0.5") -> int:
    argv = ["watch", "--otlp", str(traffic.path), "--rubric", "faithfulness", "-o", str(folder)]
    return main([*argv, "--once", "--label-rate", rate, "--label-dir", str(labels)])


def _queued(labels: Path) -> list[str]:
    store = LabelStore(production_db(labels, RUBRIC))
    try:
        return [case_id for case_id, _ in store.outline()]
    finally:
        store.close()


def _truth(case_id: str, traffic: Traffic) -> str:
    """What a person says: even requests are faithful, odd ones contradict the context."""
    return "faithful" if traffic.ids.index(case_id) % 2 == 0 else "unfaithful"


@contextmanager
def _label_app(labels: Path) -> Iterator[httpx.Client]:
    """`judge label DIR`'s app over HTTP, on the watch's store."""
    store = reopen_production_store(production_db(labels, RUBRIC), RUBRIC)
    session = LabelSession(RUBRIC, label_choices(RUBRIC), store, Queues(store, 0), 0, TOKEN)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with (
            ThreadServer(create_label_app(session)) as server,
            httpx.Client(base_url=server.base, headers=headers, timeout=30) as client,
        ):
            yield client
    finally:
        store.close()


def _label_all(api: httpx.Client, traffic: Traffic, who: str = "ana") -> list[str]:
    """Label every case the app offers `who`, truthfully; the ids labelled."""
    done = []
    while (item := api.get("/api/state", params={"annotator": who}).json()["item"]) is not None:
        body = {"annotator": who, "case_id": item["case_id"]}
        body["choice"] = _truth(item["case_id"], traffic)
        assert api.post("/api/answer", json=body).status_code == 200
        done.append(item["case_id"])
    return done


def test_a_seeded_share_is_queued_once_blind_and_private(tmp_path) -> None:
    traffic = Traffic(tmp_path / "traces.jsonl")
    folder, labels = tmp_path / "watch", tmp_path / "labels"
    traffic.send(12)
    assert _watch(traffic, folder, labels) == 0
    saved = tmp_path / "checkpoint.before.json"
    shutil.copy(folder / "checkpoint.json", saved)
    traffic.send(12)
    assert _watch(traffic, folder, labels) == 0
    shutil.copy(saved, folder / "checkpoint.json")  # killed before its checkpoint: redone
    (folder / "faithfulness.jsonl").write_text("")  # ... and before its records were written
    assert _watch(traffic, folder, labels) == 0
    assert _record_ids(folder) == traffic.ids[12:]  # the second run's cases graded again
    expected = [i for i in traffic.ids if queued(0, i, 0.5)]
    assert 0 < len(expected) < len(traffic.ids)
    assert sorted(_queued(labels)) == sorted(expected)  # each once, none lost
    db = production_db(labels, RUBRIC)
    assert stat.S_IMODE(labels.stat().st_mode) == 0o700
    store = LabelStore(db)  # open: its -wal and -shm exist
    sidecars = [db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in [db, *sidecars])
    views = [item.view for item in store.items()]
    store.close()
    assert views and all(set(v) <= {"question", "contexts", "answer"} for v in views)
    text = db.read_bytes()
    assert b"supported" not in text and b"claims" not in text  # no verdict in the store


def test_the_label_sample_is_not_the_grading_sample() -> None:
    """Same seed: of the cases the watch samples at 0.3, about half are queued at 0.5 (one
    hash for both would queue every one of them)."""
    from judge.schemas import Case

    graded = [f"span-{n}" for n in range(4000) if Sampling(0.3).sampled(Case(id=f"span-{n}"))]
    share = sum(queued(0, i, 0.5) for i in graded) / len(graded)
    assert 0.45 < share < 0.55


def test_open_queues_offer_appended_items_after_what_was_there(tmp_path) -> None:
    """A set that grows under an open server: the new cases come after the old ones in
    each annotator's order, an undo of one puts it back, and counts follow."""
    store = open_production_store(tmp_path / "l", RUBRIC, rate=1.0, seed=0)
    views = [(Item(f"c{n}", 1.0), {"question": "q", "answer": f"a{n}"}) for n in range(6)]
    assert store.append_items(views[:3]) == 3
    queues = Queues(store, 0)
    offered = queues.next_item("ana")
    assert offered is not None and offered.case_id in {"c0", "c1", "c2"}
    assert store.append_items(views) == 3  # c0-c2 again: held already, not queued twice
    assert queues.progress("ana")["left"] == 6 and store.count_waiting() == 6
    for _ in range(3):
        item = queues.next_item("ana")
        assert item is not None and item.case_id in {"c0", "c1", "c2"}
        store.record("ana", item.case_id, label="faithful")
    late = queues.next_item("ana")
    assert late is not None and late.case_id in {"c3", "c4", "c5"}
    store.record("ana", late.case_id, label="faithful")
    store.undo("ana")
    assert queues.next_item("ana").case_id == late.case_id  # back at its place
    assert queues.progress("ana")["left"] == 3 and store.count_waiting() == 3
    store.append_items([(Item("c6", 1.0), {"question": "q", "answer": "a6"})])
    store.record("bo", "c6", label="faithful")  # answered before any request saw it
    assert queues.progress("ana")["left"] == 3 and store.count_waiting() == 3
    store.close()


def test_a_symlink_in_the_label_dir_is_refused(tmp_path, capsys) -> None:
    traffic = Traffic(tmp_path / "traces.jsonl")
    traffic.send(2)
    labels = tmp_path / "labels"
    labels.mkdir()
    target = tmp_path / "elsewhere.sqlite"
    target.write_bytes(b"")
    os.symlink(target, production_db(labels, RUBRIC))
    assert _watch(traffic, tmp_path / "watch", labels) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert target.read_bytes() == b""


@pytest.mark.slow  # 60 labels through HTTP, each fsynced, and drift's bootstrap: ~6 s
def test_labelled_while_the_app_runs_then_judge_drift_reads_the_store(tmp_path, capsys) -> None:
    """Queued by one watch, labelled through the app's API while a second watch appends
    (the open app offers the new cases), then `judge drift` on the records and the store."""
    traffic = Traffic(tmp_path / "traces.jsonl")
    folder, labels = tmp_path / "watch", tmp_path / "labels"
    traffic.send(30)
    assert _watch(traffic, folder, labels, rate="1") == 0
    with _label_app(labels) as api:
        first = _label_all(api, traffic)
        traffic.send(30)
        assert _watch(traffic, folder, labels, rate="1") == 0
        later = _label_all(api, traffic)
    assert len(first) == 30 and len(later) == 30 and not set(first) & set(later)
    capsys.readouterr()
    records = str(folder / "faithfulness.jsonl")
    code = main(["drift", records, "--labels", str(labels), "--window", "30", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report["status"]
    assert [w["n"] for w in report["windows"]] == [30, 30]
    assert report["windows"][0]["agreement"] == 1.0  # the rules judge agrees with people here


def _scrape(port: int) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/metrics", headers={"Host": f"127.0.0.1:{port}"})
        response = connection.getresponse()
        assert response.status == 200
        return response.read().decode()
    finally:
        connection.close()


def _gauge(text: str, name: str) -> float:
    line = next(x for x in text.splitlines() if x.startswith(f'{name}{{rubric="faithfulness"}}'))
    return float(line.rsplit(" ", 1)[1])


def _poll(traffic: Traffic, folder: Path, labels: Path, served: Served) -> None:
    """One poll of a watch queueing everything it grades, its gauges served."""
    source = OtlpFileSource(traffic.path, TraceMapping(), ("question", "answer", "contexts"))
    queue = open_production_labels(
        labels, RUBRIC, folder / "faithfulness.jsonl", rate=1.0, seed=0, metrics=None, say=print
    )
    queue.gauges = served.gauges
    options = WatchOptions(
        once=True, metrics=served.metrics, on_graded=queue.graded, on_poll=queue.polled
    )

    async def run() -> None:
        async with open_grader(JudgeConfig(), RUBRIC) as grader:
            await watch(source, grader, folder, options)

    try:
        asyncio.run(run())
    finally:
        queue.store.close()


@dataclass
class Served:
    metrics: GradingMetrics
    gauges: LiveGauges
    port: int


@pytest.fixture
def served() -> Iterator[Served]:
    metrics = GradingMetrics()
    server = serve_metrics(metrics.registry, 0)
    yield Served(metrics, LiveGauges.on(metrics), server.server_address[1])
    server.shutdown()
    server.server_close()


def test_metrics_show_agreement_its_lower_bound_and_labels_waiting(tmp_path, served) -> None:
    traffic = Traffic(tmp_path / "traces.jsonl")
    folder, labels = tmp_path / "watch", tmp_path / "labels"
    traffic.send(30)
    _poll(traffic, folder, labels, served)
    text = _scrape(served.port)
    assert _gauge(text, "judge_labels_waiting") == 30
    assert math.isnan(_gauge(text, "judge_human_agreement"))  # no label yet: no figure
    assert "# HELP judge_human_agreement Agreement of the judge with people" in text
    with _label_app(labels) as api:
        _label_all(api, traffic)
    traffic.send(4)
    _poll(traffic, folder, labels, served)
    text = _scrape(served.port)
    assert _gauge(text, "judge_labels_waiting") == 4
    assert _gauge(text, "judge_human_agreement") == 1.0
    assert _gauge(text, "judge_human_agreement_labels") == 30
    lower = _gauge(text, "judge_human_agreement_lower95")
    assert 0.5 < lower < 1.0


def test_the_command_serves_the_label_gauges(tmp_path, capsys) -> None:
    """`judge watch --metrics-port 0 --label-rate R --label-dir DIR`: the gauges are on the
    served registry. (The job leaves its metrics server to the process's end, as the
    command does; a daemon thread here.)"""
    traffic = Traffic(tmp_path / "traces.jsonl")
    traffic.send(8)
    argv = ["watch", "--otlp", str(traffic.path), "--rubric", "faithfulness", "--once"]
    argv += ["-o", str(tmp_path / "w"), "--metrics-port", "0"]
    assert main([*argv, "--label-rate", "0.5", "--label-dir", str(tmp_path / "l")]) == 0
    port = int(capsys.readouterr().err.split("metrics at http://127.0.0.1:")[1].split("/")[0])
    text = _scrape(port)
    assert _gauge(text, "judge_labels_waiting") == len(_queued(tmp_path / "l")) > 0
    assert _gauge(text, "judge_human_agreement_labels") == 0


def test_the_live_window_is_the_last_100_labelled_and_matches_scikit_learn(tmp_path) -> None:
    from sklearn.metrics import cohen_kappa_score

    from judge.app.watch_labels import ProductionLabels

    store = open_production_store(tmp_path / "l", RUBRIC, rate=1.0, seed=0)
    ids = [f"c{n:03d}" for n in range(130)]
    store.append_items([(Item(i, 1.0), {"question": "q", "answer": "a"}) for i in ids])
    judge = {i: "faithful" if n % 2 else "unfaithful" for n, i in enumerate(ids)}
    human = {i: judge[i] if n % 7 else "faithful" for n, i in enumerate(ids)}
    for i in ids[:-10]:  # the last 10 queued, not labelled yet
        store.record("ana", i, label=human[i])
    live = ProductionLabels(store, RUBRIC, 1.0, 0, print, judged=dict(judge))
    kappa, lower, n = live.latest_window()
    window = ids[-110:-10]
    expected = cohen_kappa_score([human[i] for i in window], [judge[i] for i in window])
    assert n == 100 and kappa == pytest.approx(expected, abs=1e-12)
    assert 0 < lower < kappa
    store.close()
