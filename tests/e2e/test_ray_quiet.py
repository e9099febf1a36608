"""`judge grade --engine ray` on a local Ray instance it starts: Ray's own log lines (the
instance started, the execution plan, progress every few seconds) stay quiet on success;
stderr holds the judge's lines only (issue 36)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

# a Ray instance started in a subprocess: a minute; run by .ci/slow
pytestmark = pytest.mark.slow


def test_a_successful_ray_run_prints_no_ray_log_lines(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    lines = (REPO / "examples" / "cases.jsonl").read_text("utf-8").splitlines()[:3]
    source.write_text("\n".join(lines) + "\n", "utf-8")
    argv = ["grade", str(source), "--rubric", "faithfulness", "--engine", "ray", "--offline"]
    done = subprocess.run(
        [sys.executable, "-m", "judge.cli", *argv, "-o", str(tmp_path / "out.jsonl")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ray: graded 3" in done.stderr
    noise = [
        line
        for line in done.stderr.splitlines()
        if re.search(
            r"\bINFO\b|Token authentication is enabled|Running Dataset|Progress bars", line
        )
    ]
    assert noise == [], "\n".join(noise[:5])
