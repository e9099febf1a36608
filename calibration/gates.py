"""Gates: ``METRIC OP NUMBER`` conditions that fail a run when they hold.

Generic and pure: a command declares the metric names it offers, parses every condition
up front (so a typo is a usage error before any work), then evaluates the conditions
against a flat ``name -> number`` mapping of its result. ``--fail-if "kappa_ci95_low <
0.6"`` fails when the interval's lower bound is under 0.6.

Operators: ``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``. A metric whose value is undefined
(``None`` or ``nan``) cannot show the gate is met, so by default it fails the gate too
(``undefined_fails=False`` only lists it).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["Check", "Condition", "GateError", "evaluate", "parse_condition", "parse_conditions"]

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
}
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_EXPRESSION = re.compile(rf"^\s*([A-Za-z_][\w.]*)\s*(<=|>=|==|!=|<|>)\s*({_NUMBER})\s*$")


class GateError(ValueError):
    """A condition that cannot be parsed or names no metric; the message lists the names."""


@dataclass(frozen=True)
class Condition:
    """One parsed ``METRIC OP NUMBER`` condition."""

    metric: str
    op: str
    threshold: float
    text: str

    def holds(self, value: float) -> bool:
        return OPERATORS[self.op](value, self.threshold)


Status = Literal["ok", "failed", "undefined"]


@dataclass(frozen=True)
class Check:
    """A condition, the value it was checked against and the outcome."""

    condition: Condition
    value: float | None
    status: Status
    fails: bool

    def describe(self) -> str:
        value = "undefined" if self.value is None else f"{self.value:.4g}"
        return f"{self.condition.text}: {self.condition.metric} = {value} -> {self.status}"


def parse_condition(text: str, valid: Collection[str]) -> Condition:
    """Parse ``METRIC OP NUMBER``; :class:`GateError` names what is wrong and lists the
    ``valid`` metric names when the name is not one of them."""
    match = _EXPRESSION.match(text)
    if not match:
        raise GateError(
            f"{text!r}: expected METRIC OP NUMBER with OP one of "
            f"{' '.join(sorted(OPERATORS))}, e.g. 'kappa_ci95_low < 0.6'"
        )
    name, op, number = match[1], match[2], float(match[3])
    if name not in valid:
        raise GateError(f"{text!r}: no metric {name!r}; valid names: {', '.join(sorted(valid))}")
    return Condition(name, op, number, text.strip())


def parse_conditions(texts: Iterable[str], valid: Collection[str]) -> list[Condition]:
    """Every condition parsed, or :class:`GateError` on the first bad one."""
    return [parse_condition(text, valid) for text in texts]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def evaluate(
    conditions: Iterable[Condition],
    metrics: Mapping[str, object],
    *,
    undefined_fails: bool = True,
) -> list[Check]:
    """Check each condition against ``metrics`` (name -> number, ``None`` when undefined).

    A condition that holds is ``failed``; an undefined value is ``undefined`` and fails
    when ``undefined_fails``. Raises :class:`GateError` for a name missing from ``metrics``.
    """
    checks = []
    for condition in conditions:
        if condition.metric not in metrics:
            raise GateError(f"no metric {condition.metric!r} in this result")
        value = _number(metrics[condition.metric])
        if value is None:
            checks.append(Check(condition, None, "undefined", undefined_fails))
        elif condition.holds(value):
            checks.append(Check(condition, value, "failed", True))
        else:
            checks.append(Check(condition, value, "ok", False))
    return checks
