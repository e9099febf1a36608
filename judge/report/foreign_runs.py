"""Another tool's judge output as a run for `judge compare`: promptfoo results JSON,
DeepEval test-run JSON, Inspect eval logs, Ragas result CSV (`calibration.foreign`).

Each of the tool's metrics becomes a rubric of the run named by the metric, lower-cased
with `_` for spaces (DeepEval's `Answer Relevancy` is `answer_relevancy`, as Ragas names
it; promptfoo's overall score is `promptfoo`), with its per-case score as `METRIC.score`.
Anything else is read by `judge.report.runs.read_run`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from calibration.errors import CalibrationInputError
from calibration.foreign import detect_format, foreign_metrics, read_foreign
from judge.errors import UsageError
from judge.report.runs import RubricRecords, Run, read_run
from judge.rubric import RubricLibrary


def read_any_run(path: Path, library: RubricLibrary, tool: str | None = None) -> Run:
    """A run from our records (a file or a folder) or from a tool's output (`tool`, or
    detected for a file)."""
    try:
        tool = tool or (detect_format(path) if path.is_file() else None)
        return read_run(path, library) if tool is None else foreign_run(path, tool)
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None


def metric_id(tool: str, metric: str | None) -> str:
    """`Answer Relevancy` -> `answer_relevancy`; promptfoo's overall score -> `promptfoo`.

    >>> metric_id("deepeval", "Answer Relevancy"), metric_id("promptfoo", None)
    ('answer_relevancy', 'promptfoo')
    """
    return tool if metric is None else re.sub(r"[^a-z0-9]+", "_", metric.lower()).strip("_")


def foreign_run(path: Path, tool: str) -> Run:
    """Every metric of the tool's output as a rubric of the run, its scores as `score`."""
    run = Run(str(path))
    for metric in foreign_metrics(path, tool):
        rows = read_foreign(path, tool, metric)
        records = RubricRecords(
            path, refs={f"{tool}:{metric or 'score'}"}, sha256={tool}, records=False
        )
        records.judge_ids.add(tool)
        records.ids = [row["id"] for row in rows.rows]
        records.values["score"] = {r["id"]: r["score"] for r in rows.rows if "score" in r}
        records.statuses = {r["id"]: _status(r) for r in rows.rows}
        run.rubrics[metric_id(tool, metric)] = records
        if rows.unmapped:
            run.notes.append(f"{metric_id(tool, metric)}: unmapped {', '.join(rows.unmapped)}")
    if not run.rubrics:
        raise UsageError(f"{path}: {tool} output with no metric in it")
    return run


def _status(row: dict[str, Any]) -> str:
    """A tool's row as a status: its own (`error`), else `ok` with a score, else `no_score`."""
    return str(row.get("status") or ("ok" if "score" in row else "no_score"))
