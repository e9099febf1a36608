"""Position (order-swap) probe: every pair judged with A first and with B first.

A pair's two orders are two cases to the grader (answer_a and answer_b exchanged), so the
cache keeps them apart and a warm cache answers both. Slot labels (`A` = the answer shown
first) are mapped back to content (`a` = the case's answer_a) before comparing orders.

Definitions (pairs with both verdicts parsed; the others are counted as `unparsed_pairs`):
- consistency_rate = pairs with the same content winner in both orders (a tie twice counts)
  / pairs. The LLMBar paper calls it "positional agreement".
- inconsistent pairs split by slot: `first_slot` (the answer shown first won both times),
  `second_slot` (the one shown second won both times), `with_tie` (one order a tie).
- first_position_win_rate = verdicts won by slot A / non-tie verdicts, over both orders;
  0.5 means no position preference (each pair shows each answer first once). A pair's two
  verdicts are one observation, not two: the interval is a pair (cluster) bootstrap, and
  `first_position_p_value` is the exact sign test over the pairs that lean to one slot
  (slot A won more of the pair's two verdicts than slot B: `first_position_pairs_up`,
  or fewer: `first_position_pairs_down`; exactly the inconsistent pairs), against "each
  leaning pair is a fair coin". A consistent pair shows no preference and does not count.
- swap-resolved verdict: the content winner when both orders agree, else a tie.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from calibration.estimates.probe_stats import (
    pair_rate_fields,
    pair_rate_interval,
    rate_fields,
    sign_test_fields,
)
from calibration.io.rows import iter_rows
from judge.engine.grader import Grader
from judge.errors import InputError, UsageError
from judge.kinds.pairwise import PAIRWISE_SCORE
from judge.probes._common import (
    BiasCheck,
    ProbeOptions,
    ProbeResult,
    fmt,
    fmt_p,
    listed,
    rate_check,
)
from judge.schemas import Case, GradedRecord, Usage

ORDERS = ("ab", "ba")
SLOT_LABELS = ("A", "B", "tie")


@dataclass(frozen=True)
class PairVerdicts:
    """The slot each order's verdict chose: `A`, `B`, `tie`, or None (no parsed verdict)."""

    id: str
    ab: str | None
    ba: str | None


def content_winner(order: str, slot: str | None) -> str | None:
    """Which answer of the case won (`a`, `b`, `tie`), given the slot label of one order."""
    if slot is None or slot == "tie":
        return slot
    first, second = ("a", "b") if order == "ab" else ("b", "a")
    return first if slot == "A" else second


def resolve(pair: PairVerdicts) -> str | None:
    """Swap-resolved content winner: agreement -> that winner, disagreement -> tie."""
    a, b = content_winner("ab", pair.ab), content_winner("ba", pair.ba)
    if a is None or b is None:
        return None
    return a if a == b else "tie"


def position_stats(pairs: Sequence[PairVerdicts]) -> dict[str, Any]:
    """The position figures of the module docstring, with Wilson 95% intervals."""
    complete = [p for p in pairs if p.ab is not None and p.ba is not None]
    split: dict[str, list[str]] = {"first_slot": [], "second_slot": [], "with_tie": []}
    consistent = 0
    for pair in complete:
        if content_winner("ab", pair.ab) == content_winner("ba", pair.ba):
            consistent += 1
        elif pair.ab == pair.ba:
            split["first_slot" if pair.ab == "A" else "second_slot"].append(pair.id)
        else:
            split["with_tie"].append(pair.id)
    slots = [s for p in complete for s in (p.ab, p.ba)]
    first, decisive, ties = slots.count("A"), len(slots) - slots.count("tie"), slots.count("tie")
    wins, verdicts = _first_slot_counts(complete)
    n = len(complete)
    report: dict[str, Any] = {
        "pairs": len(pairs),
        "complete_pairs": n,
        "unparsed_pairs": len(pairs) - n,
        "unparsed_ids": [p.id for p in pairs if p.ab is None or p.ba is None],
        "consistent_pairs": consistent,
        **rate_fields("consistency_rate", consistent, n),
        "inconsistent_pairs": n - consistent,
        "inconsistent": {k: len(v) for k, v in split.items()},
        **rate_fields("first_slot_inconsistency_rate", len(split["first_slot"]), n),
        **rate_fields("second_slot_inconsistency_rate", len(split["second_slot"]), n),
        **rate_fields("tie_inconsistency_rate", len(split["with_tie"]), n),
        "first_position_wins": first,
        "decisive_verdicts": decisive,
        **pair_rate_fields("first_position_win_rate", wins, verdicts),
        **sign_test_fields(
            "first_position", [2 * w - v for w, v in zip(wins, verdicts, strict=True)]
        ),
        "tie_verdicts": ties,
        **rate_fields("tie_rate", ties, len(slots)),
        "tied_both_orders": sum(p.ab == p.ba == "tie" for p in complete),
        "inconsistent_ids": split,
    }
    resolved = [resolve(p) for p in complete]
    report["resolved"] = {w: resolved.count(w) for w in ("a", "b", "tie")}
    return report


