"""``judge calibrate --plan``: its options, and the plan printed (`judge.app.calibrate_plan`
makes it)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from judge.app.calibrate import DEFAULT_KAPPA
from judge.cli._flag_types import kappa_value, rate, width

if TYPE_CHECKING:
    from judge.app.calibrate import PlanResult

__all__ = ["add_plan_arguments", "print_plan"]


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--plan`` options (``--plan`` itself is declared with the other switches)."""
    group = parser.add_argument_group(
        "--plan",
        "with JUDGE_LABELS HUMAN_LABELS the rates and kappa are read from the files; "
        "flags override them",
    )
    group.add_argument(
        "--kappa",
        type=kappa_value,
        help=f"expected kappa (default: observed, else {DEFAULT_KAPPA})",
    )
    group.add_argument("--width", type=width, default=0.2, help="interval width (default: 0.2)")
    group.add_argument("--judge-rate", type=rate, metavar="R", help="share the judge passes")
    group.add_argument("--human-rate", type=rate, metavar="R", help="share people pass")
    group.add_argument("--prevalence", type=rate, metavar="R", help="one pass rate for both raters")


def print_plan(plan: PlanResult) -> None:
    print(plan.describe)
    if plan.labelled is not None and plan.width_now is not None:
        print(
            f"The {plan.labelled} labelled cases you have give an interval about "
            f"{plan.width_now:.3f} wide."
        )
        if plan.basis_note:
            print(plan.basis_note)
