"""``judge gate``: its options. Exit 3 when the candidate fails a gate (`judge.app.gate`
says which), 2 for bad input or usage, 0 otherwise."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from judge.app.gate import DEFAULT_RESAMPLES, parse_gate_condition
from judge.cli._flag_types import kappa_value, non_negative_int, rate, resamples

if TYPE_CHECKING:
    from calibration.decisions.gates import Condition

__all__ = ["add_arguments"]


def _condition(text: str) -> Condition:
    try:
        return parse_gate_condition(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _drop(text: str) -> float:
    value = kappa_value(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value:g} is negative: a drop is 0 or more")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``gate`` arguments to ``parser``."""
    files = parser.add_argument_group("files (JSONL or CSV with id and label)")
    files.add_argument("--baseline", type=Path, required=True, metavar="OLD",
                       help="the judge in use: graded records or labels")  # fmt: skip
    files.add_argument("--candidate", type=Path, required=True, metavar="NEW",
                       help="the judge to adopt, graded on the same cases")  # fmt: skip
    files.add_argument("--labels", type=Path, required=True, metavar="HUMAN",
                       help="human labels of the anchor cases")  # fmt: skip
    gates = parser.add_argument_group("gates (exit 3 when one fails)")
    gates.add_argument("--min-kappa", type=kappa_value, metavar="K",
                       help="fail when the candidate's kappa interval goes below K")  # fmt: skip
    gates.add_argument("--max-drop", type=_drop, metavar="D",
                       help="fail when kappa drops by more than D from the baseline")  # fmt: skip
    gates.add_argument("--alpha", type=rate, default=0.05, metavar="A",
                       help="McNemar significance level (default: 0.05)")  # fmt: skip
    gates.add_argument("--fail-if", type=_condition, action="append", default=[],
                       metavar="EXPR", help="fail when 'METRIC OP NUMBER' holds, e.g. "
                       "'flip_rate > 0.2' (repeatable)")  # fmt: skip
    out = parser.add_argument_group("output")
    out.add_argument("--json", type=Path, metavar="FILE", help="write the comparison as JSON")
    out.add_argument("--markdown", type=Path, metavar="FILE", help="write it as Markdown")
    out.add_argument("--seed", type=non_negative_int, default=0, help="bootstrap seed (0)")
    out.add_argument("--bootstrap", type=resamples, default=DEFAULT_RESAMPLES, metavar="N",
                     help="bootstrap resamples (default: 2000; 0: McNemar alone)")  # fmt: skip
