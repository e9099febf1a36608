"""The pytest plugin (issue 23 item 3): examples/pytest/test_answers.py gates a dataset and
passes and fails as planted, offline and through the test server; a rerun sends no request;
gates and figures reach the JUnit XML; loading the plugin alone imports nothing of the judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from judge.testing import FakeOpenAIServer
from tests.helpers import REPO

# pytest run in subprocesses over the example suite: minutes; run by .ci/slow
pytestmark = pytest.mark.slow

EXAMPLE = REPO / "examples" / "pytest" / "test_answers.py"


def run_pytest(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A pytest run of its own, with only this plugin (no autoloaded ones, no repo config)."""
    (folder / "pytest.ini").write_text("[pytest]\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JUDGE_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(folder / "pytest.ini"), "--rootdir",
         str(folder), "-p", "judge.pytest_plugin", "--judge-cache-dir", str(folder / "cache"),
         *args],
        cwd=folder,
        env={**clean, "PYTHONPATH": str(REPO), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip


def test_the_plugin_is_a_pytest11_entry_point() -> None:
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert data["project"]["entry-points"]["pytest11"] == {"llm_judge": "judge.pytest_plugin"}


def test_offline_the_example_passes_on_the_answers(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, str(EXAMPLE))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert "answers.jsonl faithfulness: 15 cases" in done.stdout  # the terminal summary


def test_offline_the_example_fails_on_the_planted_answers_naming_them(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, str(EXAMPLE), env={"ANSWERS": "answers-planted.jsonl"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout
    out = done.stdout
    assert "gate 'faithfulness.pass_rate.ci95_low >= 0.75' does not hold" in out
    assert "pass_rate = 0.533 [95%" in out and "over 15 scored cases" in out
    planted = [
        json.loads(line)["id"]
        for line in (EXAMPLE.parent / "answers-planted.jsonl").read_text().splitlines()
        if "planted" in json.loads(line).get("metadata", {})
    ]
    worst = out[out.index("worst cases (faithfulness):") :]
    assert sum(case_id in worst for case_id in planted) == 5  # the 5 worst shown, all planted
    assert "evidence:" in worst


def test_through_the_test_server_graded_once_and_a_rerun_sends_nothing(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    env = {
        "JUDGE_MODEL": "judge-test-2024-01-01",
        "OPENAI_BASE_URL": openai_server.base_url,
        "OPENAI_API_KEY": "sk-test",
    }
    report = tmp_path / "graded.json"
    first = run_pytest(tmp_path, str(EXAMPLE), "--judge-report", str(report), env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert openai_server.stats.requests == 15  # two tests, one dataset: graded once
    assert json.loads(report.read_text())["datasets"][0]["requests"] == 15
    again = run_pytest(tmp_path, str(EXAMPLE), "--judge-report", str(report), env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert openai_server.stats.requests == 15  # the rerun: every verdict from the cache
    assert json.loads(report.read_text())["datasets"][0]["requests"] == 0
    planted = run_pytest(tmp_path, str(EXAMPLE), env={**env, "ANSWERS": "answers-planted.jsonl"})
    assert planted.returncode == 1 and "does not hold" in planted.stdout


def test_the_junit_xml_holds_the_gates_and_the_figures(tmp_path: Path) -> None:
    xml = tmp_path / "junit.xml"
    done = run_pytest(tmp_path, str(EXAMPLE), f"--junitxml={xml}", "-o", "junit_family=xunit1")
    assert done.returncode == 0, done.stdout + done.stderr
    root = ET.parse(xml).getroot()
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["gate faithfulness.pass_rate.ci95_low >= 0.75"] == "0.7961"
    assert props["llm-judge answers.jsonl faithfulness.cases"] == "15"
    assert props["llm-judge answers.jsonl faithfulness.pass_rate.estimate"] == "1"


def test_loading_the_plugin_imports_nothing_of_the_judge(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text(
        "import sys\n"
        "def test_plain():\n"
        "    heavy = [m for m in ('judge.api', 'judge.engine', 'numpy', 'scipy') if m in sys.modules]\n"
        "    assert heavy == []\n"
    )
    done = run_pytest(tmp_path, "test_plain.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "llm-judge" not in done.stdout  # no summary section when nothing was graded


def test_a_typo_in_a_gate_names_the_figures(tmp_path: Path) -> None:
    (tmp_path / "test_typo.py").write_text(
        f"def test_typo(grade_dataset, judge_gate):\n"
        f"    result = grade_dataset({str(EXAMPLE.parent / 'answers.jsonl')!r})\n"
        f"    judge_gate(result, 'faithfulness.pass_rat.ci95_low >= 0.8')\n"
    )
    done = run_pytest(tmp_path, "test_typo.py")
    assert done.returncode == 1
    assert "faithfulness.pass_rate.ci95_low" in done.stdout  # listed among the valid names
