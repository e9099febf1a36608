"""`judge calibrate`: agreement of a judge's labels with human labels. Parsing and printing
only (the options in `judge.cli._calibrate`); the job is `judge.app.calibrate`. Loaded only
when `calibrate` is chosen."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from judge.app.calibrate import foreign_judge_side, hold_report_folder
from judge.cli import _calibrate as calibration_cli
from judge.cli._foreign import add_foreign_options
from judge.cli._help import CALIBRATE_EXAMPLES
from judge.cli._html import add_html_option
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import CalibrateRequest, request_from


def add_calibrate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate",
        help="agreement of a judge's labels with human labels",
        epilog=CALIBRATE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    calibration_cli.add_arguments(p)  # --cases included: --html and --explain share it
    add_foreign_options(p)
    add_html_option(p)
    p.set_defaults(run=lambda args, env: run_calibrate(args))


def run_calibrate(args: argparse.Namespace) -> int:
    """`judge calibrate`, its `-o` folder and `--html` report checked and locked first."""
    request = request_from(CalibrateRequest, args)
    hold_report_folder(request.output)  # one run per report folder, like every output
    if request.html:
        inputs = [Path(p) for p in (request.judge_labels, request.human_labels, request.cases) if p]
        check_outputs([Output("--html", request.html, "html")], inputs, overwrite=False)
    side = foreign_judge_side(request)
    if side.described:
        print(f"judge side: {side.described}", file=sys.stderr)
    return calibration_cli.run(side.request)
