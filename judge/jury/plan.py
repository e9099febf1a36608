"""Which juror grades which case in the cheaper modes: `cyclic` and `escalate`.

`mode: cyclic`: one juror a case, all on the overlap.

A case goes to juror number ``int(sha256(id), 16) mod k`` (``k`` jurors, in the jury
file's order; ``id`` UTF-8 encoded): it depends on the case's id alone, not on the
input's order, the selection or the other cases, so a rerun, a reordered input or a
wider ``--limit`` sends each case to the same juror; each juror's share is ``1/k`` in
expectation (a hash, not a round robin, so a periodic input cannot give one juror all of
one kind of case). The overlap, graded by every juror, is the ``m`` selected cases whose
``sha256("overlap:" + id)`` is smallest: ``m`` is the count the jury file gives, or the
share rounded half up (at least one case; never more than the selection). The panel's
agreement is measured on the overlap only.

`mode: escalate`: the first juror of the file grades every selected case; the others grade
the cases where its verdict is unsure (judge.jury.escalate), and the whole panel votes
there.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from hashlib import sha256


def juror_of(case_id: str, k: int) -> int:
    """The number of the juror a case goes to outside the overlap."""
    return int(sha256(case_id.encode("utf-8")).hexdigest(), 16) % k


def _overlap_rank(case_id: str) -> str:
    return sha256(f"overlap:{case_id}".encode()).hexdigest()


def overlap_size(overlap: int | float, n: int) -> int:
    """How many of `n` selected cases every juror grades."""
    if n == 0:
        return 0
    if isinstance(overlap, int):
        return min(overlap, n)
    return min(n, max(1, math.floor(overlap * n + 0.5)))


def overlap_ids(ids: Sequence[str], overlap: int | float) -> frozenset[str]:
    """The overlap among the selected cases `ids` (the module's rule)."""
    return frozenset(heapq.nsmallest(overlap_size(overlap, len(ids)), ids, key=_overlap_rank))


@dataclass(frozen=True)
class Plan:
    """Who grades what: `cases` are (position, id, juror numbers) in input order; `whole`
    the ids the whole panel grades (the overlap, or the escalated cases), and `why` the
    reason each escalated case was (escalate mode)."""

    k: int
    cases: tuple[tuple[int, str, tuple[int, ...]], ...]
    whole: frozenset[str]
    why: Mapping[str, str] = field(default_factory=dict)

    def share(self, juror: int) -> frozenset[int]:
        """The input positions juror number `juror` grades."""
        return frozenset(p for p, _, members in self.cases if juror in members)

    def __iter__(self) -> Iterator[tuple[int, str, tuple[int, ...]]]:
        return iter(self.cases)


def cyclic_plan(ids: Sequence[str], chosen: set[int] | None, k: int, overlap: int | float) -> Plan:
    """The plan for the input's case ids (in input order) and the selected positions
    (`chosen`; None: every case)."""
    positions = range(len(ids)) if chosen is None else sorted(chosen)
    common = overlap_ids([ids[p] for p in positions], overlap)
    everyone = tuple(range(k))
    cases = tuple(
        (p, ids[p], everyone if ids[p] in common else (juror_of(ids[p], k),)) for p in positions
    )
    return Plan(k, cases, common)


def escalation_plan(
    ids: Sequence[str], chosen: set[int] | None, k: int, why: Mapping[str, str]
) -> Plan:
    """The plan once the first juror has graded: the whole panel where `why` gives a
    reason to escalate, the first juror alone elsewhere."""
    positions = range(len(ids)) if chosen is None else sorted(chosen)
    everyone = tuple(range(k))
    cases = tuple((p, ids[p], everyone if ids[p] in why else (0,)) for p in positions)
    return Plan(k, cases, frozenset(why), dict(why))
