"""llm-judge's pytest plugin: grade a dataset once per test run, gate on its figures.

Registered as a `pytest11` entry point, and off unless used: loading it imports nothing
of the judge; its fixtures do, when a test asks for one. Use it in a test file:

    def test_answers_are_faithful(grade_dataset, judge_gate):
        result = grade_dataset("evals/answers.jsonl", "faithfulness")
        judge_gate(result, "faithfulness.pass_rate.ci95_low >= 0.8")

- `grade_dataset(path, rubrics="faithfulness")` grades a JSONL/CSV/Parquet file once per
  run (later calls get the same result) through the verdict cache: a rerun with the same
  judge sends no request. With no model configured it grades with the offline rules judge,
  so the same tests run in CI without a key.
- `judge_gate(result, "RUBRIC.FIGURE OP NUMBER")` asserts on a dataset's figures and their
  intervals (`judge.evaluation`), never on one stochastic verdict; a failure lists the
  worst cases with their evidence. Each gate is a JUnit property of its test.
- The judge: `--judge-model`, `--judge-base-url`, `--judge-cache-dir`, `--judge-offline`,
  `--judge-rubrics-dir`, else `$JUDGE_MODEL` / `$OPENAI_BASE_URL`, else the project's
  `[tool.judge]`; the key only from `$OPENAI_API_KEY`.
- `--judge-report PATH` writes a JSON report of what was graded (figures and counts); the
  JUnit XML (`--junitxml`) gets each dataset's figures as test-suite properties.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from calibration.decisions.gates import Check
    from judge.config import JudgeConfig
    from judge.evaluation import DatasetResult

GradeDataset = Callable[..., "DatasetResult"]
JudgeGate = Callable[..., "Check"]
_GRADED = pytest.StashKey[dict[tuple[str, tuple[str, ...]], "DatasetResult"]]()
JUNIT_FIGURES = ("cases", "mean_score", "pass_rate.estimate", "pass_rate.ci95_low", "error_rate")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("llm-judge", "llm-judge: grade datasets and gate on their figures")
    group.addoption("--judge-model", help="judge model (default: $JUDGE_MODEL, [tool.judge])")
    group.addoption("--judge-base-url", help="OpenAI-compatible endpoint ($OPENAI_BASE_URL)")
    group.addoption("--judge-cache-dir", type=Path, help="verdict cache folder")
    group.addoption("--judge-rubrics-dir", type=Path, action="append", default=[])
    group.addoption(
        "--judge-offline", action="store_true", help="grade with the offline rules judge"
    )
    group.addoption("--judge-report", type=Path, help="write a JSON report of what was graded")


def judge_config_from(config: pytest.Config, env: dict[str, str] | None = None) -> JudgeConfig:
    """The judge the options, the environment and `[tool.judge]` (from the rootdir) give;
    the rules judge when none names a model."""
    from pydantic import SecretStr

    from judge.config import JudgeConfig, default_cache_dir
    from judge.project_config import load_project_config

    env = dict(os.environ) if env is None else env
    project = load_project_config(Path(config.rootpath)).settings
    model = config.getoption("judge_model") or env.get("JUDGE_MODEL") or project.model
    base_url = config.getoption("judge_base_url") or env.get("OPENAI_BASE_URL") or project.base_url
    key = env.get("OPENAI_API_KEY")
    options = project.model_dump(
        exclude_none=True,
        include={"concurrency", "temperature", "top_p", "seed", "max_tokens", "timeout",
                 "max_retries", "output_mode"},
    )  # fmt: skip
    return JudgeConfig(
        model=None if config.getoption("judge_offline") else model,
        base_url=base_url,
        api_key=SecretStr(key) if key else None,
        cache_dir=config.getoption("judge_cache_dir")
        or project.cache_dir
        or default_cache_dir(env),
        use_cache=project.cache is not False,
        **options,
    )


@pytest.fixture(scope="session")
def judge_config(pytestconfig: pytest.Config) -> JudgeConfig:
    """The judge this test run grades with (`judge_config_from`)."""
    return judge_config_from(pytestconfig)


@pytest.fixture(scope="session")
def grade_dataset(pytestconfig: pytest.Config, judge_config: JudgeConfig) -> GradeDataset:
    """`grade_dataset(path, rubrics="faithfulness")`: the dataset graded once per run."""
    graded = pytestconfig.stash.setdefault(_GRADED, {})
    project = _project_rubric_dirs(pytestconfig)

    def grade(path: str | Path, rubrics: str | Sequence[str] = "faithfulness") -> DatasetResult:
        from judge.evaluation import grade_dataset_file

        where = Path(path)
        if not where.is_absolute():
            where = Path(pytestconfig.rootpath) / where
        refs = (rubrics,) if isinstance(rubrics, str) else tuple(rubrics)
        key = (str(where.resolve()), refs)
        if key not in graded:
            dirs = [*project, *pytestconfig.getoption("judge_rubrics_dir")]
            graded[key] = grade_dataset_file(judge_config, where, refs, dirs)
        return graded[key]

    return grade


def _project_rubric_dirs(config: pytest.Config) -> list[Path]:
    from judge.project_config import load_project_config

    return list(load_project_config(Path(config.rootpath)).settings.rubrics_dirs)


@pytest.fixture
def judge_gate(record_property: Callable[[str, object], None]) -> JudgeGate:
    """`judge_gate(result, "faithfulness.pass_rate.ci95_low >= 0.8")`: `assert_gate`, with
    the gate and its value recorded as a property of the test (JUnit XML)."""

    def gate(result: DatasetResult, expression: str, **options: Any) -> Check:
        from judge.evaluation import GateFailed, assert_gate

        __tracebackhide__ = True  # the failure is the gate's message, not this frame
        try:
            check = assert_gate(result, expression, **options)
        except GateFailed as failed:
            record_property(f"gate {expression}", failed.check.value_text())
            raise
        record_property(f"gate {expression}", check.value_text())
        return check

    return gate


@pytest.hookimpl(tryfirst=True)  # before the JUnit XML is written
def pytest_sessionfinish(session: pytest.Session) -> None:
    graded = session.config.stash.get(_GRADED, {})
    if not graded:
        return
    xml = _junit_xml(session.config)
    for (source, _), result in graded.items():
        figures = result.figures()
        if xml is not None:
            for rubric_id in result.sets:
                for name in JUNIT_FIGURES:
                    value = figures.get(f"{rubric_id}.{name}")
                    xml.add_global_property(
                        f"llm-judge {Path(source).name} {rubric_id}.{name}",
                        "undefined" if value is None else f"{value:.6g}",
                    )
    report = session.config.getoption("judge_report")
    if report is not None:
        Path(report).write_text(json.dumps(_report(graded), indent=2, default=str) + "\n")


def _junit_xml(config: pytest.Config) -> Any:
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - pytest's private layout changed
        return None
    return config.stash.get(xml_key, None)


def _report(graded: dict[tuple[str, tuple[str, ...]], DatasetResult]) -> dict[str, Any]:
    return {
        "datasets": [
            {
                "source": source,
                "rubrics": list(refs),
                "requests": result.requests,
                "figures": result.figures(),
            }
            for (source, refs), result in graded.items()
        ]
    }


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    graded = config.stash.get(_GRADED, {})
    if not graded:
        return
    terminalreporter.section("llm-judge")
    for (source, _), result in graded.items():
        for rubric_id, graded_set in result.sets.items():
            summary = graded_set.summary
            terminalreporter.write_line(
                f"{Path(source).name} {rubric_id}: {summary['cases']} cases, "
                f"mean score {summary.get('mean_score')}, {result.requests} requests sent"
            )
