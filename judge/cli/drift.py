"""`judge drift`: the judge's agreement with people window by window, and an alarm. Parsing
and printing only; the job is `judge.app.drift`. Loaded only when `drift` is chosen."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from judge.app.drift import DriftRequest, run_drift
from judge.cli._flag_types import non_negative_int, rate
from judge.cli._help import DRIFT_EXAMPLES
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import request_from


def add_drift(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "drift",
        help="agreement with people window by window; exit 3 when it drops",
        description="The judge's agreement with human labels in windows of time or of "
        "count, each against a reference, with an alarm whose chance of a false alarm over "
        "all windows is --alpha. Exit 3: alarm; 0: none; 4: too few labels to tell.",
        epilog=DRIFT_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _arguments(p)
    p.set_defaults(run=lambda args, env: run_drift_command(request_from(DriftRequest, args)))


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("records", nargs="+", type=Path, metavar="RECORDS",
                   help="graded records (JSONL or CSV with id and label), in stream order")  # fmt: skip
    p.add_argument("--labels", type=Path, required=True, metavar="LABELS",
                   help="human labels of some of those ids (JSONL or CSV), or a judge label "
                   "store (its .labels.sqlite, or the folder holding it)")  # fmt: skip
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument(
        "--by", choices=("day", "week", "month"), help="windows by calendar period (UTC)"
    )
    how.add_argument("--window", type=non_negative_int, metavar="N",
                     help="windows of N labelled cases each, in file order")  # fmt: skip
    _pairs_arguments(p)
    _output_arguments(p)


def _pairs_arguments(p: argparse.ArgumentParser) -> None:
    """Where a pair's time, group and slice come from, and what it is compared with."""
    p.add_argument("--time-field", metavar="FIELD",
                   help="the records' time field for --by (default: case_time, the case's own time, "
                   "then graded_at; the output says which)")  # fmt: skip
    p.add_argument("--group-field", metavar="FIELD",
                   help="each pair's group (a conversation's id for its turns): the alarm's "
                   "null resamples whole groups, whose pairs need not be independent")  # fmt: skip
    p.add_argument("--slice-field", metavar="FIELD",
                   help="each pair's slice: every slice windowed and tested, all under one "
                   "threshold, so the chance of any false alarm over them is --alpha")  # fmt: skip
    p.add_argument("--reference", default="first", metavar="first|past|WINDOW|FILE",
                   help="compare with the first window (default), all the windows before "
                   "each (past), a named window, or a calibration.json of judge calibrate "
                   "-o DIR")  # fmt: skip
    p.add_argument("--alpha", type=rate, default=0.05,
                   help="false-alarm rate over the whole stream (default: 0.05)")  # fmt: skip
    p.add_argument("--min-labels", type=non_negative_int, default=30, metavar="N",
                   help="labels a window needs for a verdict (default: 30)")  # fmt: skip
    p.add_argument("--positive-label", metavar="L",
                   help="the pass class the pass-rate columns count (default: the records' "
                   "rubric's pass label, e.g. match, faithful; said in the output)")  # fmt: skip


def _output_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the report as JSON, not a table")
    p.add_argument(
        "--html", type=Path, metavar="REPORT.html", help="also write an HTML report with the chart"
    )
    p.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write what is printed to FILE"
    )
    p.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="seed of the bootstrap and the alarm's simulation (0)",
    )
    p.add_argument("--bootstrap", type=non_negative_int, default=2000, metavar="N",
                   help="bootstrap resamples of each window's intervals (default: 2000)")  # fmt: skip


def run_drift_command(request: DriftRequest) -> int:
    """`judge drift`, its outputs checked (and locked) like every output; the report on
    stdout unless `-o` takes it, the verdict on stderr; exit 3, 0 or 4 by the verdict."""
    outputs = [
        Output(flag, path, kind)
        for flag, path, kind in (("--html", request.html, "html"), ("-o", request.output, "drift"))
        if path is not None
    ]
    check_outputs(outputs, [*request.records, request.labels], overwrite=None)
    done = run_drift(request)
    if request.output is None:
        print(done.text, end="")
    status = done.report["status"]
    caveat = f" ({status['caveat']})" if status.get("caveat") else ""
    print(f"drift: {status['verdict']}: {status['reason']}{caveat}", file=sys.stderr)
    return done.exit_code
