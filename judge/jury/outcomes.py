"""Why a panel left cases undecided: read from its records, so that a run that decided
nothing says what happened (every reply cut off at max_tokens, no majority, ...) instead
of printing figures computed on no case."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from judge.jury.vote import DECIDED

__all__ = ["CUT_OFF", "DECIDED", "decided_count", "undecided_causes"]

CUT_OFF = "cut_off"  # a vote's reply hit max_tokens (finish_reason "length")
_TRUNCATED = "truncated"  # how the engine's error for such a reply begins (judge.engine.model)


def decided_count(outcomes: Mapping[str, int]) -> int:
    """The cases of a panel summary's `outcomes` whose label was decided."""
    return sum(n for outcome, n in outcomes.items() if outcome in DECIDED)


def undecided_causes(records: Iterable[Mapping[str, Any]]) -> Counter[str]:
    """Each undecided panel record's cause: `cut_off` when a juror's reply was cut off at
    max_tokens, `failed:<status>` for other missing votes, else the outcome itself
    (`no_majority`, `abstained`)."""
    causes: Counter[str] = Counter()
    for record in records:
        panel = record.get("panel") or {}
        outcome = panel.get("outcome")
        if outcome is None or outcome in DECIDED:
            continue
        if outcome != "short":
            causes[str(outcome)] += 1
            continue
        failed = panel.get("failed") or []
        if any(str(f.get("error") or "").startswith(_TRUNCATED) for f in failed):
            causes[CUT_OFF] += 1
        else:
            statuses = Counter(str(f.get("status")) for f in failed)
            causes[f"failed:{statuses.most_common(1)[0][0] if statuses else 'unknown'}"] += 1
    return causes
