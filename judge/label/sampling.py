"""Which cases to label: every case, a simple random sample, or a stratified sample over
the judge's labels and slices, each with its inclusion probability.

Stratified sampling uses square-root allocation (Kish, *Survey Sampling*, 1965, 7.5;
Cochran, *Sampling Techniques*, 1977, 5.5): stratum h of size N_h gets a share of the
n labels proportional to sqrt(N_h), at least `MIN_PER_STRATUM` (or all of it when smaller),
never more than N_h. Against proportional allocation this oversamples rare strata (a judge
label seen 3 times in 1,000 still gets labelled) without giving them as much as equal
allocation would. Within a stratum the cases are a simple random sample, so each has the
inclusion probability pi = n_h / N_h, and weighting a labelled case by 1 / pi
(Horvitz-Thompson) gives unbiased totals and rates for the whole set.

The overlap share is drawn among the chosen cases: those need labels from two annotators,
so the inter-annotator agreement (the ceiling a judge can be held to) can be measured.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

MIN_PER_STRATUM = 2
OVERLAP_LABELS = 2


@dataclass(frozen=True)
class Item:
    """One case to label: its id, its inclusion probability and how many labels it needs."""

    case_id: str
    inclusion_probability: float
    required: int = 1
    escalated: bool = False  # a certified cascade left it to people: offered first


def allocate(sizes: Mapping[str, int], n: int, *, minimum: int = MIN_PER_STRATUM) -> dict[str, int]:
    """Square-root allocation of `n` labels over strata of the given sizes (sum = n).

    Floors first (`min(N_h, minimum)` each, the floor lowered when the strata outnumber
    the labels), then the rest by largest remainder of n * sqrt(N_h) / sum(sqrt(N)) over
    the strata not yet full, repeated when a stratum is capped at N_h."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    while minimum > 0 and sum(min(size, minimum) for size in sizes.values()) > n:
        minimum -= 1  # more strata than the floors allow: lower the floor
    alloc = {h: min(size, minimum) for h, size in sizes.items()}
    while (left := n - sum(alloc.values())) > 0:
        open_ = {h: math.sqrt(sizes[h]) for h in sizes if alloc[h] < sizes[h]}
        weight = sum(open_.values())
        quota = {h: left * w / weight for h, w in open_.items()}
        extra = {h: min(int(q), sizes[h] - alloc[h]) for h, q in quota.items()}
        if not any(extra.values()):  # hand out the remainder, largest fraction first
            ranked = sorted(open_, key=lambda h: (-(quota[h] - int(quota[h])), h))
            extra = {h: 1 for h in ranked[:left]}
        for h, k in extra.items():
            alloc[h] += k
    return alloc


def stratified_sample(strata: Mapping[str, str], n: int, *, seed: int) -> dict[str, float]:
    """`n` case ids drawn by stratum (case id -> stratum name), with their probabilities."""
    members: dict[str, list[str]] = {}
    for case_id, stratum in strata.items():
        members.setdefault(stratum, []).append(case_id)
    alloc = allocate({h: len(ids) for h, ids in members.items()}, n)
    rng = random.Random(seed)
    chosen: dict[str, float] = {}
    for h in sorted(members):
        ids = sorted(members[h])
        for case_id in rng.sample(ids, alloc[h]):
            chosen[case_id] = alloc[h] / len(ids)
    return chosen


def select_items(
    case_ids: Sequence[str],
    *,
    strata: Mapping[str, str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    overlap: float = 0.0,
    escalated: Collection[str] = (),
) -> list[Item]:
    """The items to label, in input order. No `sample`: every case (probability 1).
    With `strata` (case id -> stratum) the sample is stratified, else simple random.
    The ids in `escalated` (a cascade's escalated records) are marked so."""
    if sample is None or sample >= len(case_ids):
        chosen = dict.fromkeys(case_ids, 1.0)
    elif strata is not None:
        chosen = stratified_sample({i: strata[i] for i in case_ids}, sample, seed=seed)
    else:
        picked = random.Random(seed).sample(list(case_ids), sample)
        chosen = dict.fromkeys(picked, sample / len(case_ids))
    ordered = [i for i in case_ids if i in chosen]
    shared = set(random.Random(seed + 1).sample(ordered, round(overlap * len(ordered))))
    return [
        Item(i, chosen[i], OVERLAP_LABELS if i in shared else 1, i in escalated) for i in ordered
    ]


def stratum_of(label: str | None, status: str, slices: Sequence[str]) -> str:
    """A record's stratum: the judge's label (or status when it has none) x first slice."""
    outcome = label if label is not None else status
    return f"{outcome}|{slices[0] if slices else '-'}"
