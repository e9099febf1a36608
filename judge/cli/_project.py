"""The project config (`judge.project_config`) as the defaults of a subcommand's flags:
applied when the subcommand's parser is built, so a flag on the command line wins.

A key sets a flag only where that flag means what the key says: the judge's options on
the commands that pick a judge (those with `--model` and `--output-mode`), the rubric
folders wherever `--rubrics-dir` is, and the run's gates and prices on `judge grade` (and
`judge config`) alone: `--seed` of `judge calibrate` is a bootstrap seed, and each
command's `--fail-if` reads its own figures."""

from __future__ import annotations

import argparse

from judge.errors import UsageError
from judge.project_config import ProjectConfig, load_project_config

GRADE_ONLY = frozenset({"fail_if", "max_error_rate", "price_input", "price_output"})
GRADE_COMMANDS = frozenset({"grade", "config"})


def apply_project_defaults(parser: argparse.ArgumentParser, command: str) -> ProjectConfig:
    """Set the defaults the project file gives for the flags this parser has; a bad file
    is a usage error (exit 2) naming the file and key."""
    try:
        project = load_project_config()
    except UsageError as exc:  # one line: the file and what is wrong (no usage text)
        parser.exit(2, f"error: {exc}\n")
    dests = {action.dest for action in parser._actions}
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
    parser.set_defaults(**defaults, project_config=project)
    return project
