"""Which cases moved between two runs: the ones that regressed, the ones that improved,
and the ones that cannot be compared.

After "significant, lower" the first question is "which cases?". A case **regressed**
when both runs graded it ``ok`` with a score and B's score is lower than A's; it
**improved** when B's is higher; equal scores (closer than ``TIE_TOLERANCE``: scores are
stored rounded) are neither. A case that is not ``ok`` with a score on one side or both
(``parse_error``, ``api_error``, ``abstained``) is listed apart with both statuses, never
counted as a change: a failed grade is not a score (a parse failure is not a grade).

Pure: statuses and scores in, lists out. ``judge compare`` calls it on records files,
a viewer on whatever store it reads them from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calibration.compare.runs import TIE_TOLERANCE

__all__ = ["OK", "Outcome", "case_changes"]

OK = "ok"
Outcome = tuple[str, float | None]
"""One case in one run: its status and its score (None when it has none)."""


def case_changes(
    a: Mapping[str, Outcome],
    b: Mapping[str, Outcome],
    *,
    tolerance: float = TIE_TOLERANCE,
) -> dict[str, list[dict[str, Any]]]:
    """The cases both runs graded, sorted into what changed from A to B.

    ``a`` and ``b`` map a case id to its ``(status, score)``; ids on one side only are
    not paired (the caller counts them). Returns

    - ``regressed``: ``{"id", "a", "b", "diff"}`` with ``diff = b - a < -tolerance``,
      largest drop first (ties in A's order);
    - ``improved``: the same with ``diff > tolerance``, largest rise first;
    - ``not_comparable``: ``{"id", "a", "b"}`` holding the two statuses (``ok`` on a side
      with a status but no score reads ``ok``), in A's order.
    """
    regressed: list[dict[str, Any]] = []
    improved: list[dict[str, Any]] = []
    apart: list[dict[str, Any]] = []
    for case_id, (status_a, score_a) in a.items():
        if case_id not in b:
            continue
        status_b, score_b = b[case_id]
        if status_a != OK or status_b != OK or score_a is None or score_b is None:
            apart.append({"id": case_id, "a": status_a, "b": status_b})
            continue
        diff = float(score_b) - float(score_a)
        entry = {"id": case_id, "a": score_a, "b": score_b, "diff": round(diff, 6)}
        if diff < -tolerance:
            regressed.append(entry)
        elif diff > tolerance:
            improved.append(entry)
    regressed.sort(key=lambda e: e["diff"])  # stable: equal drops stay in A's order
    improved.sort(key=lambda e: -e["diff"])
    return {"regressed": regressed, "improved": improved, "not_comparable": apart}