def _first_slot_counts(complete: Sequence[PairVerdicts]) -> tuple[list[int], list[int]]:
    """Per pair: verdicts won by slot A, and non-tie verdicts (0 to 2 each)."""
    wins = [(p.ab == "A") + (p.ba == "A") for p in complete]
    verdicts = [(p.ab != "tie") + (p.ba != "tie") for p in complete]
    return wins, verdicts


def position_checks(report: dict[str, Any], pairs: Sequence[PairVerdicts]) -> list[Any]:
    n = report["complete_pairs"]
    wins, verdicts = _first_slot_counts([p for p in pairs if p.ab is not None and p.ba is not None])
    return [
        rate_check("inconsistency_rate", report["inconsistent_pairs"], n, 0.0, unit="pairs"),
        BiasCheck(
            "first_position_win_rate",
            report["first_position_win_rate"],
            0.5,
            lambda c: pair_rate_interval(wins, verdicts, confidence=c),
            n=n,
            unit="pairs",
        ),
    ]


def position_markdown(report: dict[str, Any]) -> list[str]:
    split = report["inconsistent"]
    ids = report["inconsistent_ids"]
    return [
        f"Pairs: {report['pairs']} ({report['unparsed_pairs']} with an unparsed verdict, "
        "left out of the rates).",
        "",
        "| figure | value [95% interval] |",
        "|---|---|",
        f"| consistency rate | {fmt(report['consistency_rate'], report['consistency_rate_ci95'])} |",
        f"| first-position win rate (0.5 = no preference) | "
        f"{fmt(report['first_position_win_rate'], report['first_position_win_rate_ci95'])} |",
        f"| sign test over the {report['first_position_pairs_up']} + "
        f"{report['first_position_pairs_down']} pairs leaning to slot A or B, p | "
        f"{fmt_p(report['first_position_p_value'])} |",
        f"| tie rate | {fmt(report['tie_rate'], report['tie_rate_ci95'])} |",
        "",
        f"Inconsistent pairs: {report['inconsistent_pairs']}: first-shown answer won both "
        f"times {split['first_slot']}, second-shown {split['second_slot']}, "
        f"tie in one order {split['with_tie']}.",
        "",
        f"- first slot twice: {listed(ids['first_slot'])}",
        f"- second slot twice: {listed(ids['second_slot'])}",
        f"- tie in one order: {listed(ids['with_tie'])}",
    ]


def position_result(pairs: Sequence[PairVerdicts], source: dict[str, Any]) -> ProbeResult:
    report = {"probe": "position", **source, **position_stats(pairs)}
    lines = ["# Position probe", "", *position_markdown(report)]
    return ProbeResult(report=report, checks=position_checks(report, pairs), markdown=lines)


# ---- judging both orders ---------------------------------------------------------------


async def judge_both_orders(
    grader: Grader, cases: Sequence[Case]
) -> list[tuple[GradedRecord, GradedRecord]]:
    """(record with A first, record with B first) per case, each order graded once."""
    kind = grader.rubric.behaviour  # it knows which two fields it shows (answers, conversations)
    both = (c for case in cases for c in (case, kind.swapped(case)))
    records = await grader.grade_many(both)
    return [(records[i], records[i + 1]) for i in range(0, len(records), 2)]


def pair_verdicts(case_id: str, ab: GradedRecord, ba: GradedRecord) -> PairVerdicts:
    """The slot labels of one pair's two records; a failed record has none."""
    return PairVerdicts(case_id, *(r.label if r.status == "ok" else None for r in (ab, ba)))


