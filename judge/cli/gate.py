"""`judge gate`: a candidate judge against the baseline on a human-labelled anchor set. The
statistics live in `calibration/`; loaded only when `gate` is chosen."""

from __future__ import annotations

import argparse

from calibration import cli_gate
from judge.cli._help import GATE_EXAMPLES
from judge.cli._outputs import Output, check_outputs


def add_gate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gate",
        help="a candidate judge against the baseline on human labels",
        epilog=GATE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cli_gate.add_arguments(p)
    p.set_defaults(run=lambda args, env: run_gate(args))


def run_gate(args: argparse.Namespace) -> int:
    """`judge gate`, its `--json` and `--markdown` checked (and locked) like every output."""
    outputs = [
        Output(flag, path, kind)
        for flag, path, kind in (
            ("--json", args.json, "gate"),
            ("--markdown", args.markdown, "gate-markdown"),
        )
        if path is not None
    ]
    check_outputs(outputs, [args.baseline, args.candidate, args.labels], overwrite=None)
    return int(cli_gate.run(args))
