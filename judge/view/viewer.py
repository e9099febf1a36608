"""The viewer's state: the catalog of runs, each run's index (built on first use, rebuilt
when its files change), the query engine, and the answers the API gives.

One run's file that cannot be read (moved away, a damaged Parquet, a line DuckDB refuses)
is that run's problem only: the runs list names it with its error (one line), its own
pages answer that error (422), and every other run is served as before."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from judge.errors import JudgeError, UsageError
from judge.rubric import Rubric, RubricLibrary
from judge.view.drift import DriftQuery
from judge.view.index import Source, ensure_index
from judge.view.people import queue_for_labelling
from judge.view.query import Engine, RecordQuery
from judge.view.runs import Catalog, ViewRun, regular

MAX_COMPARED = 16  # comparisons kept worked out, the oldest dropped first


class NotFound(LookupError):
    pass


class RunUnreadable(JudgeError):
    """A run's files cannot be read or indexed now (one line: what, and why)."""


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


@dataclass
class Viewer:
    """Everything one `judge view` (or `judge serve`'s page) answers from."""

    catalog: Catalog
    engine: Engine
    index_dir: Path
    library: RubricLibrary
    label_dir: Path | None = None
    # "label these" opens the set's page where the caller can serve one (judge.app.view):
    # (cases file, store, rubric ref) -> the page's URL
    open_labelling: Callable[[Path, Path, str], str] | None = None
    labels: Path | None = None  # the people's labels file (`--labels`), for the drift page
    _indexes: dict[str, tuple[str, Path]] = field(default_factory=dict)
    _overviews: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    _compared: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    _drifts: dict[tuple[Any, ...], dict[str, Any]] = field(default_factory=dict)
    _signals: dict[str, str | None] = field(default_factory=dict)  # run id -> RAG signal
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, run_id: str) -> ViewRun:
        run = self.catalog.run(run_id)
        if run is None:
            raise NotFound(f"no run {run_id!r} (GET /api/runs lists them)")
        return run

    def index(self, run: ViewRun) -> tuple[str, Path]:
        """(stamp, index file) of a run, rebuilt first if its files changed."""
        try:
            return self._index(run)
        except (OSError, ValueError, duckdb.Error) as exc:
            raise RunUnreadable(f"{run.path.name} cannot be read: {_first_line(exc)}") from None

    def _index(self, run: ViewRun) -> tuple[str, Path]:
        source = Source(run.path, run.cases)
        for path in (run.path, run.cases):  # replaced by a FIFO or a device since found?
            if path is not None and not regular(path):
                raise ValueError(f"{path.name} is not a regular file")
        stamp = source.stamp()
        with self._lock:
            known = self._indexes.get(run.id)
            if known is not None and known[0] == stamp:
                return known
            if known is not None:
                self.engine.detach(known[1])
                del self._indexes[run.id]
                # what was worked out from the old file goes with it: a run that grows
                # while served must not grow these too
                for key in [k for k in self._overviews if k[0] == run.id]:
                    del self._overviews[key]
                self._compared = {k: v for k, v in self._compared.items() if known[0] not in k}
            path = ensure_index(self.index_dir, source)
            self._indexes[run.id] = (stamp, path)
            return stamp, path

    # ---- runs -----------------------------------------------------------------------------

    def runs(self) -> list[dict[str, Any]]:
        self.catalog.refresh()
        out = []
        for run in list(self.catalog.runs.values()):
            try:
                out.append(self.describe(run))
            except RunUnreadable as exc:
                out.append(_unreadable(run, str(exc)))
        return out

    def describe(self, run: ViewRun) -> dict[str, Any]:
        stamp, path = self.index(run)
        overview = self._overviews.get((run.id, stamp))
        if overview is None:
            try:
                overview = self.engine.overview(path)
            except duckdb.Error as exc:
                raise RunUnreadable(f"{run.path.name}: {_first_line(exc)}") from None
            self._overviews[(run.id, stamp)] = overview
        first = json.loads(overview["first"]) if overview["first"] else {}
        judge = first.get("judge") or {}
        return {
            "id": run.id,
            "path": str(run.path),
            "group": run.group,
            "rubric": first.get("rubric"),
            "rubric_version": first.get("rubric_version"),
            "rubric_sha256": first.get("rubric_sha256"),
            "judge": {
                "model": judge.get("model"),
                "system_fingerprint": judge.get("system_fingerprint"),
                "judge_id": first.get("judge_id"),
            },
            "jury": "panel" in first,
            "date": _modified(run.path),
            "n": overview["n"],
            "status_counts": overview["status_counts"],
            "headline": {
                "metric": "mean score",
                "value": overview["mean_score"],
                "ci95": overview["mean_score_ci95"],
                "n": overview["scored"],
                "interval": "Student t, over the ok records' scores",
            },
            "histogram": overview["histogram"],
            "tokens": overview["tokens"],
            "cost_usd": _cost(run),
            "cases": str(run.cases) if run.cases else None,
            "outputs": [{"id": o.id, "kind": o.kind, "path": str(o.path)} for o in run.outputs],
            "has_labels": bool(self.engine.humans.by_id),
            "rag": self.rag_applies(run),
        }

    def rag_applies(self, run: ViewRun) -> bool:
        """Whether the RAG two-by-two applies to the run: a summary of its pass carries one,
        or its rubric gives a retrieval or a generation signal and a run of its group gives
        the other (as the RAG page then computes it)."""
        for output in run.outputs:
            if output.kind == "summary":
                try:
                    if isinstance(output.read().get("diagnosis"), dict):
                        return True
                except (JudgeError, OSError, ValueError, AttributeError):
                    continue
        if self._signal_of(run) is None:
            return False
        group = [r for r in self.catalog.runs.values() if r.group == run.group]
        return {self._signal_of(r) for r in group} >= {"retrieval", "generation"}

    def _signal_of(self, run: ViewRun) -> str | None:
        """The signal (retrieval | generation) its rubric's kind gives, or None; read once
        a run from its first record."""
        if run.id not in self._signals:
            signal = None
            try:
                _, path = self.index(run)
                first = json.loads(self.engine.overview(path)["first"] or "{}")
                ref = f"{first.get('rubric')}@{first.get('rubric_version')}"
                signal = getattr(self.library.load(ref).behaviour, "signal", None)
            except (JudgeError, duckdb.Error, ValueError, OSError, TypeError):
                signal = None
            self._signals[run.id] = signal if signal in ("retrieval", "generation") else None
        return self._signals[run.id]

    # ---- records --------------------------------------------------------------------------

    def records(self, run_id: str, query: RecordQuery) -> dict[str, Any]:
        _, path = self.index(self.run(run_id))
        return self.engine.records(path, query)

    def record(self, run_id: str, case_id: str) -> dict[str, Any]:
        run = self.run(run_id)
        _, path = self.index(run)
        found = self.engine.record(path, case_id)
        if found is None:
            raise NotFound(f"run {run_id!r} has no record of id {case_id!r}")
        record, case = found
        return {
            "record": json.loads(record),
            "case": json.loads(case) if case else None,
            "human": self.engine.humans.by_id.get(case_id, []),
            "run": run.id,
        }

    def confusion(self, run_id: str) -> dict[str, Any]:
        _, path = self.index(self.run(run_id))
        return self.engine.confusion(path)

    def drift(self, run_id: str, query: DriftQuery) -> dict[str, Any]:
        """`judge drift`'s report for the run's records and the viewer's labels (kept
        worked out while neither file changes: each window bootstraps)."""
        run = self.run(run_id)
        if self.labels is None:
            raise UsageError(
                "this viewer was started without --labels: drift needs people's labels"
            )
        stamp, _ = self.index(run)
        key = (run.id, stamp, _stamp(self.labels), query)
        found = self._drifts.get(key)
        if found is None:
            from judge.view.drift import run_drift  # the statistics: on use only

            found = run_drift(run.path, self.labels, query)
            while len(self._drifts) >= MAX_COMPARED:
                del self._drifts[next(iter(self._drifts))]
            self._drifts[key] = found
        return {"run": run.id, **found}

    # ---- comparisons, RAG, outputs ----------------------------------------------------------

    def compare(self, base_id: str, candidate_id: str) -> dict[str, Any]:
        base, candidate = self.run(base_id), self.run(candidate_id)
        _refuse_other_rubrics(self.describe(base), self.describe(candidate))
        base_stamp, base_index = self.index(base)
        cand_stamp, cand_index = self.index(candidate)
        key = (base_stamp, cand_stamp)
        cached = self._compared.get(key)
        if cached is None:
            from judge.view.compare import metrics, moved_cases  # judge compare's statistics

            figures, notes = metrics(base.path, candidate.path, self.library)
            moved = moved_cases(self.engine, base_index, cand_index)
            cached = {"metrics": figures, "notes": notes, **moved}
            while len(self._compared) >= MAX_COMPARED:  # each holds lists of case ids
                del self._compared[next(iter(self._compared))]
            self._compared[key] = cached
        return {
            "base": base_id,
            "candidate": candidate_id,
            "base_path": str(base.path),
            "candidate_path": str(candidate.path),
            **cached,
        }

    def rag(self, run_id: str) -> dict[str, Any]:
        """The two-by-two of the run's group: a recognised summary's, else computed from the
        group's records files (judge.engine.diagnosis) with each rubric's own threshold."""
        run = self.run(run_id)
        from judge.engine.diagnosis import diagnose_files, signal_sources  # the RAG page only

        group = [r for r in self.catalog.runs.values() if r.group == run.group]
        for output in run.outputs:
            if output.kind == "summary":
                data = output.read()
                if isinstance(data.get("diagnosis"), dict):
                    return {"diagnosis": data["diagnosis"], "runs": _by_ref(self, group)}
        refs = _by_ref(self, group)
        rubrics: list[Rubric] = []
        for ref in refs:
            try:
                rubrics.append(self.library.load(ref))
            except JudgeError:
                continue
        files = {ref: self.run(refs[ref]).path for ref in refs}
        try:
            diagnosis = diagnose_files(files, signal_sources(rubrics))
        except RuntimeError as exc:
            raise UsageError(str(exc)) from None
        if diagnosis is None:
            raise NotFound(
                f"group {run.group!r} has no pass of a retrieval and a generation rubric"
            )
        return {"diagnosis": diagnosis, "runs": refs}

    def output(self, output_id: str) -> dict[str, Any]:
        found = self.catalog.outputs.get(output_id)
        if found is None:
            raise NotFound(f"no output {output_id!r}")
        return {"id": found.id, "kind": found.kind, "path": str(found.path), "data": found.read()}

    def label(self, run_id: str, ids: list[str]) -> dict[str, Any]:
        if self.label_dir is None:
            raise UsageError("this viewer was started without a folder for labelling sets")
        run = self.run(run_id)
        _, path = self.index(run)
        described = self.describe(run)
        cases = [
            c for case_id in ids if (found := self.engine.record(path, case_id)) and (c := found[1])
        ]
        if len(cases) < len(ids):
            raise UsageError(
                f"{len(ids) - len(cases)} of the {len(ids)} cases have no input here: "
                "start the viewer with --cases FILE"
            )
        ref = f"{described['rubric']}@{described['rubric_version']}"
        queued = queue_for_labelling(self.label_dir, run.id, ref, cases, self.library)
        if self.open_labelling is not None:
            queued["url"] = self.open_labelling(Path(queued["cases"]), Path(queued["db"]), ref)
        return queued


