"""Make the vendored tau-bench subset from tau-bench's published trajectories.

    python tests/data/taubench/convert.py gpt-4o-airline.json tests/data/taubench

reads `historical_trajectories/gpt-4o-airline.json` of https://github.com/sierra-research/
tau-bench (MIT) and writes, deterministically:
- `cases.jsonl`: trials 0 and 1 of tasks 0 to 24 (50 runs), one conversation case each: the trajectory's
  messages without the system message (the airline policy, the same 6 KB in every one),
  tool results over 400 characters cut there (an error result is never that long), and
  `metadata` {task_id, trial, reward}; no expected calls;
- `references.jsonl`: one line per task (all 50, so half match no case), {task_id, expected_tool_calls} from the task's
  ground-truth `actions` (name, kwargs), to join onto the cases by `metadata.task_id`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TRIALS = (0, 1)
TASKS = range(25)
CUT = 400


def _message(message: dict) -> dict:
    out = {k: v for k, v in message.items() if v is not None}
    content = out.get("content")
    if out["role"] == "tool" and isinstance(content, str) and len(content) > CUT:
        out["content"] = content[:CUT] + " [cut]"
    return out


def main(source: str, folder: str) -> None:
    runs = json.loads(Path(source).read_text())
    chosen = sorted(
        (r for r in runs if r["trial"] in TRIALS and r["task_id"] in TASKS),
        key=lambda r: (r["task_id"], r["trial"]),
    )
    out = Path(folder)
    with (out / "cases.jsonl").open("w") as cases:
        for run in chosen:
            case = {
                "id": f"airline-{run['task_id']}-{run['trial']}",
                "messages": [_message(m) for m in run["traj"] if m["role"] != "system"],
                "metadata": {
                    "task_id": run["task_id"],
                    "trial": run["trial"],
                    "reward": run["reward"],
                },
            }
            cases.write(json.dumps(case, ensure_ascii=False) + "\n")
    tasks = {r["task_id"]: r["info"]["task"]["actions"] for r in runs}
    with (out / "references.jsonl").open("w") as refs:
        for task_id in sorted(tasks):
            calls = [{"name": a["name"], "arguments": a["kwargs"]} for a in tasks[task_id]]
            refs.write(json.dumps({"task_id": task_id, "expected_tool_calls": calls}) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
