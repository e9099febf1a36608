"""Gates: ``METRIC OP NUMBER`` conditions that fail a run when they hold.

The one parser and evaluator of every command's gate (``judge calibrate``, ``judge gate``,
``judge grade``, ``judge probe``). Generic and pure: a command declares the metric names
it offers, parses every condition up front (so a typo is a usage error before any work or
any request), then evaluates the conditions against a flat ``name -> number`` mapping of
its result. ``--fail-if "kappa_ci95_low < 0.6"`` fails when the interval's lower bound is
under 0.6.

Operators: ``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``.

One rule for an undefined metric (``None``, ``nan``, not a number, or absent from the
result): the check is ``undefined`` and it **fails** the gate, with the reason said. A
gate that was asked for and cannot be computed is no evidence that the release is fine.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "Check",
    "Condition",
    "GateError",
    "evaluate",
    "flatten_numbers",
    "parse_condition",
    "parse_conditions",
]

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
MAX_LISTED = 40  # valid names shown in a message; a summary with many slices has hundreds
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_EXPRESSION = re.compile(rf"^\s*([A-Za-z_][\w.]*)\s*(<=|>=|==|!=|<|>)\s*({_NUMBER})\s*$")
NO_VALUE = "the result has no value for it"


class GateError(ValueError):
    """A condition that cannot be parsed or names no metric; the message lists the names."""


@dataclass(frozen=True)
class Condition:
    """One parsed ``METRIC OP NUMBER`` condition: the gate fails when it holds."""

    metric: str
    op: str
    threshold: float
    text: str

    def holds(self, value: float) -> bool:
        return OPERATORS[self.op](value, self.threshold)


Status = Literal["ok", "failed", "undefined"]


@dataclass(frozen=True)
class Check:
    """A condition, the value it was checked against and the outcome. ``undefined``
    fails, like ``failed``; ``reason`` says why the value is missing."""

    condition: Condition
    value: float | None
    status: Status
    reason: str | None = None

    @property
    def fails(self) -> bool:
        return self.status != "ok"

    def outcome(self) -> str:
        """``ok``, ``failed``, or ``undefined (fails: REASON)``."""
        if self.status == "undefined":
            return f"undefined (fails: {self.reason or NO_VALUE})"
        return self.status

    def value_text(self, spec: str = ".4g") -> str:
        return "undefined" if self.value is None else format(self.value, spec)

    def describe(self) -> str:
        """``TEXT: METRIC = VALUE -> OUTCOME``, one line for a terminal or a report."""
        value = self.value_text()
        return f"{self.condition.text}: {self.condition.metric} = {value} -> {self.outcome()}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: condition text, value, status, whether it fails and the reason."""
        return {
            "condition": self.condition.text,
            "value": self.value,
            "status": self.status,
            "fails": self.fails,
            "reason": self.reason,
        }


def _listed(valid: Collection[str]) -> str:
    names = sorted(valid)
    return ", ".join(names[:MAX_LISTED]) + (" ..." if len(names) > MAX_LISTED else "")


def parse_condition(
    text: str,
    valid: Collection[str],
    *,
    what: str = "this result",
    example: str = "kappa_ci95_low < 0.6",
) -> Condition:
    """Parse ``METRIC OP NUMBER``; :class:`GateError` says what is wrong: the form (with
    ``example``), or a name that is not one of ``valid`` (``what`` has no metric ...),
    listing the valid names."""
    match = _EXPRESSION.match(text)
    if not match:
        raise GateError(
            f"{text!r}: expected METRIC OP NUMBER with OP one of "
            f"{' '.join(OPERATORS)}, e.g. {example!r}"
        )
    name, op, number = match[1], match[2], float(match[3])
    if name not in valid:
        raise GateError(f"{text!r}: {what} has no metric {name!r}; valid names: {_listed(valid)}")
    return Condition(name, op, number, text.strip())


def parse_conditions(
    texts: Iterable[str],
    valid: Collection[str],
    *,
    what: str = "this result",
    example: str = "kappa_ci95_low < 0.6",
) -> list[Condition]:
    """Every condition parsed, or :class:`GateError` on the first bad one."""
    return [parse_condition(text, valid, what=what, example=example) for text in texts]


def _number(value: object) -> float | None:
    """The number a gate compares: a figure's ``unrounded`` value when it carries one (a
    summary shows figures rounded to 6 decimals; the gate must not see 0.7999996 as 0.8)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    exact = float(getattr(value, "unrounded", value))
    return exact if math.isfinite(exact) else None


def _why_undefined(name: str, metrics: Mapping[str, object], reasons: Mapping[str, str]) -> str:
    if name in reasons:
        return reasons[name]
    if name not in metrics:
        return "not in this result"
    value = metrics[name]
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a finite number"
    if value is not None and not isinstance(value, int | float):
        return f"not a number ({type(value).__name__})"
    return NO_VALUE


def evaluate(
    conditions: Iterable[Condition],
    metrics: Mapping[str, object],
    *,
    reasons: Mapping[str, str] | None = None,
) -> list[Check]:
    """Check each condition against ``metrics`` (name -> number, ``None`` when undefined).

    A condition that holds is ``failed``; one whose value is undefined (``None``, ``nan``,
    not a number, or no entry in ``metrics``) is ``undefined`` and fails too, its reason
    taken from ``reasons`` (metric -> why) when the command knows it.
    """
    checks = []
    for condition in conditions:
        value = _number(metrics.get(condition.metric))
        if value is None:
            why = _why_undefined(condition.metric, metrics, reasons or {})
            checks.append(Check(condition, None, "undefined", why))
        else:
            checks.append(Check(condition, value, "failed" if condition.holds(value) else "ok"))
    return checks


def flatten_numbers(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The numbers (and nulls) of a nested mapping under dotted names:
    ``{"win_rates": {"A": 0.5}}`` -> ``{"win_rates.A": 0.5}``. Lists and text are left out."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out |= flatten_numbers(value, f"{name}.")
        elif value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
            out[name] = value
    return out
