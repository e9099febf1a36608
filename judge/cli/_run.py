"""`--fail-if` and `--max-error-rate`: the options (the checks and the exit code of a
finished run are `judge.app.runs`'s); and the terminal as a job's edge (`cli_edge`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from judge.app.edge import Edge
from judge.app.runs import DEFAULT_MAX_ERROR_RATE

__all__ = ["DEFAULT_MAX_ERROR_RATE", "add_run_options", "cli_edge"]


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """`--fail-if` and `--max-error-rate`: how `judge grade` decides its exit code."""
    group = parser.add_argument_group("exit code")
    group.add_argument(
        "--fail-if",
        action="append",
        default=[],
        metavar="EXPR",
        help="exit 3 when METRIC OP NUMBER holds on the summary, e.g. 'mean_score < 0.8' "
        "(repeatable)",
    )
    group.add_argument(
        "--max-error-rate",
        type=float,
        default=DEFAULT_MAX_ERROR_RATE,
        help="exit 1 when more than this share of cases failed (api_error + parse_error; "
        f"default {DEFAULT_MAX_ERROR_RATE})",
    )


def cli_edge(env: Mapping[str, str]) -> Edge:
    """The terminal as a job's edge: notes on stderr, lines and tables on stdout."""
    from judge.cli._common import announce_judge, print_summary, say_requests, show_progress
    from judge.cli._diagnosis import print_diagnosis

    return Edge(
        note=_stderr,
        line=_stdout,
        summary=print_summary,
        panel=_print_panel,
        diagnosis=print_diagnosis,
        judge=announce_judge,
        requests=say_requests,
        progress=show_progress(env),
    )


def _print_panel(panel: dict[str, Any], max_tokens: Sequence[int]) -> None:
    # imported on a jury's first panel: the jury's outcomes bring the statistics, which an
    # offline single-judge grade never loads (tests/e2e/test_startup.py)
    from judge.cli._panel_print import print_panel

    print_panel(panel, max_tokens=max_tokens)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _stdout(line: str) -> None:
    print(line, flush=True)
