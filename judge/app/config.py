"""The config job: the settings a `judge grade` here would run with, and where each comes
from (a flag, the environment, the project file, the built-in default). The API key is
reported only as set or not: it is read from `$OPENAI_API_KEY` alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from judge.app.judging import JudgeChoice, user_rubric_dirs
from judge.config import default_cache_dir
from judge.project_config import (
    BELOW_ENV,
    DESTS,
    ProjectConfig,
    ProjectSettings,
    load_project_config,
)

ENV_OF = {**BELOW_ENV, "rubrics_dirs": "JUDGE_RUBRICS_DIR"}
GRADE_ONLY = frozenset({"fail_if", "max_error_rate", "price_input", "price_output"})
GRADE_COMMANDS = frozenset({"grade", "config"})


@dataclass(frozen=True)
class ConfigRequest:
    """`judge config`: the options `judge grade` takes from the project file, to show."""

    json: bool
    price_input: float | None
    price_output: float | None
    fail_if: tuple[str, ...]
    max_error_rate: float
    rubrics_dir: tuple[Path, ...]
    judge: JudgeChoice


@dataclass(frozen=True)
class Setting:
    """One effective setting: its `[tool.judge]` key, value and source."""

    key: str
    value: Any
    source: str


def effective_settings(
    request: ConfigRequest,
    defaults: ConfigRequest,
    project: ProjectConfig,
    env: Mapping[str, str],
    *,
    max_error_rate: float,
) -> list[Setting]:
    """Every `[tool.judge]` key with the value a run would use and its source; `defaults`
    is the request no flag changed (the project file's defaults in it), so a field that
    differs from it was given on the command line; `max_error_rate` is the run's default."""
    given = project.given()
    out = []
    for key in ProjectSettings.model_fields:
        if key == "traces":  # a table `judge traces` and `judge watch` read, no flag's default
            out.append(Setting(key, given.get(key), _source(key, False, given, env, project)))
            continue
        dest = DESTS.get(key, (key, None))[0]
        value = _field(request, dest)
        flagged = _flag_given(value, _field(defaults, dest), dest)
        if key in BELOW_ENV and not flagged:
            value = env.get(BELOW_ENV[key]) or None or given.get(key)
        value = _shown(key, value, request, env, max_error_rate)
        source = _source(key, flagged, given, env, project)
        out.append(Setting(key, str(value) if isinstance(value, Path) else value, source))
    key_set = bool(env.get("OPENAI_API_KEY"))
    out.append(Setting("api_key", "set" if key_set else "not set", "$OPENAI_API_KEY only"))
    return out


def _shown(
    key: str, value: Any, request: ConfigRequest, env: Mapping[str, str], max_error_rate: float
) -> Any:
    """A setting's value as the run would take it."""
    if key == "cache":
        value = not value
    if key == "rubrics_dirs":
        value = [str(p) for p in user_rubric_dirs(request, env)]
    elif key == "cache_dir" and value is None:
        value = default_cache_dir(env)
    elif key == "fail_if":
        value = list(value)
    if key == "max_error_rate" and value is None:
        value = max_error_rate
    return value


def _field(request: ConfigRequest, dest: str) -> Any:
    """The request's field for an option's dest: the judge's options are in `judge`."""
    if dest in {f.name for f in fields(request.judge)}:  # type: ignore[arg-type]
        return getattr(request.judge, dest)
    return getattr(request, dest)


def _flag_given(value: Any, default: Any, dest: str) -> bool:
    if dest in ("rubrics_dir", "fail_if"):  # flags add to the file's: count them
        return len(value or ()) > len(default or ())
    return bool(value != default)


def _source(
    key: str, flagged: bool, given: dict[str, Any], env: Mapping[str, str], project: ProjectConfig
) -> str:
    parts = []
    if key in ("rubrics_dirs", "fail_if"):  # lists add up: say every source
        if key in given:
            parts.append(project.label)
        if flagged:
            parts.append("flag")
        if key in ENV_OF and env.get(ENV_OF[key]):
            parts.append(f"${ENV_OF[key]}")
        return " + ".join(parts) or "default"
    if flagged:
        return "flag"
    if key in BELOW_ENV and env.get(BELOW_ENV[key]):
        return f"${BELOW_ENV[key]}"
    if key in given:
        return project.label
    return "default"


def project_defaults(command: str, dests: set[str]) -> tuple[ProjectConfig, dict[str, Any]]:
    """The project file, and the defaults it gives the options (`dests`) of `command`; a
    bad file is a UsageError naming the file and key.

    A key sets an option only where that option means what the key says: the judge's
    options on the commands that pick a judge (those with `--model` and `--output-mode`),
    the rubric folders wherever `--rubrics-dir` is, and the run's gates and prices on
    `judge grade` (and `judge config`) alone: `--seed` of `judge calibrate` is a bootstrap
    seed, and each command's `--fail-if` reads its own figures."""
    project = load_project_config()
    picks_a_judge = {"model", "output_mode"} <= dests
    defaults = {}
    for dest, value in project.defaults().items():
        name = dest.removeprefix("project_")
        if name == "rubrics_dir":
            wanted = name in dests
        elif name in GRADE_ONLY:
            wanted = command in GRADE_COMMANDS
        else:
            wanted = picks_a_judge and name in dests
        if wanted:
            defaults[dest] = value
    return project, defaults
