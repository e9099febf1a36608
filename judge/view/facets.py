"""Facet counts of a records query: each facet's values over the filtered records, most
frequent first (FACET_VALUES of them), in one GROUPING SETS pass and one over the slices.
A value that is missing is counted under `null` (judge.view.query.NULL filters on it)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import duckdb

FACET_VALUES = 50  # values listed per facet, most frequent first
SPLIT = ("majority", "plurality", "no_majority")  # outcomes of a split panel


def facets(cursor: duckdb.DuckDBPyConnection, base: str, params: list[Any]) -> dict[str, Any]:
    """Counts of each facet's values over the filtered records, most frequent first."""
    human = (
        "CASE WHEN h.label IS NULL THEN 'unlabelled' "
        "WHEN h.label = COALESCE(r.label, r.status) THEN 'agree' ELSE 'disagree' END"
    )
    jurors = (
        "CASE WHEN r.outcome IS NULL THEN NULL WHEN r.outcome = 'unanimous' THEN 'unanimous' "
        "WHEN r.outcome IN ('majority', 'plurality', 'no_majority') THEN 'split' ELSE r.outcome END"
    )
    rows = cursor.execute(
        f"""SELECT GROUPING(status, label, jurors, human, human_label) AS g, status, label,
            jurors, human, human_label, count(*)
        FROM (SELECT r.status, r.label, {jurors} AS jurors, {human} AS human,
            h.label AS human_label {base})
        GROUP BY GROUPING SETS ((status), (label), (jurors), (human), (human_label))""",
        params,
    ).fetchall()
    names = ["status", "label", "jurors", "human", "human_label"]
    grouped: list[tuple[str, Any, int]] = []
    for row in rows:
        grouped_at = f"{row[0]:05b}".index("0")  # GROUPING's bit is 0 for the grouped column
        name, value = names[grouped_at], row[1 + grouped_at]
        if name in ("jurors", "human_label") and value is None:
            continue
        grouped.append((name, value, int(row[-1])))
    slices = cursor.execute(
        f"SELECT s, count(*) FROM (SELECT unnest(r.slices) AS s {base}) GROUP BY s", params
    ).fetchall()
    grouped += [("slice", value, int(count)) for value, count in slices]
    rows = grouped
    return _grouped(rows)


def _grouped(rows: Iterable[tuple[str, Any, int]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {
        name: {} for name in ("status", "label", "slice", "jurors", "human", "human_label")
    }
    for facet, value, count in rows:
        out[facet]["null" if value is None else str(value)] = int(count)
    return {
        name: dict(sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))[:FACET_VALUES])
        for name, values in out.items()
    }
