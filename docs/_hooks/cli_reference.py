"""MkDocs hook: the CLI reference page (reference/cli.md), written at build time from the
parsers themselves (`judge.cli.build_parser`), so it cannot drift from the code."""

from __future__ import annotations

import argparse
import os
from typing import Any

from mkdocs.structure.files import File, Files

PAGE = "reference/cli.md"
WIDTH = "100"  # argparse wraps help text to $COLUMNS; a fixed width gives a stable page


def command_parsers(parser: argparse.ArgumentParser, prog: str) -> list[tuple[str, Any]]:
    """(`judge grade`, its parser) for the program and every subcommand, depth first."""
    found = [(prog, parser)]
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for name in list(action.choices):
            # judge.cli's lazy subparsers add a subcommand's options when it is loaded
            load = getattr(action, "load", None)
            child = load(name) if load is not None else action.choices[name]
            found += command_parsers(child, f"{prog} {name}")
    return found


def reference_text() -> str:
    from judge.cli import build_parser

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parsers = command_parsers(build_parser(), "judge")
        lines = [
            "# CLI reference",
            "",
            "Generated from the command's own parsers when the site is built: what",
            "`judge COMMAND --help` prints, for every command and subcommand.",
            "",
        ]
        for prog, parser in parsers:
            parser.prog = prog
            lines += [f"## `{prog}`", "", "```text", parser.format_help().rstrip(), "```", ""]
        return "\n".join(lines)
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, PAGE, content=reference_text()))
    return files
