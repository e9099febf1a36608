"""The view job: the results viewer (judge.view) over records files and run folders,
served on a socket bound before its URL (with the session token) is said, so the address
said is already accepting connections; `--port 0` picks a free port."""

from __future__ import annotations

import secrets
import threading
import webbrowser
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from judge.app.judging import Say, rubric_library
from judge.app.listen import bind_page, page_url, require_strong_token
from judge.app.view_label import LabelPages
from judge.errors import UsageError
from judge.view import create_view_app, open_viewer
from judge.view.index import index_folder
from judge.web import serve

TOKEN_ENV = "JUDGE_VIEW_TOKEN"


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


def serve_view(request: ViewRequest, env: Mapping[str, str], *, say: Say) -> None:
    """Open the runs, listen, say where, and serve until stopped."""
    if not 0 <= request.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {request.port}")
    token = env.get(TOKEN_ENV) or secrets.token_urlsafe(24)
    require_strong_token(
        request.host, token, f"set {TOKEN_ENV}, or leave it unset for a generated one"
    )
    library = rubric_library(request, env)
    pages = LabelPages(request.host, library)
    viewer = open_viewer(
        request.paths,
        cases=request.cases,
        labels=request.labels,
        library=library,
        index_dir=index_folder(env),
        label_dir=request.label_dir,
        open_labelling=pages.open,
    )
    sock = bind_page(request.host, request.port)
    url = page_url(sock, token)
    runs = len(viewer.catalog.runs)
    say(f"judge view: open {url}\njudge view: {runs} run{'s' * (runs != 1)}")
    if request.open:
        threading.Timer(0.5, webbrowser.open, [url]).start()
    try:
        serve(create_view_app(viewer, token=token), sock)
    finally:
        pages.close()
        viewer.engine.close()
