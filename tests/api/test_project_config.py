"""`[tool.judge]` in pyproject.toml, or judge.toml (issue 23 item 4): every key changes the
default of its flag (a test per key), a flag overrides it, `judge config` names the source
of each setting, the API key is never read from the file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.cli._common import config_from_args, user_rubric_dirs
from judge.cli._main import build_parser
from judge.cli._requests import GradeRequest, request_from
from judge.config import JudgeConfig
from judge.testing import FakeOpenAIServer
from tests.helpers import REPO, read_jsonl

Check = Callable[[JudgeConfig, Any], Any]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder (its own .git ends the search for a config file), the working one."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def grade_args(*flags: str) -> tuple[JudgeConfig, GradeRequest]:
    args = build_parser().parse_args(["grade", "cases.jsonl", "--rubric", "faithfulness", *flags])
    request = request_from(GradeRequest, args)  # the project file's defaults go through it
    return config_from_args(request.judge, {}), request


MODEL = 'model = "judge-2024-08-06"\n'
# key: (TOML lines, what the default becomes, a flag overriding it, what the flag makes it)
KEYS: dict[str, tuple[str, Check, list[str], Check]] = {
    "model": (
        MODEL,
        lambda c, a: c.model == "judge-2024-08-06",
        ["--model", "flag-2024-01-01"],
        lambda c, a: c.model == "flag-2024-01-01",
    ),
    "base_url": (
        MODEL + 'base_url = "http://127.0.0.1:9/v1"\n',
        lambda c, a: c.base_url == "http://127.0.0.1:9/v1",
        ["--base-url", "http://127.0.0.1:8/v1"],
        lambda c, a: c.base_url == "http://127.0.0.1:8/v1",
    ),
    "concurrency": (
        "concurrency = 3\n",
        lambda c, a: c.concurrency == 3,
        ["--concurrency", "5"],
        lambda c, a: c.concurrency == 5,
    ),
    "temperature": (
        "temperature = 0.7\n",
        lambda c, a: c.temperature == 0.7,
        ["--temperature", "0"],
        lambda c, a: c.temperature == 0.0,
    ),
    "top_p": (
        "top_p = 0.9\n",
        lambda c, a: c.top_p == 0.9,
        ["--top-p", "0.5"],
        lambda c, a: c.top_p == 0.5,
    ),
    "seed": ("seed = 7\n", lambda c, a: c.seed == 7, ["--seed", "8"], lambda c, a: c.seed == 8),
    "max_tokens": (
        "max_tokens = 200\n",
        lambda c, a: c.max_tokens == 200,
        ["--max-tokens", "300"],
        lambda c, a: c.max_tokens == 300,
    ),
    "timeout": (
        "timeout = 5.5\n",
        lambda c, a: c.timeout == 5.5,
        ["--timeout", "9"],
        lambda c, a: c.timeout == 9.0,
    ),
    "max_retries": (
        "max_retries = 1\n",
        lambda c, a: c.max_retries == 1,
        ["--max-retries", "2"],
        lambda c, a: c.max_retries == 2,
    ),
    "output_mode": (
        'output_mode = "prompt"\n',
        lambda c, a: c.output_mode == "prompt",
        ["--output-mode", "json_object"],
        lambda c, a: c.output_mode == "json_object",
    ),
    "cache_dir": (
        'cache_dir = "verdicts"\n',  # relative to the file's folder
        lambda c, a: c.cache_dir == Path.cwd() / "verdicts",
        ["--cache-dir", "/tmp/elsewhere"],
        lambda c, a: c.cache_dir == Path("/tmp/elsewhere"),
    ),
    "cache": (
        "cache = false\n",
        lambda c, a: c.use_cache is False,
        ["--no-cache"],  # no flag turns it back on: the file's false and the flag agree
        lambda c, a: c.use_cache is False,
    ),
    "rubrics_dirs": (
        'rubrics_dirs = ["my-rubrics", "~/team-rubrics"]\n',
        lambda c, a: (
            user_rubric_dirs(a, {}) == [Path.cwd() / "my-rubrics", Path.home() / "team-rubrics"]
        ),
        ["--rubrics-dir", "more"],  # folders add up: the file's, then the flags'
        lambda c, a: user_rubric_dirs(a, {})[-1] == Path("more"),
    ),
    "fail_if": (
        'fail_if = ["mean_score < 0.8"]\n',
        lambda c, a: a.fail_if == ("mean_score < 0.8",),
        ["--fail-if", "mean_score < 0.5"],  # gates add up
        lambda c, a: a.fail_if == ("mean_score < 0.8", "mean_score < 0.5"),
    ),
    "max_error_rate": (
        "max_error_rate = 0.2\n",
        lambda c, a: a.max_error_rate == 0.2,
        ["--max-error-rate", "0.1"],
        lambda c, a: a.max_error_rate == 0.1,
    ),
    "price_input": (
        "price_input = 2.5\n",
        lambda c, a: a.price_input == 2.5,
        ["--price-input", "3"],
        lambda c, a: a.price_input == 3.0,
    ),
    "price_output": (
        "price_output = 10\n",
        lambda c, a: a.price_output == 10.0,
        ["--price-output", "11"],
        lambda c, a: a.price_output == 11.0,
    ),
}


def test_every_key_has_a_test() -> None:
    from judge.project_config import ProjectSettings

    # `traces` is a table, not a flag's default: tests/traces/test_pull_otlp.py reads it
    assert set(KEYS) | {"traces"} == set(ProjectSettings.model_fields)


@pytest.mark.parametrize("key", sorted(KEYS))
def test_a_key_in_judge_toml_changes_its_default_and_a_flag_overrides_it(
    key: str, project: Path
) -> None:
    lines, by_file, flag, by_flag = KEYS[key]
    assert not by_file(*grade_args())  # not the built-in default already
    (project / "judge.toml").write_text(lines)
    assert by_file(*grade_args())
    assert by_flag(*grade_args(*flag))


@pytest.mark.parametrize("key", ["concurrency", "rubrics_dirs"])
def test_pyproject_tool_judge_is_found_from_a_subfolder(
    key: str, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines, by_file, _, _ = KEYS[key]
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.judge]\n' + lines)
    (project / "sub").mkdir()
    monkeypatch.chdir(project / "sub")
    config, args = grade_args()
    monkeypatch.chdir(project)  # the paths are the file's folder's, wherever judge ran
    assert by_file(config, args)


def test_the_search_stops_at_the_repository_root(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner = project / "repo"
    (inner / ".git").mkdir(parents=True)
    (project / "judge.toml").write_text("concurrency = 3\n")
    monkeypatch.chdir(inner)
    config, _ = grade_args()
    assert config.concurrency == JudgeConfig().concurrency


def test_the_environment_outranks_the_file_for_the_model(project: Path) -> None:
    (project / "judge.toml").write_text(MODEL)
    args = build_parser().parse_args(["grade", "c.jsonl", "--rubric", "faithfulness"])
    judge = request_from(GradeRequest, args).judge
    assert config_from_args(judge, {"JUDGE_MODEL": "env-2024-01-01"}).model == "env-2024-01-01"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('api_key = "sk-123456789"\n', "api_key: an API key is never read from a file"),
        ("concurency = 3\n", "concurency: unknown key"),
        ("concurrency = 0\n", "concurrency: input should be greater than or equal to 1"),
        ("concurrency = \n", "not valid TOML"),
    ],
)
def test_a_bad_file_is_exit_2_naming_file_and_key(
    toml: str, message: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "judge.toml").write_text(toml)
    with pytest.raises(SystemExit) as stopped:
        main(["grade", "c.jsonl", "--rubric", "faithfulness"], env={})
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert str(project / "judge.toml") in err and message in err
    assert "sk-123456789" not in err


def test_judge_config_shows_each_source(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.judge]\nmodel = "judge-2024-08-06"\nconcurrency = 3\nfail_if = ["mean_score < 0.8"]\n'
    )
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-secret-value"}
    assert main(["config", "--json", "--seed", "5", "--fail-if", "mean_score < 0.5"], env=env) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    settings = data["settings"]
    label = f"{project / 'pyproject.toml'} [tool.judge]"
    assert data["file"] == str(project / "pyproject.toml")
    assert settings["model"] == {"value": "judge-2024-08-06", "source": label}
    assert settings["concurrency"] == {"value": 3, "source": label}
    assert settings["seed"] == {"value": 5, "source": "flag"}
    assert settings["base_url"] == {"value": "http://127.0.0.1:9/v1", "source": "$OPENAI_BASE_URL"}
    assert settings["temperature"] == {"value": 0.0, "source": "default"}
    assert settings["fail_if"]["source"] == f"{label} + flag"
    assert settings["api_key"] == {"value": "set", "source": "$OPENAI_API_KEY only"}
    assert "sk-secret-value" not in out
    assert main(["config"], env=env) == 0
    table = capsys.readouterr().out
    line = next(line for line in table.splitlines() if line.startswith("concurrency "))
    assert line.split()[1] == "3" and line.endswith(f"({label})")


def test_a_config_file_grades_through_its_endpoint_with_no_flags(
    project: Path, server_factory: Callable[..., FakeOpenAIServer]
) -> None:
    """The README's promise: `judge grade FILE --rubric R` and nothing else."""
    openai_server = server_factory(model="judge-2024-08-06", strict_model=True)
    (project / "judge.toml").write_text(
        f'model = "judge-2024-08-06"\nbase_url = "{openai_server.base_url}"\n'
        'cache_dir = "cache"\nconcurrency = 2\n'
    )
    source = REPO / "examples" / "cases.jsonl"
    out = project / "graded.jsonl"
    env = {"OPENAI_API_KEY": "sk-test"}
    assert main(["grade", str(source), "--rubric", "faithfulness", "-o", str(out)], env=env) == 0
    records = read_jsonl(out)
    assert {r["judge"]["model"] for r in records} == {"judge-2024-08-06"}
    assert openai_server.stats.requests == len(records)
    assert openai_server.stats.peak_concurrency <= 2
    assert (project / "cache").is_dir()


