"""Records as a table: one row per record, with the verdict's own figures as columns.

The columns: the record's id, rubric, status, score, label and error; its slices; the
figures its kind counts for one verdict (for faithfulness: `claims`, `supported_claims`,
`contradicted_claims` and the rates; a criteria rubric's criteria, `Kind.case_figures`);
its provenance (judge model, settings, fingerprint, `judge_id`, rubric hash, tokens,
latency, cached); and the verdict and raw text as JSON text (Parquet needs one type a
column). pandas and pyarrow are optional (`llm-judge[frames]`), imported when used.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.engine.frames import _require
from judge.errors import RubricError
from judge.rubric import Rubric, RubricLibrary, load_rubric
from judge.schemas import GradedRecord

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

FIRST = ("id", "rubric", "status", "score", "label", "error", "slices")
PROVENANCE = (
    "judge_model",
    "judge_temperature",
    "judge_seed",
    "judge_max_tokens",
    "judge_output_mode",
    "judge_system_fingerprint",
    "judge_id",
    "rubric_sha256",
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
    "cached",
    "verdict",
    "raw",
)


def record_row(record: GradedRecord, rubric: Rubric | None = None) -> dict[str, Any]:
    """One record as a flat row (module docstring); the figures need the record's rubric.

    >>> from judge import Judge
    >>> record = Judge().grade({"id": "1", "question": "q?", "contexts": ["The trial is 14 days."],
    ...                         "answer": "The trial is 14 days. It costs 9 dollars."})
    >>> row = record_row(record, load_rubric("faithfulness"))
    >>> row["id"], row["score"], row["claims"], row["supported_claims"]
    ('1', 0.5, 2, 1)
    """
    row: dict[str, Any] = {
        "id": record.id,
        "rubric": f"{record.rubric}@{record.rubric_version}",
        "status": record.status,
        "score": record.score,
        "label": record.label,
        "error": record.error,
        "slices": list(record.slices),
    }
    row.update(_figures(record, rubric))
    judge = record.judge
    row.update(
        judge_model=judge.model,
        judge_temperature=judge.temperature,
        judge_seed=judge.seed,
        judge_max_tokens=judge.max_tokens,
        judge_output_mode=judge.output_mode,
        judge_system_fingerprint=judge.system_fingerprint,
        judge_id=record.judge_id,
        rubric_sha256=record.rubric_sha256,
        prompt_tokens=record.usage.prompt_tokens,
        completion_tokens=record.usage.completion_tokens,
        latency_ms=record.latency_ms,
        cached=record.cached,
        verdict=None if record.verdict is None else json.dumps(record.verdict, sort_keys=True),
        raw=record.raw,
    )
    return row


def _figures(record: GradedRecord, rubric: Rubric | None) -> dict[str, float | None]:
    """The kind's figures of this one verdict (its summary figures over a set of one, and
    its per-case figures); none for a record that was not graded."""
    if rubric is None or record.status != "ok":
        return {}
    stats = rubric.behaviour.new_stats(rubric)
    stats.add_record(record)
    if record.score is not None:
        stats.add_ok(record)
    figures: dict[str, float | None] = {
        k: v
        for k, v in stats.figures(record.score).items()
        if v is None or (isinstance(v, int | float) and not isinstance(v, bool))
    }
    figures.update(rubric.behaviour.case_figures(rubric, record))
    return {(f"figure_{k}" if k in FIRST or k in PROVENANCE else k): v for k, v in figures.items()}


def record_rows(
    records: Iterable[GradedRecord], rubrics_dir: Path | RubricLibrary | None = None
) -> list[dict[str, Any]]:
    """The rows of `records_frame`, as dicts, every row with every column (None where a
    record has no such figure)."""
    rubrics: dict[str, Rubric | None] = {}
    rows = []
    for record in records:
        ref = f"{record.rubric}@{record.rubric_version}"
        if ref not in rubrics:
            rubrics[ref] = _rubric_or_none(ref, rubrics_dir, record.rubric_sha256)
        rows.append(record_row(record, rubrics[ref]))
    columns = list(dict.fromkeys(k for row in rows for k in row))
    figures = [c for c in columns if c not in FIRST and c not in PROVENANCE]
    order = [*FIRST, *figures, *PROVENANCE]
    return [{c: row.get(c) for c in order} for row in rows]


def _rubric_or_none(ref: str, rubrics_dir: Path | RubricLibrary | None, sha: str) -> Rubric | None:
    try:
        rubric = load_rubric(ref, rubrics_dir)
    except RubricError:
        return None  # a rubric not at hand: the row keeps everything but its figures
    return rubric if rubric.sha256 == sha else None


def records_frame(
    records: Iterable[GradedRecord], *, rubrics_dir: Path | RubricLibrary | None = None
) -> pd.DataFrame:
    """A pandas DataFrame of records, one row per record (module docstring for the columns);
    `rubrics_dir` finds user rubrics' figures.

    >>> from judge import Judge
    >>> records = Judge().grade_many([{"id": "a", "question": "q?", "contexts": ["c"],
    ...                                "answer": "c."}])
    >>> records_frame(records)[["id", "status", "score", "claims"]].to_dict("records")
    [{'id': 'a', 'status': 'ok', 'score': 1.0, 'claims': 1}]
    """
    pandas = _require("pandas", "build a DataFrame")
    return pandas.DataFrame(record_rows(records, rubrics_dir))


def records_table(
    records: Iterable[GradedRecord], *, rubrics_dir: Path | RubricLibrary | None = None
) -> pa.Table:
    """The rows of `records_frame` as an Arrow table (no pandas needed)."""
    pyarrow = _require("pyarrow", "build an Arrow table")
    return pyarrow.Table.from_pylist(record_rows(records, rubrics_dir))


def write_parquet(
    records: Iterable[GradedRecord],
    path: Path,
    *,
    rubrics_dir: Path | RubricLibrary | None = None,
) -> int:
    """Write records to a Parquet file (the columns of `records_frame`); how many rows."""
    parquet = _require("pyarrow.parquet", "write Parquet files")
    table = records_table(records, rubrics_dir=rubrics_dir)
    parquet.write_table(table, path)
    return int(table.num_rows)
