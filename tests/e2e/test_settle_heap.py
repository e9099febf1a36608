"""`judge grade` moves its start-up heap out of the cyclic collector's sight before the first
request (`judge.app.runs.settle_heap`, issue 37): at high concurrency a full collection
otherwise walks every module and rubric object every few hundred replies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROGRAM = """
import gc, sys
from judge.cli import main
before = gc.get_freeze_count()
code = main(["grade", sys.argv[1], "--rubric", "faithfulness", "--offline", "-o", sys.argv[2]])
print(code, before, gc.get_freeze_count())
"""


def test_a_grade_run_freezes_the_start_up_heap_once(tmp_path: Path) -> None:
    source = REPO / "examples" / "cases.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(source), str(tmp_path / "out.jsonl")],
        capture_output=True,
        text=True,
        check=True,
    )
    code, before, after = map(int, done.stdout.split()[-3:])
    assert code == 0 and before == 0
    assert after > 10_000  # the modules, the rubric, the client: tens of thousands of objects
