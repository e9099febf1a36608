"""`judge label INPUT --rubric ID`: blind labelling in the browser; `judge label export`.
Parsing and printing only; the jobs are judge.app.label's.

The server binds its socket before it prints the URL (with the session token), so the
address printed is already accepting connections, and `--port 0` picks a free port.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from judge.app.label import (
    LabelRequest,
    check_export,
    export,
    export_sidecars,
    prepare_labelling,
    serve_labelling,
)
from judge.cli._common import add_rubrics_dir_option, say
from judge.cli._help import LABEL_EXAMPLES
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import request_from


def add_label_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "label",
        help="label cases blind in the browser; `judge label export` writes the CSV",
        description="Label cases blind in the browser (the judge's verdicts never reach the "
        "page), or export the labels: judge label export --db FILE -o labels.csv",
        epilog=LABEL_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "input",
        metavar="INPUT",
        help="cases (JSONL or CSV), a `judge watch --label-dir` folder, or `export`",
    )
    p.add_argument("--rubric", help="ID or ID@VERSION: its label set is offered")
    p.add_argument("--records", type=Path, help="graded records of INPUT: stratify the sample")
    p.add_argument(
        "--db",
        type=Path,
        help="label store (default: STEM.RUBRIC.labels.sqlite in the current folder, STEM being INPUT's name without its suffix)",
    )
    p.add_argument("-o", "--output", type=Path, help="export: the labels CSV to write")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="export: replace -o even when it is not a labels CSV this command wrote",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port (8765; 0 = any free port)")
    p.add_argument("--sample", type=int, help="label a sample of N cases (default: every case)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample and the orders (0)")
    p.add_argument(
        "--overlap", type=float, default=0.0, help="share of cases labelled by two people (0)"
    )
    p.add_argument("--annotator", help="name to label as (else the page asks)")
    add_rubrics_dir_option(p)
    p.set_defaults(run=run_label)


def run_label(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return label_command(request_from(LabelRequest, args), env)


def label_command(request: LabelRequest, env: Mapping[str, str]) -> int:
    """`judge label` and `judge label export`, from their request."""
    if request.input == "export":
        db, output = check_export(request)
        side = export_sidecars(db)
        outputs = [Output("-o", output, "labels")]
        check_outputs(outputs, [db], side_files=side, overwrite=request.overwrite)
        print(f"wrote {export(request)} labels to {output}", file=sys.stderr)
        return 0
    labelling = prepare_labelling(request, env)
    check_outputs([Output("--db", labelling.db, "label-store")], labelling.inputs, overwrite=None)
    serve_labelling(labelling, say=say)
    return 0
