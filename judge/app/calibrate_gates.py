"""The gates of the calibrate job (``--require-ready``, ``--fail-if``): exit 3 when one fails.

Conditions are parsed while the arguments are (a typo is exit 2 before any file is read,
the message listing the valid names); they are checked against the result's figures
(:mod:`calibration.decisions.figures`; the test split's with ``--split``). Over a jury's
panel records, the jury's figures too (:mod:`judge.app.calibrate_jury`: `panel.kappa`,
`juror.NAME.kappa`, ...; a juror's name is checked once the records are read).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from calibration.decisions.figures import METRIC_NAMES, gate_metrics, undefined_reasons
from calibration.decisions.gates import Condition, GateError, evaluate, parse_condition
from calibration.decisions.readiness import GATE_READY
from judge.app.calibrate_jury import is_jury_metric, jury_gate_values, unknown_juror_reason
from judge.jury.gates import HUMANS, JUROR_HUMANS

__all__ = ["GATE_READY", "check_gates", "parse_calibrate_condition"]


def parse_calibrate_condition(text: str) -> Condition:
    """`--fail-if EXPR` of calibrate: a condition on a figure of the result or of a jury's;
    a ValueError naming the valid names otherwise."""
    try:
        return parse_condition(text, METRIC_NAMES)
    except GateError as exc:
        jury = _jury_condition(text)
        if jury is not None:
            return jury
        jury_names = ", ".join([*HUMANS, *(f"juror.NAME.{m}" for m in JUROR_HUMANS)])
        raise ValueError(f"{exc}; over a jury's panel records also: {jury_names}") from None


def _jury_condition(text: str) -> Condition | None:
    """`text` as a condition on a jury's figure, or None when it names none."""
    try:
        condition = parse_condition(text, [text.split()[0]] if text.split() else [])
    except GateError:
        return None
    return condition if is_jury_metric(condition.metric) else None


def check_gates(
    result: dict[str, Any], *, require_ready: bool, fail_if: Sequence[Condition]
) -> dict[str, Any] | None:
    """The gate outcome to add to the result, or ``None`` when no gate was asked for."""
    if not require_ready and not fail_if:
        return None
    lines = []
    failed = False
    if require_ready:
        ready = result["readiness"] == GATE_READY
        failed = not ready
        lines.append(
            f"--require-ready: readiness is {result['readiness']} -> {'ok' if ready else 'failed'}"
        )
    values, jury_reasons = jury_gate_values(result)
    reasons = undefined_reasons(result) | jury_reasons
    for condition in fail_if:
        if is_jury_metric(condition.metric) and condition.metric not in values:
            reasons.setdefault(condition.metric, unknown_juror_reason(condition.metric, result))
    checks = evaluate(list(fail_if), gate_metrics(result) | values, reasons=reasons)
    failed = failed or any(c.fails for c in checks)
    lines += [f"--fail-if {c.describe()}" for c in checks]
    return {"failed": failed, "checks": lines}
