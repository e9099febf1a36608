"""``judge calibrate``: argument parsing and printing only; the work is in
``calibration.report.result``, which returns the result this prints."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.errors import CalibrationInputError
from calibration.inference.intervals import DEFAULT_RESAMPLES
from calibration.report.output import output_problem
from calibration.report.result import calibrate, write_report
from judge.cli._calibrate_gates import EXIT_GATE, add_gate_arguments, check_gates
from judge.cli._calibrate_jury import jury_section
from judge.cli._calibrate_plan import add_plan_arguments, run_plan
from judge.cli._calibrate_summary import print_summary
from judge.cli._flag_types import finite_number, non_negative_int, test_split

if TYPE_CHECKING:
    from judge.cli._requests import CalibrateRequest

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``calibrate`` arguments to ``parser``."""
    parser.add_argument(
        "judge_labels",
        metavar="JUDGE_LABELS",
        nargs="?",
        type=Path,
        help="judge labels or graded records (JSONL or CSV, with id)",
    )
    parser.add_argument(
        "human_labels",
        metavar="HUMAN_LABELS",
        nargs="?",
        type=Path,
        help="human labels (JSONL or CSV, with id; optional annotator column)",
    )
    parser.add_argument(
        "--judge-field",
        default="label",
        metavar="F",
        help="judge field to compare (default: label; score for numbers)",
    )
    parser.add_argument(
        "--human-field",
        default="label",
        metavar="F",
        help="human field to compare (default: label)",
    )
    parser.add_argument(
        "--weights",
        choices=["linear", "quadratic"],
        help="weighted kappa for ordinal labels; readiness uses it",
    )
    parser.add_argument(
        "--group-field",
        metavar="F",
        help="field grouping cases (e.g. dialogue) for per-group correlation",
    )
    parser.add_argument("--slice-field", metavar="F", help="field to break every statistic by")
    cut = parser.add_mutually_exclusive_group()
    cut.add_argument(
        "--threshold",
        type=finite_number,
        metavar="T",
        help="judge score >= T counts as the pass class",
    )
    cut.add_argument(
        "--fit-threshold",
        action="store_true",
        help="choose the threshold that maximises kappa (in-sample)",
    )
    parser.add_argument(
        "--labels",
        metavar="L1,L2,...",
        help="class order for the confusion matrix (comma-separated)",
    )
    parser.add_argument("--positive-label", metavar="L", help="the pass class of two classes")
    parser.add_argument(
        "--split",
        type=test_split,
        metavar="test=F",
        help="hold out a share F of the labelled cases, stratified by human label: fit on "
        "dev, judge readiness on test, report both",
    )
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="seed of the bootstrap and of --split (default: 0)",
    )
    parser.add_argument(
        "--bootstrap",
        type=non_negative_int,
        default=DEFAULT_RESAMPLES,
        metavar="N",
        help="bootstrap resamples (default: 2000; 0: no bootstrap intervals)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("calibration-report"),
        metavar="REPORT_DIR",
        help="report folder (default: calibration-report)",
    )
    parser.add_argument(
        "--cases",
        type=Path,
        metavar="FILE",
        help="the cases (JSONL or CSV): --html shows their text, --explain reads their "
        "answer length, contexts and slices",
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="why the judge errs: a logistic regression of disagreement on the cases' "
        "features (needs --cases)",
    )
    parser.add_argument(
        "--plan",
        action="store_true",
        help="say how many labelled cases a narrow interval needs, then stop "
        "(from the two files' pass rates and kappa when given)",
    )
    add_plan_arguments(parser)
    add_gate_arguments(parser)


def run(
    request: CalibrateRequest,
    on_result: Callable[[dict[str, Any]], list[Path]] | None = None,
) -> int:
    """Do the work for parsed arguments; 0 done, 2 bad input (``error: ...`` on stderr),
    3 a gate asked for (``--require-ready``, ``--fail-if``) failed.

    ``on_result`` (optional) receives the result once the report is written and returns
    the paths of anything more it wrote (how ``judge calibrate --html`` adds its report)."""
    if request.plan:
        return run_plan(request)
    if request.judge_labels is None or request.human_labels is None:
        print("error: JUDGE_LABELS and HUMAN_LABELS are required (or use --plan)", file=sys.stderr)
        return 2
    problem = output_problem(request.output, folder=True)
    if problem is not None:
        print(f"error: -o {problem}", file=sys.stderr)
        return 2
    labels = [v.strip() for v in request.labels.split(",")] if request.labels else None
    try:
        result = calibrate(
            request.judge_labels,
            request.human_labels,
            judge_field=request.judge_field,
            human_field=request.human_field,
            weights=request.weights,
            group_field=request.group_field,
            slice_field=request.slice_field,
            threshold=request.threshold,
            fit_threshold=request.fit_threshold,
            labels=labels,
            positive_label=request.positive_label,
            n_bootstrap=request.bootstrap,
            seed=request.seed,
            test_fraction=request.split,
            cases=request.cases,
            explain=request.explain,
        )
        jury = jury_section(
            request.judge_labels,
            request.human_labels,
            human_field=request.human_field,
            n_bootstrap=request.bootstrap,
            seed=request.seed,
        )
    except CalibrationInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if jury is not None:
        result["jury"] = jury
    gate = check_gates(result, request)
    if gate is not None:
        result["gate"] = gate
    try:
        paths = write_report(result, request.output)
    except OSError as exc:  # permissions, a full disk: said in one line, nothing half-read
        print(
            f"error: cannot write the report to {request.output}: {exc.strerror}", file=sys.stderr
        )
        return 2
    if on_result is not None:
        paths += on_result(result)
    print_summary(result, paths, sys.stdout)
    if gate is not None and gate["failed"]:
        return EXIT_GATE
    return 0
