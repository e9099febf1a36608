"""``judge calibrate --plan``: the label budget, from given rates or from label files."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from calibration.agreement.metrics import kappa_from_confusion
from calibration.decisions.plan import plan_sample_size, predicted_width
from calibration.errors import CalibrationInputError
from calibration.report.result import calibrate
from judge.cli._flag_types import kappa_value, rate, width

__all__ = ["add_plan_arguments", "run_plan"]

DEFAULT_KAPPA = 0.6


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


def _observed(args: argparse.Namespace) -> dict[str, Any]:
    """Rates and kappa of the labelled pairs in the two files (no intervals computed)."""
    result = calibrate(
        args.judge_labels,
        args.human_labels,
        judge_field=args.judge_field,
        human_field=args.human_field,
        threshold=args.threshold,
        fit_threshold=args.fit_threshold,
        labels=[v.strip() for v in args.labels.split(",")] if args.labels else None,
        positive_label=args.positive_label,
        n_bootstrap=0,
    )
    binary = result.get("binary")
    if not binary:
        raise CalibrationInputError(
            "--plan needs two pass/fail classes; these files have "
            f"{result.get('labels')}: use --threshold or --judge-rate/--human-rate",
            path=args.human_labels,
        )
    c = binary["counts"]
    # Kappa of the pass/fail pairs the rates come from (abstentions aside).
    kappa = kappa_from_confusion([[c["tn"], c["fp"]], [c["fn"], c["tp"]]])
    return {
        "n": sum(c.values()),
        "kappa": kappa if math.isfinite(kappa) else None,
        "human_rate": binary["human_pass_rate"],
        "judge_rate": binary["judge_pass_rate"],
    }


def _pick(flag: float | None, *fallbacks: float | None) -> float:
    for value in (flag, *fallbacks):
        if value is not None:
            return value
    raise AssertionError("the last fallback is never None")


def run_plan(args: argparse.Namespace) -> int:
    """Print the plan; 0 done, 2 bad input."""
    try:
        seen = _observed(args) if args.judge_labels and args.human_labels else {}
        human = _pick(args.human_rate, args.prevalence, seen.get("human_rate"), 0.5)
        judge = _pick(args.judge_rate, args.prevalence, seen.get("judge_rate"), human)
        kappa = _pick(args.kappa, seen.get("kappa"), DEFAULT_KAPPA)
        plan = plan_sample_size(kappa, args.width, human_rate=human, judge_rate=judge)
        print(plan.describe())
        if seen:
            now = predicted_width(seen["n"], kappa, human_rate=human, judge_rate=judge)
            print(f"The {seen['n']} labelled cases you have give an interval about {now:.3f} wide.")
    except (CalibrationInputError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
