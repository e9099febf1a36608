"""Held-out (issue 51): tau-bench's published airline trajectories (tests/data/taubench),
graded with `judge grade --references --join-on metadata.task_id` by trajectory rubrics with
rules per tool (`only:`, per-tool `arguments:`, `ignore_keys`, `errors: skip`), give on every
case the label of an independent implementation of the documented rules written here
(plain loops and an augmenting-path matching; nothing from judge.kinds). The join loses and
duplicates nothing: one record per case, each with its task's expected calls and key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from tests.helpers import read_jsonl

DATA = Path(__file__).parents[1] / "data" / "taubench"
WRITES = [
    "book_reservation",
    "cancel_reservation",
    "update_reservation_flights",
    "update_reservation_baggages",
    "update_reservation_passengers",
    "send_certificate",
    "transfer_to_human_agents",
]
READS = ["get_user_details", "get_reservation_details", "search_direct_flight", "think"]
RULE_SETS: dict[str, dict[str, Any]] = {
    "only-writes": {
        "only": WRITES,
        "tools": {
            "transfer_to_human_agents": {"arguments": "ignore"},
            "update_reservation_flights": {"arguments": "subset", "ignore_keys": ["payment_id"]},
        },
        "errors": "skip",
    },
    "ignore-reads": {
        "ignore": READS,
        "arguments": "subset",
        "tools": {
            "calculate": {"arguments": "ignore"},
            "book_reservation": {"arguments": "exact", "ignore_keys": ["payment_methods"]},
        },
        "errors": "skip",
    },
}
MODES = ("strict", "unordered", "subset", "superset")


def _rubric(folder: Path, mode: str, rules: dict[str, Any]) -> None:
    body = {
        "id": "tau-airline",
        "version": 1,
        "kind": "trajectory",
        "title": "tau-bench airline: the calls that change the reservation",
        "inputs": ["messages", "expected_tool_calls"],
        "match": mode,
        **rules,
        "system": "Computed.",
    }
    (folder / "tau-airline").mkdir(parents=True)
    (folder / "tau-airline" / "v1.yaml").write_text(json.dumps(body))  # JSON is YAML


# ---- the independent implementation ------------------------------------------------------


def _arguments(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


def _is_error(content: str | None) -> bool:
    text = (content or "").strip()
    if text.lower().startswith("error"):
        return True
    if text.startswith("{"):
        value = _arguments(text)
        return isinstance(value, dict) and any(
            value.get(k) for k in ("error", "is_error", "isError")
        )
    return False


def _agent_calls(messages: list[dict[str, Any]], skip_errors: bool) -> list[tuple[str, Any]]:
    results = {m["tool_call_id"]: m.get("content") for m in messages if m["role"] == "tool"}
    calls = []
    for message in messages:
        for call in message.get("tool_calls") or []:
            if skip_errors and _is_error(results.get(call.get("id"))):
                continue
            calls.append((call["function"]["name"], _arguments(call["function"]["arguments"])))
    return calls


def _kept(calls: list[tuple[str, Any]], rules: dict[str, Any]) -> list[tuple[str, Any]]:
    out = []
    for name, arguments in calls:
        if "only" in rules and name not in rules["only"]:
            continue
        if name in rules.get("ignore", []):
            continue
        drop = rules.get("tools", {}).get(name, {}).get("ignore_keys", [])
        if isinstance(arguments, dict):
            arguments = {k: v for k, v in arguments.items() if k not in drop}
        out.append((name, arguments))
    return out


def _fits(a: tuple[str, Any], e: tuple[str, Any], rules: dict[str, Any]) -> bool:
    if a[0] != e[0]:
        return False
    mode = rules.get("tools", {}).get(a[0], {}).get("arguments", rules.get("arguments", "exact"))
    if mode == "ignore":
        return True
    if not isinstance(a[1], dict) or not isinstance(e[1], dict):
        return False
    if mode == "exact":
        return a[1] == e[1]
    return all(k in a[1] and a[1][k] == v for k, v in e[1].items())


def _max_matching(actual: list, expected: list, rules: dict[str, Any]) -> int:
    """Kuhn's augmenting paths over the fit graph."""
    owner: dict[int, int] = {}  # expected index -> agent index

    def augment(a: int, seen: set[int]) -> bool:
        for e in range(len(expected)):
            if e not in seen and _fits(actual[a], expected[e], rules):
                seen.add(e)
                if e not in owner or augment(owner[e], seen):
                    owner[e] = a
                    return True
        return False

    return sum(augment(a, set()) for a in range(len(actual)))


