"""What `judge grade --certificate` prints after the summary table: the coverage, what
each rung decided and cost, the certified agreement, and the cost of the last rung alone."""

from __future__ import annotations

from typing import Any


def cascade_lines(cascade: dict[str, Any]) -> list[str]:
    """The cascade's lines (the summary's `cascade`, judge.engine.cascade)."""
    cases, decided = cascade["cases"], cascade["decided"]
    coverage = cascade.get("coverage")
    share = "" if coverage is None else f" (coverage {coverage:.3f})"
    certificate = cascade["certificate"]
    lines = [
        f"cascade: {decided} of {cases} cases decided{share}, {cascade['escalated']} "
        f"escalated to people",
        f"  certified agreement {cascade['certified_agreement']:g} at delta "
        f"{certificate['delta']:g} (certificate {certificate['sha256'][:12]})",
    ]
    for rung in cascade["rungs"]:
        threshold = rung["threshold"]
        at = "decides nothing" if threshold is None else f"threshold {threshold:g}"
        lines.append(
            f"  rung {rung['rung']} {rung['model']}: {at}; reached {rung['reached']}, "
            f"decided {rung['decided']}; cost {_usd(rung['cost_usd'])}"
        )
    spent = sum(r["cost_usd"] for r in cascade["rungs"]) if _known(cascade["rungs"]) else None
    lines.append(
        f"  cost: {_usd(spent)}, against {_usd(cascade['cost_all_last_rung_usd'])} "
        f"for every case with the last rung"
    )
    return lines


def _known(rungs: list[dict[str, Any]]) -> bool:
    return all(r["cost_usd"] is not None for r in rungs)


def _usd(value: float | None) -> str:
    return "unknown (no price)" if value is None else f"${value:.4f}"
