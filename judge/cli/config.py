"""`judge config`: the settings a `judge grade` here would run with, and where each comes
from (a flag, the environment, the project file, the built-in default). The API key is
shown only as set or not: it is read from `$OPENAI_API_KEY` alone."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from judge.cli._common import add_judge_options, user_rubric_dirs
from judge.cli._requests import ConfigRequest, JudgeOptions, request_from
from judge.cli._run import DEFAULT_MAX_ERROR_RATE, add_run_options
from judge.config import default_cache_dir
from judge.project_config import BELOW_ENV, DESTS, ProjectConfig, ProjectSettings

ENV_OF = {**BELOW_ENV, "rubrics_dirs": "JUDGE_RUBRICS_DIR"}
CONFIG_EXAMPLES = """\
examples:
  judge config                       # what `judge grade` would run with here, and why
  judge config --model gpt-4o-2024-08-06 --json
  judge config --concurrency 4       # a flag given here shows as the source "flag"

The file: [tool.judge] in pyproject.toml, or judge.toml, e.g.
  [tool.judge]
  model = "gpt-4o-2024-08-06"
  concurrency = 32
  fail_if = ["mean_score < 0.8"]
"""


@dataclass(frozen=True)
class Setting:
    """One effective setting: its `[tool.judge]` key, value and source."""

    key: str
    value: Any
    source: str


def add_config(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "config",
        help="the effective settings ([tool.judge] / judge.toml, flags, environment)",
        description="Print the settings `judge grade` would use here, and where each comes "
        "from: a flag given below, the environment, the project file ([tool.judge] in "
        "pyproject.toml, or judge.toml, found from this folder upwards), or the default.",
        epilog=CONFIG_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_judge_options(p)
    add_run_options(p)
    p.add_argument("--price-input", type=float, help="USD per million prompt tokens")
    p.add_argument("--price-output", type=float, help="USD per million completion tokens")
    p.set_defaults(run=run_config, parser=p)


def effective_settings(
    request: ConfigRequest,
    defaults: ConfigRequest,
    project: ProjectConfig,
    env: Mapping[str, str],
) -> list[Setting]:
    """Every `[tool.judge]` key with the value a run would use and its source; `defaults`
    is the request no flag changed (the project file's defaults in it), so a field that
    differs from it was given on the command line."""
    given = project.given()
    out = []
    for key in ProjectSettings.model_fields:
        if key == "traces":  # a table `judge traces` and `judge watch` read, no flag's default
            out.append(Setting(key, given.get(key), _source(key, False, given, env, project)))
            continue
        dest = DESTS.get(key, (key, None))[0]
        value = _field(request, dest)
        flagged = _flag_given(value, _field(defaults, dest), dest)
        if key in BELOW_ENV:
            env_value = env.get(BELOW_ENV[key]) or None
            if not flagged:
                value = env_value or given.get(key)
        if key == "cache":
            value = not value
        source = _source(key, flagged, given, env, project)
        if key == "rubrics_dirs":
            value = [str(p) for p in user_rubric_dirs(request, env)]
        elif key == "cache_dir" and value is None:
            value = default_cache_dir(env)
        elif key == "fail_if":
            value = list(value)
        if key == "max_error_rate" and value is None:
            value = DEFAULT_MAX_ERROR_RATE
        out.append(Setting(key, str(value) if isinstance(value, Path) else value, source))
    key_set = bool(env.get("OPENAI_API_KEY"))
    out.append(Setting("api_key", "set" if key_set else "not set", "$OPENAI_API_KEY only"))
    return out


def _field(request: ConfigRequest, dest: str) -> Any:
    """The request's field for an option's dest: the judge's options are in `judge`."""
    if dest in {f.name for f in fields(JudgeOptions)}:
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


def run_config(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    request = request_from(ConfigRequest, args)
    # the parser's own defaults (the project file's among them): what no flag changed
    defaults = request_from(ConfigRequest, args.parser.parse_args([]))
    project: ProjectConfig = getattr(args, "project_config", None) or ProjectConfig()
    return config_command(request, defaults, project, env)


def config_command(
    request: ConfigRequest, defaults: ConfigRequest, project: ProjectConfig, env: Mapping[str, str]
) -> int:
    """`judge config`, from its request."""
    settings = effective_settings(request, defaults, project, env)
    if request.json:
        data = {
            "file": None if project.path is None else str(project.path),
            "settings": {s.key: {"value": s.value, "source": s.source} for s in settings},
        }
        print(json.dumps(data, indent=2, default=str))
        return 0
    where = project.path or f"none found from {os.getcwd()} upwards"
    print(f"project file: {where}", file=sys.stderr)
    width = max(len(s.key) for s in settings)
    for s in settings:
        value = "-" if s.value is None or s.value == [] else s.value
        if isinstance(value, list):
            value = ", ".join(map(str, value))
        print(f"{s.key:<{width}}  {value}  ({s.source})")
    return 0
