"""`judge calibrate --from TOOL`: the options that read another tool's judge output as the
judge side (the job is `judge.app.calibrate_foreign`)."""

from __future__ import annotations

import argparse

from judge.app.calibrate import FROM_CHOICES


def add_foreign_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("another tool's judge output")
    group.add_argument(
        "--from",
        dest="from_tool",
        choices=FROM_CHOICES,
        help="read JUDGE_LABELS as this tool's output (detected when not given): promptfoo "
        "results JSON, DeepEval test-run JSON, Inspect eval log (.json/.eval), Ragas CSV",
    )
    group.add_argument(
        "--metric",
        dest="foreign_metric",
        metavar="NAME",
        help="which of the tool's metrics or scorers is the judge (needed when it has several)",
    )
    group.add_argument(
        "--pass-labels",
        metavar="PASS,FAIL",
        help="the human file's names for the tool's pass and fail (e.g. faithful,unfaithful)",
    )
