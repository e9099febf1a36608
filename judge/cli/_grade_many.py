"""`judge grade INPUT --rubric A,B,C -o OUT/`: the options of the two-by-two diagnosis (the
pass itself: `judge.app.grade_many`)."""

from __future__ import annotations

import argparse

from judge.app.grade_many import SIGNALS


def add_diagnosis_options(parser: argparse.ArgumentParser) -> None:
    """The thresholds of the two-by-two diagnosis (a pass of several rubrics)."""
    group = parser.add_argument_group("two-by-two diagnosis (several rubrics in one pass)")
    for signal in SIGNALS:
        group.add_argument(
            f"--{signal}-threshold",
            type=float,
            metavar="T",
            help=f"a case's {signal} signal is high when its score >= T (default: each "
            "rubric's own threshold, shown in the summary)",
        )
