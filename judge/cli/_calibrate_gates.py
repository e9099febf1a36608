"""``judge calibrate --require-ready`` and ``--fail-if``: exit 3 when a gate fails.

Conditions are parsed while the arguments are (a typo is exit 2 before any file is read,
the message listing the valid names); they are checked against the result's figures
(:mod:`calibration.decisions.figures`; the test split's with ``--split``). Over a jury's
panel records, the jury's figures too (:mod:`judge.cli._calibrate_jury`: `panel.kappa`,
`juror.NAME.kappa`, ...; a juror's name is checked once the records are read).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from calibration.decisions.figures import METRIC_NAMES, gate_metrics, undefined_reasons
from calibration.decisions.gates import Condition, GateError, evaluate, parse_condition
from calibration.decisions.readiness import GATE_READY
from judge.cli._calibrate_jury import is_jury_metric, jury_gate_values, unknown_juror_reason
from judge.jury.gates import HUMANS, JUROR_HUMANS

if TYPE_CHECKING:
    from judge.cli._requests import CalibrateRequest

__all__ = ["EXIT_GATE", "add_gate_arguments", "check_gates"]

EXIT_GATE = 3


def _condition(text: str) -> Condition:
    try:
        return parse_condition(text, METRIC_NAMES)
    except GateError as exc:
        jury = parse_jury_condition(text)  # a jury's figures (judge.cli._calibrate_jury)
        if jury is not None:
            return jury
        jury_names = ", ".join([*HUMANS, *(f"juror.NAME.{m}" for m in JUROR_HUMANS)])
        raise argparse.ArgumentTypeError(
            f"{exc}; over a jury's panel records also: {jury_names}"
        ) from None


def parse_jury_condition(text: str) -> Condition | None:
    """`text` as a condition on a jury's figure, or None when it names none."""
    try:
        condition = parse_condition(text, [text.split()[0]] if text.split() else [])
    except GateError:
        return None
    return condition if is_jury_metric(condition.metric) else None


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
    values, jury_reasons = jury_gate_values(result)
    reasons = undefined_reasons(result) | jury_reasons
    for condition in request.fail_if:
        if is_jury_metric(condition.metric) and condition.metric not in values:
            reasons.setdefault(condition.metric, unknown_juror_reason(condition.metric, result))
    checks = evaluate(request.fail_if, gate_metrics(result) | values, reasons=reasons)
    failed = failed or any(c.fails for c in checks)
    lines += [f"--fail-if {c.describe()}" for c in checks]
    return {"failed": failed, "checks": lines}
