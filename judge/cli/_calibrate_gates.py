"""``judge calibrate --require-ready`` and ``--fail-if``: exit 3 when a gate fails.

Conditions are parsed while the arguments are (a typo is exit 2 before any file is read,
the message listing the valid names); they are checked against the result's figures
(:mod:`calibration.decisions.figures`; the test split's with ``--split``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from calibration.decisions.figures import METRIC_NAMES, gate_metrics, undefined_reasons
from calibration.decisions.gates import Condition, GateError, evaluate, parse_condition
from calibration.decisions.readiness import GATE_READY

if TYPE_CHECKING:
    from judge.cli._requests import CalibrateRequest

__all__ = ["EXIT_GATE", "add_gate_arguments", "check_gates"]

EXIT_GATE = 3


def _condition(text: str) -> Condition:
    try:
        return parse_condition(text, METRIC_NAMES)
    except GateError as exc:
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


def check_gates(result: dict[str, Any], request: CalibrateRequest) -> dict[str, Any] | None:
    """The gate outcome to add to the result, or ``None`` when no gate was asked for."""
    if not request.require_ready and not request.fail_if:
        return None
    lines = []
    failed = False
    if request.require_ready:
        ready = result["readiness"] == GATE_READY
        failed = not ready
        lines.append(
            f"--require-ready: readiness is {result['readiness']} -> {'ok' if ready else 'failed'}"
        )
    checks = evaluate(request.fail_if, gate_metrics(result), reasons=undefined_reasons(result))
    failed = failed or any(c.fails for c in checks)
    lines += [f"--fail-if {c.describe()}" for c in checks]
    return {"failed": failed, "checks": lines}
