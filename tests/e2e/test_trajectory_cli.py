"""`judge grade conversations.jsonl --rubric R --offline` with user rubrics of kind
`trajectory`, one per match mode: each conversation gets the score its mode says, the
missing calls named; `judge calibrate` of those records against ground-truth labels prints
Cohen's kappa equal to scikit-learn's on the same pairs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score

from judge.cli import main
from tests.helpers import read_jsonl, write_jsonl

MODES = ("strict", "unordered", "subset", "superset")
LOOKUP = ("lookup_order", {"order_id": "A-17"})
REFUND = ("refund", {"order_id": "A-17", "amount": 20})
EMAIL = ("send_email", {"to": "ann@example.com"})


def conversation(case_id: str, made: list[tuple[str, Any]], expected: Any) -> dict[str, Any]:
    """A support conversation in which the agent made the calls `made`, in order."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a support agent for an online shop."},
        {"role": "user", "content": "Order A-17 arrived broken, please refund the 20 dollars."},
    ]
    for number, (name, arguments) in enumerate(made):
        call_id = f"call_{number}"
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": "ok"})
    messages.append({"role": "assistant", "content": "Your refund of 20 dollars is on its way."})
    row: dict[str, Any] = {"id": case_id, "messages": messages, "goal": "refund order A-17"}
    if expected is not None:
        row["expected_tool_calls"] = [{"name": n, "arguments": a} for n, a in expected]
    return row


WANTED = [LOOKUP, REFUND]
# id -> (calls made, expected calls, score under strict/unordered/subset/superset, missing)
CASES: dict[str, tuple[list[Any], Any, tuple[float, ...], list[str]]] = {
    "in-order": ([LOOKUP, REFUND], WANTED, (1, 1, 1, 1), []),
    "reordered": ([REFUND, LOOKUP], WANTED, (0, 1, 1, 1), []),
    "extra-call": ([LOOKUP, REFUND, EMAIL], WANTED, (0, 0, 0, 1), []),
    "missing-call": ([LOOKUP], WANTED, (0, 0, 1, 0), ["refund"]),
    "numbers-by-value": (
        [LOOKUP, ("refund", '{"amount": 20.0, "order_id": "A-17"}')],
        WANTED,
        (1, 1, 1, 1),
        [],
    ),
    "wrong-amount": (
        [LOOKUP, ("refund", {"order_id": "A-17", "amount": 200})],
        WANTED,
        (0, 0, 0, 0),
        ["refund"],
    ),
    "broken-json": ([LOOKUP, ("refund", "{order_id: A-17")], WANTED, (0, 0, 0, 0), ["refund"]),
    "no-calls": ([], WANTED, (0, 0, 1, 0), ["lookup_order", "refund"]),
}


@pytest.fixture
def rubrics_dir(tmp_path: Path) -> Path:
    """One user rubric of kind trajectory per match mode, written from the starting file
    `judge rubrics new` gives."""
    folder = tmp_path / "rubrics"
    for mode in MODES:
        env = {"JUDGE_RUBRICS_DIR": str(folder)}
        assert main(["rubrics", "new", f"calls-{mode}", "--kind", "trajectory"], env=env) == 0
        path = folder / f"calls-{mode}" / "v1.yaml"
        path.write_text(path.read_text().replace("# match: superset", f"match: {mode}"))
    return folder


@pytest.fixture
def conversations(tmp_path: Path) -> Path:
    rows = [conversation(i, made, expected) for i, (made, expected, _, _) in CASES.items()]
    rows.append(conversation("no-expectation", [LOOKUP], None))
    return write_jsonl(tmp_path / "conversations.jsonl", rows)


@pytest.mark.parametrize("mode", MODES)
def test_each_match_mode_scores_each_conversation(
    rubrics_dir: Path, conversations: Path, tmp_path: Path, mode: str
) -> None:
    out = tmp_path / f"{mode}.jsonl"
    args = ["grade", str(conversations), "--rubric", f"calls-{mode}", "--offline", "-o", str(out)]
    assert main([*args, "--rubrics-dir", str(rubrics_dir)], env={}) == 0
    records = {r["id"]: r for r in read_jsonl(out)}
    for case_id, (_, _, scores, missing) in CASES.items():
        record = records[case_id]
        assert record["score"] == scores[MODES.index(mode)], (mode, case_id)
        assert [c["name"] for c in record["verdict"]["missing"]] == missing, (mode, case_id)
        assert record["verdict"]["match"] == mode and record["judge"]["model"] == "computed"
    skipped = records["no-expectation"]
    assert skipped["status"] == "abstained" and skipped["score"] is None
    assert "no expected_tool_calls" in skipped["error"]


def test_calibrate_prints_the_kappa_scikit_learn_gives(
    rubrics_dir: Path, conversations: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "graded.jsonl"
    args = ["grade", str(conversations), "--rubric", "calls-unordered", "--offline", "-o", str(out)]
    assert main([*args, "--rubrics-dir", str(rubrics_dir)], env={}) == 0
    # ground truth: whether the agent did what the ticket needed (both calls, right values),
    # which the unordered match gets right but for the extra e-mail
    truth = {
        "in-order": "match",
        "reordered": "match",
        "extra-call": "match",
        "numbers-by-value": "match",
        "missing-call": "mismatch",
        "wrong-amount": "mismatch",
        "broken-json": "mismatch",
        "no-calls": "mismatch",
    }
    # no label for the abstained "no-expectation": calibrate counts it judge-only
    human = write_jsonl(tmp_path / "truth.jsonl", [{"id": k, "label": v} for k, v in truth.items()])
    capsys.readouterr()
    report = tmp_path / "report"
    assert main(["calibrate", str(out), str(human), "-o", str(report)], env={}) == 0
    printed = capsys.readouterr().out
    records = [r for r in read_jsonl(out) if r["status"] == "ok"]  # abstained: left out
    judge_labels = [r["label"] for r in records]
    expected = cohen_kappa_score([truth[r["id"]] for r in records], judge_labels)
    result = json.loads((report / "calibration.json").read_text("utf-8"))
    assert result["n"] == len(records) == 8 and result["unmatched"]["judge_only"] == 1
    assert result["kappa"] == pytest.approx(expected, abs=1e-12)
    shown = re.search(r"kappa\D*?(-?\d\.\d+)", printed, re.IGNORECASE)
    assert shown is not None, printed
    assert float(shown[1]) == pytest.approx(expected, abs=0.5 * 10 ** -len(shown[1].split(".")[1]))
