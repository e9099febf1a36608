"""Ragas' result CSV (`result.to_pandas().to_csv(...)` of an `evaluate()` result): the
dataset's columns (`user_input`, `retrieved_contexts`, `response`, `reference`) and one
numeric column per metric (`faithfulness`, `answer_relevancy`, ...).

The id is an `id` column when there is one, else the row number (`row-1`, ...: the ids
`judge grade` gives the same file). With one metric column (or `--metric NAME`) `score` is
that column; Ragas has no pass field, so there is no `label` (calibrate with
`--judge-field score --threshold T`). An empty cell (a metric that failed) has no score.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from calibration.foreign._common import ForeignFormatError, ForeignRows, pick_metric, unique_ids

DATASET_COLUMNS = frozenset(
    {"id", "user_input", "retrieved_contexts", "reference_contexts", "response", "reference",
     "multi_responses", "rubrics", "question", "answer", "contexts", "ground_truth"}
)  # fmt: skip


PROMPTFOO_CSV = frozenset({"Status", "Score", "Named Scores", "Grader Reason"})


def is_ragas(header: list[str]) -> bool:
    """Ragas' dataset columns (`user_input`/`response`, or 0.1's `question`/`answer`), and
    not promptfoo's CSV (`promptfoo eval -o results.csv`, whose test variables may well be
    called question and answer)."""
    columns = set(header)
    return bool({"user_input", "response", "question", "answer"} & columns) and not (
        columns >= PROMPTFOO_CSV
    )


def _table(path: Path) -> tuple[list[str], list[dict[str, str]], list[str]]:
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = list(reader.fieldnames or [])
            table = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ForeignFormatError(f"{path}: cannot be read as CSV ({exc})") from None
    if not is_ragas(header):
        raise ForeignFormatError(f"{path}: not a Ragas result CSV (no user_input/response)")
    metrics = [c for c in header if c and c not in DATASET_COLUMNS and _numeric(table, c)]
    return header, table, metrics


def ragas_metrics(path: Path) -> list[str | None]:
    return list(_table(path)[2])


def read_ragas(path: Path, metric: str | None = None) -> ForeignRows:
    header, table, metrics = _table(path)
    chosen = pick_metric(path, "Ragas", metrics, metric)
    rows = []
    for number, cell in enumerate(table, 1):
        case_id = cell.get("id") or f"row-{number}"
        row: dict[str, Any] = {"id": case_id}
        score = _float(cell.get(chosen))
        if score is not None:
            row["score"] = score
        rows.append(row)
    unmapped = [c for c in header if c not in (chosen, "id") and c]
    mapped = {"id": "id" if "id" in header else "row number", "score": chosen}
    return ForeignRows("ragas", path, unique_ids(path, rows), mapped, unmapped, chosen)


def _float(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


def _numeric(table: list[dict[str, str]], column: str) -> bool:
    cells = [c.get(column) or "" for c in table]
    filled = [c for c in cells if c]
    return bool(filled) and all(_float(c) is not None or c.lower() == "nan" for c in filled)
