"""BFCL's parallel and parallel-multiple questions as labelled conversation cases.

    python tests/data/bfcl/convert.py OUT_DIR

Reads the vendored `questions/*.json` and `possible_answer/*.json` (SOURCE.md) and writes
`OUT_DIR/cases.jsonl` (one conversation case per candidate trajectory) and
`OUT_DIR/labels.jsonl` (`{"id", "label", "variant"}`, the ground truth: `match` when BFCL's
own checker accepts the trajectory, else `mismatch`).

BFCL ships questions, function schemas and the human-written sets of acceptable values of
each parameter, not model outputs. So each question gets candidate trajectories built from
its answer set, each labelled by BFCL's acceptance rule (every call of the answer made once,
in any order, with each parameter's value among its acceptable ones; an optional parameter
whose set holds "" may be left out; no other call):

    reference    the first acceptable value of each parameter, the answer's order  match
    reordered    the same calls in reverse order (questions with 2+ calls)           match
    alternative  one parameter given another of its acceptable values             match
    wrong_value  one parameter given a value outside its acceptable set           mismatch
    missing_call the last call left out (questions with 2+ calls)              mismatch
    extra_call   the first call made twice                                     mismatch
    malformed    one call's arguments written as broken JSON                   mismatch

Every case's `expected_tool_calls` is the reference trajectory (one answer, as a user of a
trajectory rubric would write it) and its `tools` the question's functions as JSON Schema
(BFCL's Python type names mapped: dict -> object, float -> number, tuple -> array, any ->
no constraint). The conversion is deterministic (no randomness).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SETS = ("BFCL_v4_parallel", "BFCL_v4_parallel_multiple")
TYPES = {"dict": "object", "float": "number", "tuple": "array", "int": "integer", "str": "string"}


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def json_schema(node: Any) -> Any:
    """A BFCL parameter schema as JSON Schema (its Python type names mapped)."""
    if isinstance(node, list):
        return [json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: json_schema(v) for k, v in node.items() if k != "type"}
    kind = node.get("type")
    if kind == "any":
        return {k: v for k, v in out.items() if k not in ("items", "properties")}
    if isinstance(kind, str):
        out["type"] = TYPES.get(kind, kind)
    if kind == "dict" and "properties" in out:
        out["properties"] = {k: json_schema(v) for k, v in node["properties"].items()}
    return out


def tool(function: dict[str, Any]) -> dict[str, Any]:
    parameters = json_schema(function.get("parameters") or {"type": "dict"})
    return {"type": "function", "function": {**function, "parameters": parameters}}


def first_values(answer: dict[str, list[Any]]) -> dict[str, Any]:
    """The reference arguments: each parameter's first acceptable value ("" = left out)."""
    return {name: values[0] for name, values in answer.items() if values and values[0] != ""}


def reference(truth: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [(name, first_values(answer)) for call in truth for name, answer in call.items()]


def alternative(truth: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]] | None:
    """The reference with the first parameter that has a second acceptable value given it."""
    calls = reference(truth)
    for index, call in enumerate(truth):
        ((name, answer),) = call.items()
        for param, values in answer.items():
            if len(values) > 1:
                arguments = dict(calls[index][1])
                if values[1] == "":
                    arguments.pop(param, None)
                else:
                    arguments[param] = values[1]
                if arguments != calls[index][1]:
                    calls[index] = (name, arguments)
                    return calls
    return None


def outside(values: list[Any]) -> Any:
    """A value outside an acceptable set, of the first value's kind."""
    first = next((v for v in values if v != ""), values[0])
    if isinstance(first, bool):
        candidate: Any = not first
    elif isinstance(first, int | float):
        candidate = first + 7
    elif isinstance(first, str):
        candidate = first + " (other)"
    elif isinstance(first, list):
        candidate = [*first, first[0] if first else 1]
    else:
        candidate = {"other": True}
    return candidate if candidate not in values else "not an acceptable value"


def wrong_value(truth: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]] | None:
    calls = reference(truth)
    for index, call in enumerate(truth):
        ((name, answer),) = call.items()
        for param, values in answer.items():
            if values and values[0] != "":
                calls[index] = (name, {**calls[index][1], param: outside(values)})
                return calls
    return None


def variants(truth: list[dict[str, Any]]) -> dict[str, tuple[Any, str]]:
    """variant -> (calls, label); calls are (name, arguments object or broken text)."""
    calls = reference(truth)
    out: dict[str, tuple[Any, str]] = {"reference": (calls, "match")}
    if len(calls) > 1:
        out["reordered"] = (calls[::-1], "match")
        out["missing_call"] = (calls[:-1], "mismatch")
    if (changed := alternative(truth)) is not None:
        out["alternative"] = (changed, "match")
    if (wrong := wrong_value(truth)) is not None:
        out["wrong_value"] = (wrong, "mismatch")
    out["extra_call"] = ([*calls, calls[0]], "mismatch")
    broken = json.dumps(calls[0][1])[:-1]  # the closing brace lost
    out["malformed"] = ([(calls[0][0], broken), *calls[1:]], "mismatch")
    return out


def conversation(question: dict[str, Any], calls: list[Any]) -> list[dict[str, Any]]:
    messages = [m for turn in question["question"] for m in turn]
    tool_calls = [
        {
            "id": f"call_{n}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            },
        }
        for n, (name, arguments) in enumerate(calls)
    ]
    messages = [*messages, {"role": "assistant", "content": None, "tool_calls": tool_calls}]
    for call in tool_calls:
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": "ok"})
    return messages


def convert(out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    count = 0
    with (
        (out_dir / "cases.jsonl").open("w", encoding="utf-8") as cases,
        (out_dir / "labels.jsonl").open("w", encoding="utf-8") as labels,
    ):
        for name in SETS:
            answers = {
                a["id"]: a["ground_truth"]
                for a in read_lines(HERE / "possible_answer" / f"{name}.json")
            }
            for question in read_lines(HERE / "questions" / f"{name}.json"):
                truth = answers[question["id"]]
                expected = [{"name": n, "arguments": a} for n, a in reference(truth)]
                tools = [tool(f) for f in question["function"]]
                for variant, (calls, label) in variants(truth).items():
                    case_id = f"{question['id']}:{variant}"
                    case = {
                        "id": case_id,
                        "messages": conversation(question, calls),
                        "expected_tool_calls": expected,
                        "tools": tools,
                        "slices": [name.removeprefix("BFCL_v4_"), variant],
                    }
                    cases.write(json.dumps(case, ensure_ascii=False) + "\n")
                    row = {"id": case_id, "label": label, "variant": variant}
                    labels.write(json.dumps(row) + "\n")
                    count += 1
    return count


if __name__ == "__main__":
    print(convert(Path(sys.argv[1])), "cases")
