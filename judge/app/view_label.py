""" "Label these" in `judge view` opens the labelling page: each set the viewer makes
(judge.view.people) is served by `judge label`'s own app (the same blind page, store and
queues, seed 0 as the set's plan has it) on the viewer's host, a free port and a token of
its own, in a thread of the viewer's process. At most MAX_PAGES are served at once: the
oldest is stopped for a new one (its store is on disk; `judge label ... --db` resumes it).
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn

from judge.app.listen import bind_page, page_url
from judge.label.app import LabelSession, create_label_app
from judge.label.choices import label_choices
from judge.label.labelset import LabelPlan, open_label_store
from judge.label.queue import Queues
from judge.label.store import LabelStore
from judge.rubric import RubricLibrary
from judge.web import server_config

MAX_PAGES = 4
STOP_WAIT_S = 5.0  # a page's server is given this long to finish its requests on close


@dataclass
class _Page:
    server: uvicorn.Server
    thread: threading.Thread
    store: LabelStore

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(STOP_WAIT_S)
        self.store.close()


@dataclass
class LabelPages:
    """The labelling pages one viewer has opened; `open` is the viewer's `open_labelling`."""

    host: str
    library: RubricLibrary
    _pages: list[_Page] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def open(self, cases: Path, db: Path, rubric_ref: str) -> str:
        """Serve the set `cases` (its store `db`) and return its page's URL, token in it."""
        rubric = self.library.load(rubric_ref)
        store = open_label_store(db, LabelPlan(cases, rubric))
        token = secrets.token_urlsafe(24)
        session = LabelSession(rubric, label_choices(rubric), store, Queues(store, 0), 0, token)
        sock = bind_page(self.host, 0)
        server = uvicorn.Server(server_config(create_label_app(session)))
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name=f"label {db.name}", daemon=True
        )
        thread.start()
        with self._lock:
            self._pages.append(_Page(server, thread, store))
            oldest = self._pages[:-MAX_PAGES]
            del self._pages[:-MAX_PAGES]
        for page in oldest:
            page.stop()
        return page_url(sock, token)

    def close(self) -> None:
        with self._lock:
            pages, self._pages = self._pages, []
        for page in pages:
            page.stop()
