"""The project config (`judge.project_config`) as the defaults of a subcommand's flags:
applied when the subcommand's parser is built, so a flag on the command line wins. Which
keys set which flags is judge.app.config's `project_defaults`."""

from __future__ import annotations

import argparse

from judge.app.config import project_defaults
from judge.errors import UsageError
from judge.project_config import ProjectConfig


def apply_project_defaults(parser: argparse.ArgumentParser, command: str) -> ProjectConfig:
    """Set the defaults the project file gives for the flags this parser has; a bad file
    is a usage error (exit 2) naming the file and key."""
    try:
        project, defaults = project_defaults(command, {a.dest for a in parser._actions})
    except UsageError as exc:  # one line: the file and what is wrong (no usage text)
        parser.exit(2, f"error: {exc}\n")
    parser.set_defaults(**defaults, project_config=project)
    return project
