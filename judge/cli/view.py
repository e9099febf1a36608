"""`judge view PATH...`: the results viewer in the browser (judge.view). Parsing and
printing only; the job, which binds the socket before it says the URL, is judge.app.view's.
Loaded only when `view` is chosen."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from judge.app.view import ViewRequest, serve_view
from judge.cli._common import add_rubrics_dir_option, say
from judge.cli._requests import request_from

__all__ = ["ViewRequest", "add_view", "run_view"]

VIEW_EXAMPLES = """\
examples:
  judge view graded.jsonl --cases examples/cases.jsonl
                                       one run; its case pages show question, contexts and answer
  judge view runs/ --labels labels.csv  every run under runs/, with people's labels and notes
  judge view base.jsonl candidate.jsonl --open
                                       open the browser; pick the two runs to compare
"""


def add_view(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "view",
        help="browse runs, records, comparisons and calibrations in the browser",
        description="Serve a local results viewer over records files, run folders (a "
        "multi-rubric pass, a jury run) or folders of many runs: runs list, records with "
        "filters, search and facets, each case's evidence, comparisons of two runs, the RAG "
        "two-by-two, the confusion matrix against people's labels, and a JSON API (/api). "
        "Loopback only unless --host says otherwise; the printed URL carries the token.",
        epilog=VIEW_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="a records file (JSONL or Parquet), a run folder or a folder of runs",
    )
    p.add_argument("--cases", type=Path, metavar="FILE", help="the cases the runs graded (JSONL)")
    p.add_argument(
        "--labels",
        type=Path,
        metavar="FILE",
        help="people's labels (CSV or JSONL: id, label, annotator, note)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port (0 = any free port)")
    p.add_argument("--open", action="store_true", help="open the page in a browser")
    p.add_argument(
        "--label-dir",
        type=Path,
        default=Path("judge-view-labels"),
        metavar="DIR",
        help="where 'label these' writes its labelling sets (%(default)s)",
    )
    add_rubrics_dir_option(p)
    p.set_defaults(run=run_view)


def run_view(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    serve_view(request_from(ViewRequest, args), env, say=say)
    return 0