def _refuse_other_rubrics(base: dict[str, Any], candidate: dict[str, Any]) -> None:
    """UsageError for runs of different rubrics: `judge compare` finds no metric both have,
    and a case's scores under two rubrics are not a regression or an improvement."""
    if base["rubric"] != candidate["rubric"]:
        raise UsageError(
            f"the base {base['path']} grades {base['rubric']} and the candidate "
            f"{candidate['path']} grades {candidate['rubric']}: runs of different rubrics are "
            "not compared (judge compare: no metric both runs have)"
        )


def _unreadable(run: ViewRun, error: str) -> dict[str, Any]:
    """A run the list names with its error, in the shape of the others (nothing counted)."""
    return {
        "id": run.id,
        "path": str(run.path),
        "group": run.group,
        "error": error,
        "rubric": None,
        "rubric_version": None,
        "rubric_sha256": None,
        "judge": {"model": None, "system_fingerprint": None, "judge_id": None},
        "jury": False,
        "date": None,
        "n": 0,
        "status_counts": {},
        "headline": {"metric": "mean score", "value": None, "ci95": None, "n": 0},
        "histogram": None,
        "tokens": {"prompt": 0, "completion": 0},
        "cost_usd": None,
        "cases": None,
        "outputs": [],
        "has_labels": False,
    }


def _by_ref(viewer: Viewer, runs: list[ViewRun]) -> dict[str, str]:
    """rubric@version -> run id, for a group's runs."""
    out = {}
    for run in runs:
        described = viewer.describe(run)
        out[f"{described['rubric']}@{described['rubric_version']}"] = run.id
    return out


def _stamp(path: Path) -> tuple[int, int]:
    """A labels file's size and time: a file edited since gives other figures."""
    try:
        info = path.stat()
    except OSError:
        return (-1, -1)
    return (info.st_size, info.st_mtime_ns)


def _modified(path: Path) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")


def _cost(run: ViewRun) -> float | None:
    for output in run.outputs:
        if output.kind == "summary":
            data = output.read()
            value = data.get("estimated_cost_usd")
            return float(value) if isinstance(value, int | float) else None
    return None
