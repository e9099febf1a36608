"""SQL the two job stores share (SQLite's `?` and psycopg's `%s` placeholders)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge.service._store import Job


def listing_query(
    *, status: str | None, limit: int, before: Job | None, mark: str
) -> tuple[str, tuple[Any, ...]]:
    """The query for jobs newest first: `limit` of them, of one `status` if given, older
    than `before` (by creation time, then id: a stable cursor), with `mark` as the
    placeholder."""
    where: list[str] = []
    values: list[Any] = []
    if status is not None:
        where.append(f"status = {mark}")
        values.append(status)
    if before is not None:
        where.append(f"(created_at < {mark} OR (created_at = {mark} AND id < {mark}))")
        values += [before.created_at, before.created_at, before.id]
    clause = f"WHERE {' AND '.join(where)} " if where else ""
    sql = f"SELECT * FROM jobs {clause}ORDER BY created_at DESC, id DESC LIMIT {mark}"
    return sql, (*values, limit)
