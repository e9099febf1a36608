"""`--html REPORT.html` on `judge grade`, `judge probe` and `judge calibrate`: the option
and the glue that writes the report once the command has its result (calibrate's is in
judge.cli.calibrate, so grading never loads the statistics behind calibration)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judge.errors import UsageError
from judge.report.grade import write_grade_report
from judge.report.probe import write_probe_report

HTML_HELP = "also write a self-contained HTML report (opens offline) here"


def add_html_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--html", type=Path, metavar="REPORT.html", help=HTML_HELP)


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
    if args.html:
        write_grade_report(args.html, summary, records, cases)
        print(f"report: {args.html}", file=sys.stderr)


def probe_html(
    args: argparse.Namespace, report: dict[str, Any], records: Sequence[Any] | None
) -> list[Path]:
    if not args.html:
        return []
    cases = Path(args.input) if args.input else None
    return [write_probe_report(args.html, report, cases, records)]
