"""Issue 50: the cases a certified cascade escalated to people come first in every
annotator's `judge label` queue (then the overlap, then the shuffle), in a set built from
a records file and in one that grows (`judge watch --label-dir`)."""

from __future__ import annotations

from pathlib import Path

from judge.label.labelset import LabelPlan, open_label_store
from judge.label.queue import Queues
from judge.label.sampling import Item
from judge.label.store import LabelStore
from judge.rubric import load_rubric
from tests.helpers import case, write_jsonl

ESCALATED = {"c03", "c11", "c17"}


def record(case_id: str) -> dict[str, object]:
    escalated = case_id in ESCALATED
    return {
        "id": case_id,
        "rubric": "faithfulness",
        "status": "escalated" if escalated else "ok",
        "label": None if escalated else "faithful",
        "slices": [],
    }


def walk(queues: Queues, store: LabelStore, annotator: str) -> list[str]:
    """The ids the annotator is offered, labelling each in turn."""
    seen = []
    while (item := queues.next_item(annotator)) is not None:
        seen.append(item.case_id)
        store.record(annotator, item.case_id, label="faithful")
    return seen


def test_escalated_cases_come_first_for_every_annotator(tmp_path: Path) -> None:
    ids = [f"c{i:02d}" for i in range(20)]
    cases = write_jsonl(tmp_path / "cases.jsonl", [case(i) for i in ids])
    records = write_jsonl(tmp_path / "records.jsonl", [record(i) for i in ids])
    plan = LabelPlan(cases, load_rubric("faithfulness"), records=records, overlap=0.2)
    store = open_label_store(tmp_path / "labels.sqlite", plan)
    queues = Queues(store, seed=3)
    orders = {name: queues.order(name) for name in ("ann", "bob")}
    for order in orders.values():
        assert set(order[:3]) == ESCALATED and sorted(order) == ids
    assert orders["ann"] != orders["bob"]  # each still has an order of their own
    assert set(walk(queues, store, "ann")[:3]) == ESCALATED
    store.close()
    # a restart reads the mark back from the store
    again = open_label_store(tmp_path / "labels.sqlite", plan)
    assert set(Queues(again, seed=3).order("carl")[:3]) == ESCALATED
    again.close()


def test_an_escalated_item_appended_to_a_growing_set_comes_first_among_the_new(
    tmp_path: Path,
) -> None:
    store = LabelStore(tmp_path / "grow.sqlite")
    view = {"question": "q", "answer": "a"}
    store.initialise({"plan": 1}, [(Item(f"a{i}", 1.0), view) for i in range(4)])
    queues = Queues(store, seed=0)
    first = list(queues.order("ann"))
    assert sorted(first) == [f"a{i}" for i in range(4)]
    new = [Item(f"b{i}", 1.0, escalated=(i == 5)) for i in range(8)]
    store.append_items([(item, view) for item in new])
    assert queues.next_item("ann") is not None  # the request that sees the new batch
    order = queues.order("ann")
    assert order[:4] == first  # what was there keeps its place
    assert order[4] == "b5"
    store.close()
