"""A plain agentevals loop over a conversations file: the peer `benchmarks/trajectory.py`
measures `judge grade` against. Runs in agentevals' own environment, not this project's:

    python -m venv /tmp/agentevals-venv
    /tmp/agentevals-venv/bin/pip install agentevals
    /tmp/agentevals-venv/bin/python benchmarks/agentevals_loop.py FILE

Each line is read with `json.loads`, its `expected_tool_calls` become the reference
trajectory (one assistant message with those calls, arguments as JSON text, as agentevals
takes them), and `create_trajectory_match_evaluator(trajectory_match_mode="superset",
tool_args_match_mode="exact")` scores it: the same mode as the built-in `trajectory`
rubric (every expected call made, other calls allowed, arguments equal). Prints one JSON
line: conversations, matched, and the loop's CPU seconds (`resource.getrusage`, user +
system, the imports left out; the caller times the whole process too).
"""

from __future__ import annotations

import json
import resource
import sys

from agentevals.trajectory.match import create_trajectory_match_evaluator


def reference(expected: list[dict]) -> list[dict]:
    calls = [
        {
            "type": "function",
            "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
        }
        for c in expected
    ]
    return [{"role": "assistant", "content": "", "tool_calls": calls}]


def main() -> None:
    start = resource.getrusage(resource.RUSAGE_SELF)
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode="superset", tool_args_match_mode="exact"
    )
    count = matched = 0
    with open(sys.argv[1], encoding="utf-8") as source:
        for line in source:
            case = json.loads(line)
            result = evaluator(
                outputs=case["messages"],
                reference_outputs=reference(case.get("expected_tool_calls") or []),
            )
            count += 1
            matched += bool(result["score"])
    end = resource.getrusage(resource.RUSAGE_SELF)
    loop = end.ru_utime - start.ru_utime + end.ru_stime - start.ru_stime
    print(json.dumps({"conversations": count, "matched": matched, "loop_cpu_s": loop}))


if __name__ == "__main__":
    main()
