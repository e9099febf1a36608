"""`judge config`: the settings a `judge grade` here would run with, and where each comes
from (a flag, the environment, the project file, the built-in default); the job is
judge.app.config's. The API key is shown only as set or not."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping

from judge.app.config import ConfigRequest, effective_settings
from judge.cli._common import add_judge_options
from judge.cli._requests import request_from
from judge.cli._run import DEFAULT_MAX_ERROR_RATE, add_run_options
from judge.project_config import ProjectConfig

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


def run_config(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """`judge config`: the request, and the one no flag changed (the parser's own defaults,
    the project file's among them)."""
    request = request_from(ConfigRequest, args)
    defaults = request_from(ConfigRequest, args.parser.parse_args([]))
    project: ProjectConfig = getattr(args, "project_config", None) or ProjectConfig()
    settings = effective_settings(
        request, defaults, project, env, max_error_rate=DEFAULT_MAX_ERROR_RATE
    )
    if request.json:
        data = {
            "file": None if project.path is None else str(project.path),
            "settings": {s.key: {"value": s.value, "source": s.source} for s in settings},
        }
        print(json.dumps(data, indent=2, default=str))
        return 0
    print(
        f"project file: {project.path or f'none found from {os.getcwd()} upwards'}", file=sys.stderr
    )
    width = max(len(s.key) for s in settings)
    for s in settings:
        value = "-" if s.value is None or s.value == [] else s.value
        if isinstance(value, list):
            value = ", ".join(map(str, value))
        print(f"{s.key:<{width}}  {value}  ({s.source})")
    return 0
