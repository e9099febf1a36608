"""`judge label INPUT --rubric ID`: blind labelling in the browser; `judge label export`.

The server binds its socket before it prints the URL (with the session token), so the
address printed is already accepting connections, and `--port 0` picks a free port.
"""

from __future__ import annotations

import argparse
import secrets
import socket
import sys
from collections.abc import Mapping
from pathlib import Path

from judge.cli._common import add_rubrics_dir_option, rubric_library
from judge.cli._help import LABEL_EXAMPLES
from judge.cli._listen import require_strong_token
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import LabelRequest, request_from
from judge.errors import UsageError
from judge.label.app import ANNOTATOR, LabelSession, create_label_app
from judge.label.choices import label_choices
from judge.label.export import export_labels
from judge.label.labelset import LabelPlan, describe, open_label_store
from judge.label.queue import Queues
from judge.rubric import load_rubric
from judge.web import serve

TOKEN_ENV = "JUDGE_LABEL_TOKEN"


def add_label_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "label",
        help="label cases blind in the browser; `judge label export` writes the CSV",
        description="Label cases blind in the browser (the judge's verdicts never reach the "
        "page), or export the labels: judge label export --db FILE -o labels.csv",
        epilog=LABEL_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", metavar="INPUT", help="cases (JSONL or CSV), or `export`")
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
        return _run_export(request)
    return _run_server(request, env)


def _run_export(request: LabelRequest) -> int:
    if request.db is None or request.output is None:
        raise UsageError("judge label export needs --db FILE and -o labels.csv")
    output = Output("-o", request.output, "labels")
    check_outputs(
        [output], [request.db], side_files=_sidecars(request.db), overwrite=request.overwrite
    )
    count = export_labels(request.db, request.output)
    print(f"wrote {count} labels to {request.output}", file=sys.stderr)
    return 0


def _sidecars(db: Path) -> list[Path]:
    """The SQLite files beside a label store: its write-ahead log and shared memory."""
    return [db.with_name(db.name + suffix) for suffix in ("-wal", "-shm", "-journal")]


def _check(request: LabelRequest) -> None:
    if not request.rubric:
        raise UsageError("--rubric is required, e.g. --rubric faithfulness")
    if not 0 <= request.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {request.port}")
    if request.sample is not None and request.sample < 1:
        raise UsageError(f"--sample must be at least 1, got {request.sample}")
    if not 0 <= request.overlap <= 1:
        raise UsageError(f"--overlap must be between 0 and 1, got {request.overlap}")


def _run_server(request: LabelRequest, env: Mapping[str, str]) -> int:
    _check(request)
    if request.annotator is not None and not ANNOTATOR.match(request.annotator):
        raise UsageError("--annotator: letters, digits, spaces, . @ - or _, up to 64")
    token = env.get(TOKEN_ENV) or secrets.token_urlsafe(24)
    require_strong_token(
        request.host, token, f"set {TOKEN_ENV}, or leave it unset for a generated one"
    )
    assert request.rubric is not None  # _check says --rubric is required
    rubric = load_rubric(request.rubric, rubric_library(request, env))
    choices = label_choices(rubric)  # before the store: an unlabelled kind creates nothing
    source = Path(request.input)
    plan = LabelPlan(source, rubric, request.records, request.sample, request.seed, request.overlap)
    db = request.db or Path(f"{source.stem}.{rubric.id}.labels.sqlite")
    inputs = [source, *([request.records] if request.records else [])]
    check_outputs([Output("--db", db, "label-store")], inputs, overwrite=None)
    store = open_label_store(db, plan)
    session = LabelSession(
        rubric,
        choices,
        store,
        Queues(store, request.seed),
        request.seed,
        token,
        request.annotator,
    )
    sock = _bind(request.host, request.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(
        f"judge label: open http://{shown}:{port}/?token={token}\n"
        f"judge label: {rubric.ref}, {describe(store)}; labels saved to {db}",
        file=sys.stderr,
        flush=True,
    )
    try:
        serve(create_label_app(session), sock)
    finally:
        store.close()
    return 0


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    return sock
