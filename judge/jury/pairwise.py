"""Pairwise rubrics in a jury: each juror judges both orders, and votes their resolution.

A juror grades every pair twice, as the position probe does: with the case's answer_a
shown first (its file `OUT/jurors/<name>.jsonl`) and with answer_b shown first
(`OUT/jurors-swapped/<name>.jsonl`, graded from `OUT/jurors-swapped/.cases.jsonl`, the
input with the two answers exchanged); each is a single judge's resumable file. Its vote
is on content (`A` = the case's answer_a, `B` = its answer_b):

- both orders name the same content winner (or `tie` twice): that winner;
- they disagree (an order effect, not a preference): `tie`, and the vote says
  `inconsistent: true` with both orders' slot labels;
- either order failed: the vote is that failure (a parse or API error).

Only then do the jurors' votes combine by the jury's rule. The position probe
(judge.probes.position) resolves a pair the same way; the jury keeps its own few lines
because the two packages are independent layers (pyproject's import contracts).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judge.engine.atomic import replacing
from judge.engine.inputs import iter_cases
from judge.engine.records import scan_records
from judge.errors import UsageError
from judge.kinds import Kind
from judge.kinds.pairwise import PAIRWISE_SCORE
from judge.schemas import GradedRecord

SWAPPED = "jurors-swapped"


def swapped_input(out_dir: Path) -> Path:
    """The input with answer_a and answer_b exchanged (a name no juror can have)."""
    return out_dir / SWAPPED / ".cases.jsonl"


def swapped_path(out_dir: Path, name: str) -> Path:
    """A juror's records with answer_b shown first."""
    return out_dir / SWAPPED / f"{name}.jsonl"


def write_swapped(input_path: Path, target: Path, kind: Kind) -> None:
    """Write the input's cases, in order, with the two graded fields (two answers, or two
    conversations: the kind says) exchanged (atomically)."""
    with replacing(target) as handle:
        for case in iter_cases(input_path):
            swapped = kind.swapped(case)
            handle.write(swapped.model_dump_json(exclude_defaults=True).encode("utf-8") + b"\n")


def _content(slot: str | None, swapped: bool) -> str | None:
    if slot is None or slot == "tie" or not swapped:
        return slot
    return "B" if slot == "A" else "A"


def resolve_orders(ab: GradedRecord, ba: GradedRecord) -> tuple[GradedRecord, dict[str, Any]]:
    """A juror's one record of a pair from its two orders (the module's rules), and what
    the panel's record says of them (`orders`, `inconsistent`)."""
    slots = {
        "ab": ab.label if ab.status == "ok" else None,
        "ba": ba.label if ba.status == "ok" else None,
    }
    usage = ab.usage + ba.usage
    common: dict[str, Any] = {
        "usage": usage,
        "latency_ms": ab.latency_ms + ba.latency_ms,
        "cached": ab.cached and ba.cached,
    }
    failed = next((r for r in (ab, ba) if r.status != "ok"), None)
    if failed is not None:
        order = "ab" if failed is ab else "ba"
        error = f"order {order}: {failed.error or failed.status}"
        record = failed.model_copy(update={**common, "error": error, "verdict": None})
        return record, {"orders": slots, "inconsistent": None}
    first, second = _content(slots["ab"], False), _content(slots["ba"], True)
    winner = first if first == second and first is not None else "tie"
    verdict = {
        "rationale": f"Both orders: answer_a first chose {slots['ab']}, answer_b first chose "
        f"{slots['ba']} (slot labels).",
        "winner": winner,
    }
    update = {**common, "verdict": verdict, "label": winner, "score": PAIRWISE_SCORE[winner]}
    return ab.model_copy(update=update), {"orders": slots, "inconsistent": first != second}


def resolved_stream(ab: Path, ba: Path) -> Iterator[tuple[GradedRecord, dict[str, Any]]]:
    """A juror's resolved records, in the order of its first file; a case missing from
    the swapped file is a UsageError naming it."""
    second = {d["id"]: d for _, d in scan_records(ba)}
    for _, data in scan_records(ab):
        other = second.get(data["id"])
        if other is None:
            raise UsageError(f"{ba}: no record of case {data['id']!r} with answer_b first")
        yield resolve_orders(GradedRecord.model_validate(data), GradedRecord.model_validate(other))


def both_orders(ab: dict[str, Any], ba: dict[str, Any]) -> dict[str, Any]:
    """A juror's summary of its two files: the first's, with the tokens, cost, cache hits,
    this run's requests and the requests (`requests`: a record not from the cache took one)
    of both."""
    merged = dict(ab)
    merged["tokens"] = {k: ab["tokens"][k] + ba["tokens"][k] for k in ("prompt", "completion")}
    costs = (ab.get("estimated_cost_usd"), ba.get("estimated_cost_usd"))
    merged["estimated_cost_usd"] = None if None in costs else round(sum(costs), 6)  # type: ignore[arg-type]
    merged["cached"] = ab.get("cached", 0) + ba.get("cached", 0)
    merged["requests"] = sum(s["cases"] - s.get("cached", 0) for s in (ab, ba))
    merged["run"] = {**ab["run"], "sent": ab["run"]["sent"] + ba["run"]["sent"]}
    merged["orders"] = {"ab": ab["status"], "ba": ba["status"]}
    return merged