def resolved_record(ab: GradedRecord, ba: GradedRecord) -> GradedRecord:
    """One graded record for the pair: the swap-resolved verdict (label on content: `A` =
    the case's answer_a), or the first failure when an order has no verdict."""
    usage = Usage() + ab.usage + ba.usage
    common = {"usage": usage, "latency_ms": ab.latency_ms + ba.latency_ms}
    common["cached"] = ab.cached and ba.cached
    failed = next((r for r in (ab, ba) if r.status != "ok"), None)
    if failed is not None:
        order = "ab" if failed is ab else "ba"
        error = f"order {order}: {failed.error or failed.status}"
        return failed.model_copy(update={**common, "error": error, "verdict": None})
    content = resolve(PairVerdicts(ab.id, ab.label, ba.label)) or "tie"
    winner = {"a": "A", "b": "B", "tie": "tie"}[content]
    rationale = (
        f"Swap-resolved. Answer A shown first: slot {ab.label} "
        f"({(ab.verdict or {}).get('rationale', '')}) Answer B shown first: slot {ba.label} "
        f"({(ba.verdict or {}).get('rationale', '')})"
    )
    verdict = {"rationale": rationale, "winner": winner}
    score = PAIRWISE_SCORE[winner]
    return ab.model_copy(update={**common, "verdict": verdict, "score": score, "label": winner})


async def run_position(grader: Grader, cases: Sequence[Case], options: ProbeOptions) -> ProbeResult:
    """Judge every pair in both orders; position statistics and swap-resolved records."""
    if not grader.rubric.behaviour.compares_two:
        raise UsageError(f"the position probe needs a pairwise rubric, not {grader.rubric.ref}")
    graded = await judge_both_orders(grader, cases)
    pairs = [pair_verdicts(c.id, ab, ba) for c, (ab, ba) in zip(cases, graded, strict=True)]
    requests = sum(not r.cached for pair in graded for r in pair)
    result = position_result(pairs, {"judge_calls": requests})
    result.records = [resolved_record(ab, ba) for ab, ba in graded]
    return result


# ---- recorded verdicts -----------------------------------------------------------------


def read_recorded_verdicts(path: Path) -> list[PairVerdicts]:
    """Pairs from a JSONL of recorded verdicts: `id`, `order` (`ab` = answer_a shown first,
    or `ba`), `label` (`A`, `B` or `tie`: the slot that won; null = unparsed reply).

    A pair with one order missing counts as unparsed. Problems (bad JSON, unknown order or
    label, an order given twice) raise InputError naming the line."""
    if not path.is_file():
        raise InputError(str(path), [(None, None, "no such file")])
    found: dict[str, dict[str, str | None]] = {}
    problems: list[tuple[int | None, str | None, str]] = []
    for line, row in iter_rows(path):
        problem = _check_row(row, found)
        if problem:
            problems.append((line, row.get("id") if isinstance(row, dict) else None, problem))
            continue
        assert isinstance(row, dict)
        found.setdefault(str(row["id"]), {})[row["order"]] = row.get("label")
    if not problems and not found:
        problems.append((None, None, "empty file: no verdicts"))
    if problems:
        raise InputError(str(path), problems[:20])
    return [PairVerdicts(i, v.get("ab"), v.get("ba")) for i, v in found.items()]


def _check_row(row: dict[str, Any] | str, found: dict[str, dict[str, str | None]]) -> str:
    if isinstance(row, str):
        return row
    if row.get("id") in (None, ""):
        return "missing id"
    order, label = row.get("order"), row.get("label")
    if order not in ORDERS:
        return f"order must be 'ab' or 'ba', got {json.dumps(order)}"
    if label is not None and label not in SLOT_LABELS:
        return f"label must be 'A', 'B', 'tie' or null, got {json.dumps(label)}"
    if order in found.get(str(row["id"]), {}):
        return f"order {order} of id {row['id']!r} given twice"
    return ""


def check_ids(pairs: Iterable[PairVerdicts], cases: Iterable[Case], path: Path) -> None:
    """Every recorded id must be a case of the input file."""
    known = {c.id for c in cases}
    unknown = [p.id for p in pairs if p.id not in known]
    if unknown:
        message = f"{len(unknown)} verdict ids are not in the input, e.g. {unknown[0]!r}"
        raise InputError(str(path), [(None, None, message)])
