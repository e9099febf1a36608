"""`--html REPORT.html` on `judge grade`, `judge probe` and `judge calibrate`: the option
and the glue that writes the report once the command has its result."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judge.errors import UsageError

HTML_HELP = "also write a self-contained HTML report (opens offline) here"


def add_html_option(parser: argparse.ArgumentParser, *, cases: bool = False) -> None:
    parser.add_argument("--html", type=Path, metavar="REPORT.html", help=HTML_HELP)
    if cases:
        parser.add_argument(
            "--cases", type=Path, metavar="FILE", help="with --html: the cases, to show their text"
        )


def check_grade_html(args: argparse.Namespace) -> None:
    if args.html and (args.batch_api or args.export_batch or args.import_batch):
        raise UsageError(
            "--html works with online grading: once the batch records are written, run "
            "`judge grade INPUT -o RECORDS --html REPORT.html` (records already graded are "
            "kept, not graded again)"
        )


def grade_html(
    args: argparse.Namespace, summary: dict[str, Any], records: Path, cases: Path
) -> None:
    from judge.report.grade import write_grade_report

    if args.html:
        write_grade_report(args.html, summary, records, cases)
        print(f"report: {args.html}", file=sys.stderr)


def probe_html(
    args: argparse.Namespace, report: dict[str, Any], records: Sequence[Any] | None
) -> list[Path]:
    from judge.report.probe import write_probe_report

    if not args.html:
        return []
    cases = Path(args.input) if args.input else None
    return [write_probe_report(args.html, report, cases, records)]


def run_calibrate(args: argparse.Namespace) -> int:
    """`judge calibrate`, writing the HTML report from the result calibration returns."""
    from calibration import cli as calibration_cli
    from judge.report.calibrate import write_calibration_report

    def on_result(result: dict[str, Any]) -> list[Path]:
        return [write_calibration_report(args.html, result, args.cases)] if args.html else []

    return calibration_cli.run(args, on_result=on_result)
