"""`tool_arguments` on hostile schemas (issue 52, items 1 and 2): a `$ref` outside the schema
is never fetched or read, and every validation ends within its budget with a reason.

The inputs here are not the issue's repro inputs: other hosts, ports, paths, patterns,
depths and sizes."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.kinds._bounded_schema import (
    MAX_CALL_STEPS,
    MAX_SCHEMA_CHARS,
    MAX_SCHEMA_DEPTH,
    Steps,
    schema_errors,
)
from judge.kinds.tool_arguments import NOT_CHECKABLE, check_calls
from judge.lexical import Budget, BudgetExceeded
from judge.transcript import Call
from tests.unit.test_tool_arguments import conversation, grade


class Recorder(http.server.BaseHTTPRequestHandler):
    """Serves a permissive schema and records every path asked for."""

    hits: list[str] = []

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        body = json.dumps({"type": "object"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []
    handler = type("Handler", (Recorder,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def tool(name: str, parameters: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def only_error(case_calls: tuple[str, str], parameters: Any) -> tuple[Any, str]:
    outcome, scored = grade(conversation(case_calls, tools=[tool(case_calls[0], parameters)]))
    assert outcome.status == "ok", outcome.error
    [invalid] = outcome.verdict.invalid
    [error] = invalid.errors
    return scored, error


# ---- item 1: references stay inside the schema --------------------------------------


@pytest.mark.parametrize(
    "shape",
    [
        lambda base: {"$ref": f"{base}/schemas/order.json"},
        lambda base: {"type": "object", "properties": {"item": {"$ref": f"{base}/item#/x"}}},
        lambda base: {"$id": f"{base}/root/", "type": "object", "allOf": [{"$ref": "peer.json"}]},
        lambda base: {"$defs": {"a": {"$ref": f"{base}/deep/a.json"}}, "$ref": "#/$defs/a"},
    ],
    ids=["root", "nested", "relative-to-id", "through-defs"],
)
def test_a_reference_to_a_host_is_never_fetched(
    recorder: tuple[str, list[str]], shape: Any
) -> None:
    base, hits = recorder
    scored, error = only_error(("place_order", '{"item": {"sku": "A-7"}}'), shape(base))
    assert hits == []  # the loopback host was never asked
    assert error.startswith(f"{NOT_CHECKABLE}: $ref ") and "never fetched" in error
    assert scored.label == "invalid"


def test_a_file_reference_is_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "shapes" / "permissive.json"
    secret.parent.mkdir()
    secret.write_text(json.dumps({"type": "object"}), "utf-8")  # would make the call valid
    scored, error = only_error(("lookup", '{"q": 1}'), {"$ref": secret.as_uri()})
    assert error.startswith(f"{NOT_CHECKABLE}: $ref ") and secret.name in error
    assert scored.label == "invalid"


def test_references_inside_the_schema_still_resolve() -> None:
    parameters = {
        "$defs": {"money": {"type": "number", "minimum": 0}},
        "type": "object",
        "properties": {
            "amount": {"$ref": "#/$defs/money"},
            "tip": {"$ref": "urn:example:tip"},
        },
        "additionalProperties": {"$id": "urn:example:tip", "type": "integer"},
    }
    case = conversation(("pay", '{"amount": 3.5, "tip": 2}'), ("pay", '{"amount": -1, "tip": 2}'))
    case.tools = [tool("pay", parameters)]
    outcome, _ = grade(case)
    [invalid] = outcome.verdict.invalid
    assert invalid.index == 1 and "amount" in invalid.errors[0]


def test_an_unknown_draft_is_not_checkable_rather_than_guessed() -> None:
    _, error = only_error(("f", "{}"), {"$schema": "https://drafts.example/v9", "type": "object"})
    assert error.startswith(f"{NOT_CHECKABLE}: unknown $schema")


# ---- item 2: every validation within a budget ------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        (r"^(b|bb)+$", "b" * 48 + "c", False),
        (r"^(\w+\s?)*$", "word " * 12 + "!", False),
        (r"^([a-z0-9]+-?)+[a-z0-9]$", "x" * 40 + "-", False),
        (r"^(x+x+)+y$", "x" * 30 + "y", True),
    ],
)
def test_a_catastrophic_pattern_is_matched_in_linear_time(
    pattern: str, text: str, matches: bool
) -> None:
    """Each pattern backtracks exponentially in Python's `re` on its text (hours); RE2
    answers exactly, so the verdict is the true one, not a refusal."""
    schema = {"type": "object", "properties": {"slug": {"type": "string", "pattern": pattern}}}
    errors = schema_errors(schema, {"slug": text}, Steps(), 5)
    assert errors == ([] if matches else [f"$.slug: {text!r} does not match {pattern!r}"])


def test_catastrophic_pattern_properties_and_the_extras_they_decide() -> None:
    schema = {
        "type": "object",
        "patternProperties": {r"^(k+k+)+z$": {"type": "integer"}},
        "additionalProperties": False,
    }
    ok = schema_errors(schema, {"kkkkz": 1}, Steps(), 5)
    extra = schema_errors(schema, {"k" * 36 + "!": 1}, Steps(), 5)
    assert ok == [] and len(extra) == 1 and "does not match any of the regexes" in extra[0]


def test_a_pattern_that_needs_backtracking_is_not_checkable() -> None:
    for pattern in (r"^(ab)\1$", r"^(?!admin).*$"):
        _, error = only_error(("f", '{"s": "abab"}'), {"properties": {"s": {"pattern": pattern}}})
        assert error.startswith(f"{NOT_CHECKABLE}: pattern") and "backtracking" in error


def doubling(levels: int, leaf: Any) -> dict[str, Any]:
    """`anyOf` of two references to the level below, `levels` times: 2**levels leaves."""
    defs: dict[str, Any] = {"l0": leaf}
    for level in range(1, levels + 1):
        below = {"$ref": f"#/$defs/l{level - 1}"}
        defs[f"l{level}"] = {"anyOf": [below, below]}
    return {"$defs": defs, "type": "object", "properties": {"v": {"$ref": f"#/$defs/l{levels}"}}}


@pytest.mark.parametrize(("levels", "value"), [(30, 7), (22, [1, 2]), (40, {"k": None})])
def test_an_exponential_schema_runs_out_of_steps_not_memory(levels: int, value: Any) -> None:
    schema = doubling(levels, {"type": "string"})
    assert len(json.dumps(schema)) < 4_000
    _, error = only_error(("convert", json.dumps({"v": value})), schema)
    assert error == f"{NOT_CHECKABLE}: validation took over {MAX_CALL_STEPS:,} steps for this call"


def test_the_case_budget_is_shared_by_its_calls() -> None:
    schema = doubling(25, {"type": "string"})
    calls = [Call("convert", {"v": 1}) for _ in range(6)]
    steps = Steps(case_steps=3 * MAX_CALL_STEPS)
    verdict = check_calls(calls, {"convert": schema}, steps)
    said = [call.errors[0] for call in verdict.invalid]
    assert len(said) == 6 and "for this call" in said[0]
    assert said[-1] == f"{NOT_CHECKABLE}: the case's validation budget of steps is spent"


def test_a_cancelled_case_stops_at_its_next_steps() -> None:
    budget = Budget()
    budget.cancel()
    with pytest.raises(BudgetExceeded):
        schema_errors(doubling(20, {"type": "string"}), {"v": 0}, Steps(budget), 5)


def test_schemas_over_the_size_or_depth_caps_are_not_checked() -> None:
    wide = {"type": "object", "enum": [{"k": "v" * 50} for _ in range(MAX_SCHEMA_CHARS // 50)]}
    _, error = only_error(("f", "{}"), wide)
    assert error.startswith(f"{NOT_CHECKABLE}: the schema is") and "characters" in error
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(MAX_SCHEMA_DEPTH // 2 + 1):
        deep = {"type": "object", "properties": {"n": deep}}
    _, error = only_error(("f", "{}"), deep)
    assert error == f"{NOT_CHECKABLE}: the schema nests more than {MAX_SCHEMA_DEPTH} levels deep"


def test_unique_items_by_value_in_linear_time() -> None:
    schema = {"type": "array", "uniqueItems": True}
    distinct = [{"n": i, "tags": [i, str(i)]} for i in range(20_000)]
    assert schema_errors({"properties": {"a": schema}}, {"a": distinct}, Steps(), 5) == []
    for same in ([1, 1.0], [{"a": [2]}, {"a": [2.0]}]):
        assert schema_errors(schema, same, Steps(), 5) == ["$: the array has non-unique elements"]
    assert schema_errors(schema, [True, 1, False, 0, None], Steps(), 5) == []
