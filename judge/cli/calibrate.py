"""`judge calibrate`: agreement of a judge's labels with human labels. The statistics and
their own options live in `calibration/` (which never imports the engine); this adds the
HTML report and is loaded only when `calibrate` is chosen."""

from __future__ import annotations

import argparse
from pathlib import Path

from calibration import cli as calibration_cli
from judge.cli._help import CALIBRATE_EXAMPLES
from judge.cli._outputs import Output, check_outputs
from judge.report.cli import add_html_option, run_calibrate


def add_calibrate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate",
        help="agreement of a judge's labels with human labels",
        epilog=CALIBRATE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    calibration_cli.add_arguments(p)  # --cases included: --html and --explain share it
    add_html_option(p)
    p.set_defaults(run=lambda args, env: _run(args))


def _run(args: argparse.Namespace) -> int:
    """The HTML report's path is checked before any file is read (a folder or an input
    there is exit 2, not a traceback after the work); the rest is `calibration.cli`."""
    if args.html:
        inputs = [Path(p) for p in (args.judge_labels, args.human_labels, args.cases) if p]
        check_outputs([Output("--html", args.html, "html")], inputs, overwrite=True)
    return run_calibrate(args)
