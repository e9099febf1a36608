"""promptfoo's grading provider for run_promptfoo.py (`provider: file://promptfoo_grader.py`,
promptfoo's Python provider): answers the llm-rubric prompt as promptfoo asks, a JSON object
of `reason`, `pass` and `score`, from mock_judge (nothing leaves the machine)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mock_judge  # noqa: E402

CASES = mock_judge.cases()


def call_api(prompt: str, options: dict, context: dict) -> dict:
    messages = json.loads(prompt)  # promptfoo sends the grading chat as JSON text
    case = mock_judge.case_in("\n".join(m["content"] for m in messages), CASES)
    if case["id"] in os.environ.get("MOCK_GRADER_FAILS", "").split(","):
        raise RuntimeError(f"the grader is down for {case['id']} (planted)")
    verdicts = mock_judge.verdicts(case)
    supported = sum(verdicts)
    reason = f"{supported} of {len(verdicts)} claims are supported by the context."
    verdict = {"reason": reason, "pass": all(verdicts), "score": supported / len(verdicts)}
    return {"output": json.dumps(verdict)}
