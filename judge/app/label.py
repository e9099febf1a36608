"""The label jobs: blind labelling in the browser (the judge's verdicts never reach the
page), and `export`, the labels CSV that `judge calibrate` reads.

Labelling goes in two steps, so that a caller can guard the label store in between:
`prepare_labelling` checks the request and reads the rubric (nothing is created yet),
`serve_labelling` opens the store, binds the socket, says the URL (with the session
token) and serves until stopped.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from judge.app.judging import Say, rubric_library
from judge.app.listen import bind_page, page_url, require_strong_token
from judge.errors import UsageError
from judge.label.app import ANNOTATOR, LabelSession, create_label_app
from judge.label.choices import Choice, label_choices
from judge.label.export import export_labels
from judge.label.labelset import LabelPlan, describe, open_label_store
from judge.label.production import production_db, reopen_production_store
from judge.label.queue import Queues
from judge.rubric import Rubric, load_rubric
from judge.web import serve

TOKEN_ENV = "JUDGE_LABEL_TOKEN"


@dataclass(frozen=True)
class LabelRequest:
    """`judge label` and `judge label export` (INPUT is `export` then)."""

    input: str
    rubric: str | None
    records: Path | None
    db: Path | None
    output: Path | None
    overwrite: bool
    host: str
    port: int
    sample: int | None
    seed: int
    overlap: float
    annotator: str | None
    rubrics_dir: tuple[Path, ...]


@dataclass(frozen=True)
class Labelling:
    """A checked labelling request: its rubric and label choices, the store it will
    write (`db`) and the files it reads (`inputs`)."""

    request: LabelRequest
    rubric: Rubric
    choices: list[Choice]
    plan: LabelPlan
    db: Path
    inputs: list[Path]
    token: str
    production: bool = False  # INPUT is a `judge watch --label-dir` folder


def export_sidecars(db: Path) -> list[Path]:
    """The SQLite files beside a label store: its write-ahead log and shared memory."""
    return [db.with_name(db.name + suffix) for suffix in ("-wal", "-shm", "-journal")]


def check_export(request: LabelRequest) -> tuple[Path, Path]:
    """The store to read and the CSV to write, or a UsageError when one is missing."""
    if request.db is None or request.output is None:
        raise UsageError("judge label export needs --db FILE and -o labels.csv")
    return request.db, request.output


def export(request: LabelRequest) -> int:
    """Write the labels CSV; the number of labels written."""
    db, output = check_export(request)
    return export_labels(db, output)


def prepare_labelling(request: LabelRequest, env: Mapping[str, str]) -> Labelling:
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
    if source.is_dir():  # `judge watch --label-dir`'s folder: a set that grows
        db = production_db(source, rubric)
        return Labelling(request, rubric, choices, plan, db, [], token, production=True)
    db = request.db or Path(f"{source.stem}.{rubric.id}.labels.sqlite")
    inputs = [source, *([request.records] if request.records else [])]
    return Labelling(request, rubric, choices, plan, db, inputs, token)


def serve_labelling(labelling: Labelling, *, say: Say) -> None:
    """Open the store, listen, say where, and serve until stopped."""
    request = labelling.request
    if labelling.production:
        store = reopen_production_store(labelling.db, labelling.rubric)
    else:
        store = open_label_store(labelling.db, labelling.plan)
    session = LabelSession(
        labelling.rubric,
        labelling.choices,
        store,
        Queues(store, request.seed),
        request.seed,
        labelling.token,
        request.annotator,
    )
    sock = bind_page(request.host, request.port)
    say(
        f"judge label: open {page_url(sock, labelling.token)}\n"
        f"judge label: {labelling.rubric.ref}, {describe(store)}; labels saved to {labelling.db}"
    )
    try:
        serve(create_label_app(session), sock)
    finally:
        store.close()


def _check(request: LabelRequest) -> None:
    if not request.rubric:
        raise UsageError("--rubric is required, e.g. --rubric faithfulness")
    if not 0 <= request.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {request.port}")
    if request.sample is not None and request.sample < 1:
        raise UsageError(f"--sample must be at least 1, got {request.sample}")
    if not 0 <= request.overlap <= 1:
        raise UsageError(f"--overlap must be between 0 and 1, got {request.overlap}")