def _label(
    messages: list[dict[str, Any]], expected: list[dict[str, Any]], mode: str, rules: dict[str, Any]
) -> str:
    actual = _kept(_agent_calls(messages, rules.get("errors") == "skip"), rules)
    wanted = _kept([(c["name"], c["arguments"]) for c in expected], rules)
    if mode == "strict":
        ok = len(actual) == len(wanted) and all(
            _fits(a, e, rules) for a, e in zip(actual, wanted, strict=True)
        )
    else:
        m = _max_matching(actual, wanted, rules)
        ok = {
            "unordered": m == len(actual) == len(wanted),
            "subset": m == len(actual),
            "superset": m == len(wanted),
        }[mode]
    return "match" if ok else "mismatch"


# ---- the tests ---------------------------------------------------------------------------


def _grade(tmp_path: Path, mode: str, rules: dict[str, Any]) -> list[dict[str, Any]]:
    rubrics = tmp_path / "rubrics"
    _rubric(rubrics, mode, rules)
    out = tmp_path / "graded.jsonl"
    argv = [
        "grade",
        str(DATA / "cases.jsonl"),
        "--rubric",
        "tau-airline",
        "--rubrics-dir",
        str(rubrics),
    ]
    argv += ["--references", str(DATA / "references.jsonl"), "--join-on", "metadata.task_id"]
    assert main([*argv, "-o", str(out)]) == 0
    return read_jsonl(out)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rules", RULE_SETS)
def test_rules_per_tool_give_the_independent_labels_on_every_case(tmp_path, mode, rules) -> None:
    records = _grade(tmp_path, mode, RULE_SETS[rules])
    cases = read_jsonl(DATA / "cases.jsonl")
    refs = {r["task_id"]: r["expected_tool_calls"] for r in read_jsonl(DATA / "references.jsonl")}
    want = [
        _label(c["messages"], refs[c["metadata"]["task_id"]], mode, RULE_SETS[rules]) for c in cases
    ]
    assert [r["label"] for r in records] == want
    assert len(set(want)) == 2, "both labels occur: the comparison is not vacuous"


def test_the_join_loses_and_duplicates_nothing(tmp_path, capsys) -> None:
    records = _grade(tmp_path, "superset", RULE_SETS["only-writes"])
    cases = read_jsonl(DATA / "cases.jsonl")
    refs = {r["task_id"]: r["expected_tool_calls"] for r in read_jsonl(DATA / "references.jsonl")}
    assert [r["id"] for r in records] == [c["id"] for c in cases]  # each once, in order
    assert all(r["status"] == "ok" for r in records)  # none abstained: each got its calls
    assert [r["reference_key"] for r in records] == [str(c["metadata"]["task_id"]) for c in cases]
    for record, case in zip(records, cases, strict=True):
        expected = refs[case["metadata"]["task_id"]]
        wanted = _kept([(c["name"], c["arguments"]) for c in expected], RULE_SETS["only-writes"])
        assert record["verdict"]["expected_calls"] == len(wanted)
    err = capsys.readouterr().err
    assert "references: 50 cases joined by metadata.task_id from references.jsonl" in err
    assert "(25 of 50 references used)" in err


def test_skipped_and_left_out_calls_are_named(tmp_path) -> None:
    records = _grade(tmp_path, "superset", RULE_SETS["only-writes"])
    whys = {item["why"].split(" (")[0] for r in records for item in r["verdict"]["left_out"]}
    assert whys == {"only: not listed", "errors: skip"}
    skipped = [
        i for r in records for i in r["verdict"]["left_out"] if i["why"].startswith("errors")
    ]
    assert skipped and all(i["side"] == "agent" for i in skipped)
    assert all("Error" in i["why"] for i in skipped)  # the tool's own answer is quoted
