"""How a panel's votes on one case become its verdict: pure functions, no I/O.

A juror that failed on the case (`api_error`, `parse_error`) stays in the denominator:
the tally says `votes: 2 of 3` and which juror failed and why. A case with fewer votes
than the quorum (`min_votes`) is a failed case, never a smaller silent panel. A tie is
its own outcome (`no_majority`), never settled by the order of the jurors.

Labels (weighted; every weight is 1 unless the jury file says otherwise):
- `majority`: a label whose weight is more than half the whole panel's weight;
- `plurality`: the one label with the most weight (a tie for the most is `no_majority`);
- `unanimity`: every juror of the panel voted, and for the same label.
Scores: the weighted mean (or the median) of the votes' scores, with their spread
(population standard deviation, min and max).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from judge.jury.config import LabelRule, ScoreRule

VOTED = ("ok", "abstained")
ABSTAIN = "(abstained)"  # the tally's name for a juror's abstention


@dataclass(frozen=True)
class Vote:
    """One juror's record on one case, as the tally reads it."""

    juror: str
    status: str
    label: str | None = None
    score: float | None = None
    weight: float = 1.0
    error: str | None = None

    @property
    def voted(self) -> bool:
        return self.status in VOTED

    @property
    def choice(self) -> str | None:
        """What the juror voted for: its label, or `(abstained)`."""
        if self.status == "abstained":
            return ABSTAIN
        return self.label if self.status == "ok" else None


# the outcomes that decide a case's label (the rest: no_majority, abstained, short)
DECIDED = ("unanimous", "majority", "plurality")


@dataclass(frozen=True)
class Tally:
    """The panel's verdict on one case.

    `outcome`: `unanimous` | `majority` | `plurality` (the label was decided),
    `no_majority` (no label wins by the rule), `abstained` (the winning choice is to
    abstain) or `short` (fewer votes than the quorum: a failed case)."""

    outcome: str
    label: str | None
    score: float | None
    cast: int
    size: int
    quorum: int
    counts: dict[str, float] = field(default_factory=dict)
    spread: dict[str, float] | None = None
    failed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def votes(self) -> str:
        return f"{self.cast} of {self.size}"

    @property
    def decided(self) -> bool:
        return self.outcome in DECIDED


def tally(
    votes: Sequence[Vote],
    *,
    rule: LabelRule = "majority",
    scores: ScoreRule = "mean",
    quorum: int,
) -> Tally:
    """The panel's verdict from every juror's vote on one case (the module's rules)."""
    cast = [v for v in votes if v.voted]
    failed = [
        {"juror": v.juror, "status": v.status, "error": v.error} for v in votes if not v.voted
    ]
    counts: dict[str, float] = {}
    for vote in cast:
        choice = vote.choice or ABSTAIN
        counts[choice] = counts.get(choice, 0.0) + vote.weight

    def result(
        outcome: str, label: str | None = None, score: float | None = None, spread: Any = None
    ) -> Tally:
        return Tally(outcome, label, score, len(cast), len(votes), quorum, counts, spread, failed)

    if len(cast) < quorum:
        return result("short")
    winner = _winner(counts, votes, rule)
    scored = [v for v in cast if v.status == "ok" and v.score is not None]
    score, spread = combine_scores(scored, scores) if scored else (None, None)
    if winner is None:
        return result("no_majority", None, score, spread)
    if winner == ABSTAIN:
        return result("abstained", None, None, spread)
    unanimous = len(counts) == 1 and len(cast) == len(votes)
    outcome = "unanimous" if unanimous else ("plurality" if rule == "plurality" else "majority")
    return result(outcome, winner, score, spread)


def _winner(counts: dict[str, float], votes: Sequence[Vote], rule: LabelRule) -> str | None:
    if not counts:
        return None
    panel = sum(v.weight for v in votes)
    best = max(counts.values())
    leaders = [c for c, w in counts.items() if w == best]
    if rule == "unanimity":
        return leaders[0] if len(counts) == 1 and all(v.voted for v in votes) else None
    if rule == "majority":
        return leaders[0] if best > panel / 2 else None
    return leaders[0] if len(leaders) == 1 else None


def combine_scores(
    votes: Sequence[Vote], rule: ScoreRule = "mean"
) -> tuple[float, dict[str, float]]:
    """The panel score of the scored votes, and their spread (std, min, max).

    Mean: sum(w_i s_i) / sum(w_i). Median: the weighted median (the smallest score whose
    cumulative weight reaches half the total; with equal weights and an even count, the
    mean of the two middle scores, as `statistics.median`)."""
    values = [v.score for v in votes if v.score is not None]
    weights = [v.weight for v in votes if v.score is not None]
    if rule == "median":
        score = _weighted_median(values, weights)
    else:
        score = sum(w * s for w, s in zip(weights, values, strict=True)) / sum(weights)
    spread = {
        "std": round(statistics.pstdev(values), 6),
        "min": min(values),
        "max": max(values),
    }
    return round(score, 6), spread


def _weighted_median(values: list[float], weights: list[float]) -> float:
    if len(set(weights)) == 1:
        return statistics.median(values)
    pairs = sorted(zip(values, weights, strict=True))
    half, running = sum(weights) / 2, 0.0
    for value, weight in pairs:
        running += weight
        if running >= half:
            return value
    return pairs[-1][0]
