"""`judge certify`: a certified confidence threshold per rung of a cascade of judges, from
human labels. Parsing and printing only; the job is `judge.app.certify`. Loaded only when
`certify` is chosen."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from judge.app.certify import CertifyRequest, run_certify
from judge.cli._flag_types import non_negative_int, rate
from judge.cli._help import CERTIFY_EXAMPLES
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import request_from


def add_certify(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "certify",
        help="a certified confidence threshold per judge of a cascade, from human labels",
        description="For each RECORDS file in order (one rung of a cascade, cheapest judge "
        "first), the lowest confidence threshold at which the judge's verdicts agree with "
        "people on at least --agreement of the cases it decides, with probability at least "
        "1 - --delta; cases below go to the next rung, the rest to people. Exit 0: a "
        "certificate; 3: nothing certifiable at that agreement; 1: too few labels.",
        epilog=CERTIFY_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("records", nargs="+", type=Path, metavar="RECORDS",
                   help="graded records with a confidence (or JSONL/CSV with id, label and "
                   "confidence), one file per rung, cheapest first")  # fmt: skip
    p.add_argument("--labels", type=Path, required=True, metavar="HUMAN",
                   help="human labels of some of those ids (JSONL or CSV with id and label)")  # fmt: skip
    p.add_argument("--agreement", type=rate, required=True, metavar="A",
                   help="the agreement with people to guarantee on decided cases (e.g. 0.9)")  # fmt: skip
    p.add_argument("--delta", type=rate, default=0.1, metavar="D",
                   help="the chance the guarantee may fail (default: 0.1)")  # fmt: skip
    p.add_argument("--min-decided", type=non_negative_int, default=30, metavar="N",
                   help="labelled cases a rung must decide for a threshold (default: 30)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the certificate as JSON")
    p.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="write the certificate (JSON) to FILE")  # fmt: skip
    p.add_argument("--html", type=Path, metavar="REPORT.html",
                   help="also write an HTML report with the coverage-risk curves")  # fmt: skip
    p.set_defaults(run=lambda args, env: run_certify_command(request_from(CertifyRequest, args)))


def run_certify_command(request: CertifyRequest) -> int:
    """`judge certify`: the certificate on stdout (a table, or JSON with `--json`), its
    status on stderr; exit 0, 3 or 1 by the status."""
    outputs = [
        Output(flag, path, kind)
        for flag, path, kind in (("--html", request.html, "html"), ("-o", request.output, "certificate"))
        if path is not None
    ]  # fmt: skip
    check_outputs(outputs, [*request.records, request.labels], overwrite=None)
    done = run_certify(request)
    print(done.text, end="")
    status = done.certificate["status"]
    print(f"certify: {status['verdict']}: {status['reason']}", file=sys.stderr)
    return done.exit_code
