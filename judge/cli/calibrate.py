"""`judge calibrate`: agreement of a judge's labels with human labels. The statistics live
in `calibration/` (which never imports the engine), the options and the printing in
`judge.cli._calibrate`; this adds the HTML report and is loaded only when `calibrate` is
chosen."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from judge.cli import _calibrate as calibration_cli
from judge.cli._foreign import add_foreign_options, foreign_judge_side
from judge.cli._help import CALIBRATE_EXAMPLES
from judge.cli._html import add_html_option
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import CalibrateRequest, request_from
from judge.engine.outlock import hold
from judge.report.calibrate import write_calibration_report


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
    """`judge calibrate`, writing the HTML report from the result calibration returns."""
    request = request_from(CalibrateRequest, args)
    hold(request.output, "-o")  # one run per report folder, like every output
    if request.html:
        inputs = [Path(p) for p in (request.judge_labels, request.human_labels, request.cases) if p]
        check_outputs([Output("--html", request.html, "html")], inputs, overwrite=False)

    def on_result(result: dict[str, Any]) -> list[Path]:
        html = request.html
        return [write_calibration_report(html, result, request.cases)] if html else []

    return calibration_cli.run(foreign_judge_side(request), on_result=on_result)
