"""`--html REPORT.html`: the option (the reports are written by `judge.app.html`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from judge.app.html import probe_html

HTML_HELP = "also write a self-contained HTML report (opens offline) here"
__all__ = ["add_html_option", "probe_html"]


def add_html_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--html", type=Path, metavar="REPORT.html", help=HTML_HELP)
