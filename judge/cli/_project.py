"""The project config (`judge.project_config`) as the defaults of a subcommand's flags:
applied when the subcommand's parser is built, so a flag on the command line wins."""

from __future__ import annotations

import argparse

from judge.errors import UsageError
from judge.project_config import ProjectConfig, load_project_config


def apply_project_defaults(parser: argparse.ArgumentParser) -> ProjectConfig:
    """Set the defaults the project file gives for the flags this parser has; a bad file
    is a usage error (exit 2) naming the file and key."""
    try:
        project = load_project_config()
    except UsageError as exc:
        parser.error(str(exc))
    dests = {action.dest for action in parser._actions}
    defaults = {
        dest: value
        for dest, value in project.defaults().items()
        if dest in dests or dest.removeprefix("project_") in dests
    }
    parser.set_defaults(**defaults, project_config=project)
    return project
