"""Start-up loads only what a command needs: which modules a fresh process imports (a
behaviour, not a timing; benchmarks/STARTUP.md has the times)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

# fresh interpreters, to audit what each command imports (.ci/slow runs it)
pytestmark = pytest.mark.slow

# Libraries that cost hundreds of milliseconds to import, and the project's heavy parts.
HEAVY = (
    "calibration",
    "diskcache",
    "fastapi",
    "httpx",
    "matplotlib",
    "numpy",
    "openai",
    "pandas",
    "polars",
    "pyarrow",
    "rich",
    "scipy",
    "sklearn",
    "starlette",
    "uvicorn",
    "judge.api",
    "judge.engine.grader",
)
# Grading offline needs numpy (input checks), rich (the summary table) and the engine,
# never the HTTP client, the statistics stack or the service. Since issue 12 item 6 the
# engine reads rows, gates and strict JSON from calibration's light modules (rows, gates,
# jsonout, errors; `import calibration` itself is lazy), never its statistics.
NOT_FOR_OFFLINE_GRADING = (
    "calibration.inference.intervals",
    "calibration.io.labels",
    "calibration.agreement.metrics",
    "calibration.report.result",
    "fastapi",
    "httpx",
    "matplotlib",
    "openai",
    "pandas",  # the frames extra: only for a DataFrame or a Parquet file (issue 23)
    "polars",
    "pyarrow",
    "scipy",
    "sklearn",
    "starlette",
    "uvicorn",
)

PROBE = """
import json, sys
from judge.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
wanted = json.loads(sys.argv[1])
print(json.dumps(sorted(m for m in wanted if m in sys.modules)))
"""


def loaded(args: list[str], modules: tuple[str, ...], cwd: Path) -> list[str]:
    """Which of `modules` a fresh `judge ARGS` process has imported when it ends."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(modules), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["rubrics"], ["rubrics", "verify"]])
def test_light_commands_import_no_heavy_library(args: list[str], tmp_path: Path) -> None:
    assert loaded(args, HEAVY, tmp_path) == []


def test_grade_offline_imports_neither_the_client_nor_statistics(tmp_path: Path) -> None:
    first = (REPO / "examples" / "cases.jsonl").read_text("utf-8").splitlines()[0]
    (tmp_path / "one.jsonl").write_text(first + "\n", "utf-8")
    args = ["grade", "one.jsonl", "--rubric", "faithfulness", "--offline", "-o", "g.jsonl"]
    assert loaded(args, NOT_FOR_OFFLINE_GRADING, tmp_path) == []
    assert (tmp_path / "g.jsonl").read_text("utf-8").count("\n") == 1


def test_import_judge_is_lazy_and_the_api_still_resolves(tmp_path: Path) -> None:
    code = (
        "import sys, judge\n"
        "before = 'judge.api' in sys.modules\n"
        "from judge import Judge, JudgeConfig, load_rubric\n"
        "assert Judge.__module__ == 'judge.api' and 'Judge' in dir(judge)\n"
        "print(before, 'judge.api' in sys.modules, judge.__version__ != '')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]


def test_an_unknown_name_is_an_attribute_error() -> None:
    import judge

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        judge.Nope  # noqa: B018
    assert set(judge.__all__) <= set(dir(judge))


def test_import_calibration_is_lazy_and_every_name_resolves(tmp_path: Path) -> None:
    """Issue 12 item 6: the engine reads rows and gates from calibration without loading
    its statistics; `from calibration import calibrate` still works."""
    code = (
        "import sys, calibration, calibration.io.rows, calibration.decisions.gates\n"
        "before = [m for m in ('scipy', 'sklearn', 'calibration.agreement.metrics') if m in sys.modules]\n"
        "missing = [n for n in calibration.__all__ if getattr(calibration, n, None) is None]\n"
        "print(before, missing, 'calibrate' in dir(calibration))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "[]", "True"]
