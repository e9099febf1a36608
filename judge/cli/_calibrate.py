"""``judge calibrate``: argument parsing and printing only; the job is
``judge.app.calibrate``, which returns the result this prints."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from judge.app.calibrate import DEFAULT_RESAMPLES, calibrate_labels, plan_labels
from judge.cli._calibrate_gates import EXIT_GATE, add_gate_arguments
from judge.cli._calibrate_plan import add_plan_arguments, print_plan
from judge.cli._calibrate_summary import print_summary
from judge.cli._flag_types import finite_number, non_negative_int, resamples, test_split
from judge.cli._requests import CalibrateRequest, request_from
from judge.errors import UsageError

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``calibrate`` arguments to ``parser``."""
    _add_files(parser)
    _add_cut(parser)
    _add_runs(parser)
    add_plan_arguments(parser)
    add_gate_arguments(parser)


def _add_files(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("judge_labels", metavar="JUDGE_LABELS", nargs="?", type=Path,
        help="judge labels or graded records (JSONL or CSV, with id)")  # fmt: skip
    add("human_labels", metavar="HUMAN_LABELS", nargs="?", type=Path,
        help="human labels (JSONL or CSV, with id; optional annotator column)")  # fmt: skip
    add("--judge-field", default="label", metavar="F",
        help="judge field to compare (default: label; score for numbers)")  # fmt: skip
    add("--human-field", default="label", metavar="F",
        help="human field to compare (default: label)")  # fmt: skip
    add("--weights", choices=["linear", "quadratic"],
        help="weighted kappa for ordinal labels; readiness uses it")  # fmt: skip
    add("--group-field", metavar="F",
        help="field grouping cases (e.g. dialogue) for per-group correlation")  # fmt: skip
    add("--slice-field", metavar="F", help="field to break every statistic by")


def _add_cut(parser: argparse.ArgumentParser) -> None:
    cut = parser.add_mutually_exclusive_group()
    cut.add_argument("--threshold", type=finite_number, metavar="T",
                     help="judge score >= T counts as the pass class")  # fmt: skip
    cut.add_argument("--fit-threshold", action="store_true",
                     help="choose the threshold that maximises kappa (in-sample)")  # fmt: skip
    parser.add_argument("--labels", metavar="L1,L2,...",
                        help="class order for the confusion matrix (comma-separated)")  # fmt: skip
    parser.add_argument("--positive-label", metavar="L", help="the pass class of two classes")
    parser.add_argument("--split", type=test_split, metavar="test=F",
                        help="hold out a share F of the labelled cases, stratified by human "
                        "label: fit on dev, judge readiness on test, report both")  # fmt: skip


def _add_runs(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--seed", type=non_negative_int, default=0,
        help="seed of the bootstrap and of --split (default: 0)")  # fmt: skip
    add("--bootstrap", type=resamples, default=DEFAULT_RESAMPLES, metavar="N",
        help="bootstrap resamples (default: 2000; 0: no bootstrap intervals)")  # fmt: skip
    add("-o", "--output", type=Path, default=Path("calibration-report"), metavar="REPORT_DIR",
        help="report folder (default: calibration-report)")  # fmt: skip
    add("--cases", type=Path, metavar="FILE",
        help="the cases (JSONL or CSV): --html shows their text, --explain reads their "
        "answer length, contexts and slices")  # fmt: skip
    add("--explain", action="store_true",
        help="why the judge errs: a logistic regression of disagreement on the cases' "
        "features (needs --cases)")  # fmt: skip
    add("--plan", action="store_true",
        help="say how many labelled cases a narrow interval needs, then stop "
        "(from the two files' pass rates and kappa when given)")  # fmt: skip


def run(args: CalibrateRequest | argparse.Namespace) -> int:
    """Do the work for parsed arguments; 0 done, 2 bad input (``error: ...`` on stderr),
    3 a gate asked for (``--require-ready``, ``--fail-if``) failed."""
    request = args if isinstance(args, CalibrateRequest) else request_from(CalibrateRequest, args)
    try:
        if request.plan:
            print_plan(plan_labels(request))
            return 0
        done = calibrate_labels(request)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_summary(done.result, done.paths, sys.stdout)
    return EXIT_GATE if done.gate_failed else 0
