"""`judge view PATH...`: the results viewer in the browser (judge.view). Parsing and
printing only. The server binds its socket before it prints the URL (with the session
token), so the address printed is already accepting connections; `--port 0` picks a free
port. Loaded only when `view` is chosen."""

from __future__ import annotations

import argparse
import secrets
import sys
import threading
import webbrowser
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from judge.cli._common import add_rubrics_dir_option, rubric_library
from judge.cli._listen import require_strong_token
from judge.cli._requests import request_from
from judge.cli.label import _bind
from judge.errors import UsageError
from judge.view import create_view_app, open_viewer
from judge.view.index import index_folder
from judge.web import serve

TOKEN_ENV = "JUDGE_VIEW_TOKEN"
VIEW_EXAMPLES = """\
examples:
  judge view graded.jsonl --cases examples/cases.jsonl
                                       one run; its case pages show question, contexts and answer
  judge view runs/ --labels labels.csv  every run under runs/, with people's labels and notes
  judge view base.jsonl candidate.jsonl --open
                                       open the browser; pick the two runs to compare
"""


@dataclass(frozen=True)
class ViewRequest:
    """`judge view`."""

    paths: tuple[Path, ...]
    cases: Path | None
    labels: Path | None
    host: str
    port: int
    open: bool
    label_dir: Path
    rubrics_dir: tuple[Path, ...]


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
    return view_command(request_from(ViewRequest, args), env)


def view_command(request: ViewRequest, env: Mapping[str, str]) -> int:
    """`judge view`, from its request."""
    if not 0 <= request.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {request.port}")
    token = env.get(TOKEN_ENV) or secrets.token_urlsafe(24)
    require_strong_token(
        request.host, token, f"set {TOKEN_ENV}, or leave it unset for a generated one"
    )
    viewer = open_viewer(
        request.paths,
        cases=request.cases,
        labels=request.labels,
        library=rubric_library(request, env),
        index_dir=index_folder(env),
        label_dir=request.label_dir,
    )
    sock = _bind(request.host, request.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/?token={token}"
    runs = len(viewer.catalog.runs)
    print(
        f"judge view: open {url}\njudge view: {runs} run{'s' * (runs != 1)}",
        file=sys.stderr,
        flush=True,
    )
    if request.open:
        threading.Timer(0.5, webbrowser.open, [url]).start()
    try:
        serve(create_view_app(viewer, token=token), sock)
    finally:
        viewer.engine.close()
    return 0