@pytest.mark.parametrize(
    ("command", "dest", "default"),
    [
        (["calibrate", "j.csv", "h.csv"], "seed", 0),  # a bootstrap seed, not the judge's
        (["calibrate", "j.csv", "h.csv"], "fail_if", []),  # calibrate's own figures
        (["compare", "a", "b"], "seed", 0),
        (["probe", "position", "p.jsonl", "--rubric", "pairwise"], "fail_if", []),
    ],
)
def test_a_key_sets_only_the_flag_that_means_it(
    command: list[str], dest: str, default: object, project: Path
) -> None:
    (project / "judge.toml").write_text(
        'seed = 7\nconcurrency = 3\nfail_if = ["mean_score < 0.8"]\nrubrics_dirs = ["r"]\n'
    )
    args = build_parser().parse_args(command)
    assert getattr(args, dest) == default
    if command[0] == "probe":  # a command that picks a judge takes the judge's keys
        assert args.seed == 7 and args.concurrency == 3
    if command[0] == "compare":
        assert args.rubrics_dir == [project / "r"]


def test_concurrency_auto_in_the_file_is_the_flags_auto(project: Path) -> None:
    (project / "judge.toml").write_text('concurrency = "auto"\n')
    config, _ = grade_args()
    assert config.concurrency == "auto"
