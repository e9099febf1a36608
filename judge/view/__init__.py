"""`judge view`: the results viewer over runs, records, comparisons and calibrations.

Roles: `runs` (finding runs under the paths, their stable ids), `index` (each run's DuckDB
index, rebuilt when its files change), `query` (filters, search and sorts in SQL),
`facets` (their counts), `compare` (two runs: `judge compare`'s metrics and the cases that
moved), `people` (human labels, and "label these" into a `judge label` set), `viewer` (the
state the API answers from), `app` (the FastAPI app: pages and JSON API).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from judge.rubric import RubricLibrary
from judge.view.app import create_view_app, install_routes
from judge.view.index import index_folder
from judge.view.people import read_human_labels
from judge.view.query import Engine, RecordQuery
from judge.view.runs import Catalog, ViewRun, discover
from judge.view.viewer import Viewer

__all__ = [
    "Catalog",
    "Engine",
    "RecordQuery",
    "ViewRun",
    "Viewer",
    "create_view_app",
    "discover",
    "install_routes",
    "open_viewer",
]


def open_viewer(
    paths: Sequence[Path],
    *,
    cases: Path | None = None,
    labels: Path | None = None,
    library: RubricLibrary | None = None,
    index_dir: Path | None = None,
    label_dir: Path | None = None,
    open_labelling: Callable[[Path, Path, str], str] | None = None,
) -> Viewer:
    """A viewer over `paths` (UsageError, one line, for a bad path or label file);
    `open_labelling` serves a "label these" set's page and returns its URL."""
    catalog = discover(paths, cases)
    humans = read_human_labels(labels) if labels is not None else None
    return Viewer(
        catalog,
        Engine(humans),
        index_dir or index_folder(),
        library or RubricLibrary(),
        label_dir,
        open_labelling,
        labels,
    )
