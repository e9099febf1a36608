"""`judge gate`: a candidate judge against the baseline on a human-labelled anchor set.
Parsing and printing only (the options in `judge.cli._gate`); the job is `judge.app.gate`.
Loaded only when `gate` is chosen."""

from __future__ import annotations

import argparse

from judge.app.gate import gate_judges
from judge.cli import _gate as cli_gate
from judge.cli._common import EXIT_GATE, EXIT_OK
from judge.cli._help import GATE_EXAMPLES
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import GateRequest, request_from


def add_gate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gate",
        help="a candidate judge against the baseline on human labels",
        description="Compare a candidate judge's labels with the baseline's on the same "
        "human-labelled cases: kappa of each with a paired bootstrap interval of the "
        "difference and McNemar's exact test; exit 3 when the candidate fails a gate.",
        epilog=GATE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cli_gate.add_arguments(p)
    p.set_defaults(run=lambda args, env: run_gate(request_from(GateRequest, args)))


def run_gate(request: GateRequest) -> int:
    """`judge gate`, its `--json` and `--markdown` checked (and locked) like every output."""
    outputs = [
        Output(flag, path, kind)
        for flag, path, kind in (
            ("--json", request.json, "gate"),
            ("--markdown", request.markdown, "gate-markdown"),
        )
        if path is not None
    ]
    check_outputs(outputs, [request.baseline, request.candidate, request.labels], overwrite=None)
    done = gate_judges(request)
    print("\n".join(done.lines))
    return EXIT_GATE if done.failed else EXIT_OK
