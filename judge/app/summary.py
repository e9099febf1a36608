"""What a run's summary table shows, decided once for every caller that prints one: the
kind's columns, its notes, why every case abstained (the rules judge on a kind it cannot
grade) and the resumed run's line. The table itself is the caller's to draw."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judge.kinds import get_kind


@dataclass(frozen=True)
class SummaryView:
    """The summary's columns (key -> heading), then the lines below the table."""

    columns: dict[str, str]
    notes: list[str]
    resumed: str | None


def summary_view(summary: dict[str, Any]) -> SummaryView:
    from judge.engine.resume import run_line  # the engine loads only when a run prints

    kind = get_kind(summary["kind"])
    notes = [*kind.summary_notes(summary), *rules_judge_notes(summary)]
    return SummaryView(kind.headings(summary), notes, run_line(summary))


def rules_judge_notes(summary: dict[str, Any]) -> list[str]:
    """Why every case abstained, when the offline rules judge graded a kind it cannot."""
    models = summary.get("judge_models") or {}
    status = summary.get("status") or {}
    if set(models) == {"rules"} and status and set(status) == {"abstained"}:
        return [
            f"every case abstained: the offline rules judge cannot grade a "
            f"{summary['kind']!r} rubric; use a model judge (--model)"
        ]
    return []
