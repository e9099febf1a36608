"""`judge serve`'s jobs in the viewer: its page at `/`, the job list as the runs list, each
done job's records a click away.

The service's job store is read through the two calls its routes use (`listing`,
`records_file`), so this module needs nothing of judge.service. Each done job is a run
whose id is the job id (stable across restarts, as job ids are), its group the job. A
job's cases file (`cases.jsonl` beside its records, in the SQLite store's job folder) is
joined to its records; a store that keeps records elsewhere (PostgreSQL) writes them once
into the service's own data folder. The indexes live there too (`<data dir>/view/`),
private as the records are, never in a shared cache.

Safe as the service is: `create_view_app` with the service's token (every request but the
static files needs it; the page takes `?token=`), the request guard with the service's
allowed hosts, this origin's Content-Security-Policy.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol

from starlette.routing import BaseRoute, Route

from judge.rubric import RubricLibrary
from judge.view.app import create_view_app
from judge.view.index import private_folder
from judge.view.query import Engine
from judge.view.runs import Catalog, ViewRun
from judge.view.viewer import Viewer

MAX_JOBS = 200  # the newest done jobs listed
PATHS = ("/", "/api/{rest:path}", "/static/{rest:path}")  # the viewer's, on the service


class JobStore(Protocol):
    """What the viewer asks of the service's job store (judge.service.stores.Store)."""

    @property
    def data_dir(self) -> Path: ...

    def listing(self, *, status: str | None, limit: int, before: Any) -> list[Any]: ...

    def records_file(self, job: Any, scratch: Path) -> Path: ...


class JobCatalog(Catalog):
    """The done jobs of a store, as runs; listed again when asked for the runs, or for a
    run it does not know yet."""

    def __init__(self, store: JobStore, scratch: Path) -> None:
        super().__init__()
        self.store = store
        self.scratch = scratch
        self._files: dict[str, Path] = {}
        self._lock = threading.Lock()

    def refresh(self) -> None:
        jobs = self.store.listing(status="done", limit=MAX_JOBS, before=None)
        with self._lock:
            self.runs = {job.id: self._run(job) for job in jobs}

    def run(self, run_id: str) -> ViewRun | None:
        if run_id not in self.runs:
            self.refresh()
        return self.runs.get(run_id)

    def _run(self, job: Any) -> ViewRun:
        records = self._files.get(job.id)
        if records is None:
            folder = self.scratch / job.id
            private_folder(folder)  # view/records/<job>, each part 0700 whatever the umask
            records = self.store.records_file(job, folder)  # a done job's: never changes
            self._files[job.id] = records
        cases = records.parent / "cases.jsonl"
        return ViewRun(job.id, records, job.id, cases if cases.is_file() else None)


def job_routes(
    store: JobStore, library: RubricLibrary, *, token: str | None, allowed_hosts: list[str]
) -> list[BaseRoute]:
    """Routes that hand `/`, `/api/...` and `/static/...` to a viewer of the store's jobs
    (added to the service's app after its own routes)."""
    folder = store.data_dir / "view"
    for part in (folder, folder / "records"):
        private_folder(part)  # case text below: 0700 (an older version's 0755 made private)
    catalog = JobCatalog(store, folder / "records")
    viewer = Viewer(catalog, Engine(), folder / "index", library)
    app = create_view_app(viewer, token=token, allowed_hosts=allowed_hosts)
    return [Route(path, app) for path in PATHS]
