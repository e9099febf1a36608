"""``judge calibrate --require-ready`` and ``--fail-if``: their options (exit 3 when a gate
fails; `judge.app.calibrate_gates` checks them). A condition is parsed while the arguments
are: a typo is exit 2 before any file is read, the message listing the valid names."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from judge.app.calibrate import GATE_READY, parse_calibrate_condition
from judge.cli._common import EXIT_GATE

if TYPE_CHECKING:
    from calibration.decisions.gates import Condition

__all__ = ["EXIT_GATE", "add_gate_arguments"]


def _condition(text: str) -> Condition:
    try:
        return parse_calibrate_condition(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("gates (exit 3 when one fails)")
    group.add_argument(
        "--require-ready",
        action="store_true",
        help=f"fail unless readiness is {GATE_READY}",
    )
    group.add_argument(
        "--fail-if",
        type=_condition,
        action="append",
        default=[],
        metavar="EXPR",
        help="fail when 'METRIC OP NUMBER' holds, e.g. 'kappa_ci95_low < 0.6' "
        "(repeatable; a metric that is undefined for this result fails too)",
    )
