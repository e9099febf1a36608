"""`mode: escalate`: when the first juror's verdict is unsure, so the rest are asked too.

The first juror of the jury file (put the cheapest first) grades every case. Its verdict
on a case is unsure, and the case goes to the whole panel, when (in this order):

1. its record is not `ok` (a parse or API error, an abstention): it decided nothing;
2. its label is one of `escalate.labels` (the labels it is not trusted on, say
   `minor_issue`, or `unfaithful` for faithfulness);
3. where the kind's score decides (`Kind.panel_combines == "score"`: scale, criteria,
   correctness, context relevance, citations), its score is within `escalate.margin` of
   the rubric's threshold (`Kind.threshold`: the kind's, or the rubric file's
   `threshold`): `|score - threshold| <= margin`, the cases a small error would flip;
4. its verdict has a numeric `confidence` field (a rubric whose output schema asks for
   one) below `escalate.min_confidence`.

Pure functions of the first juror's record and the rubric, so a rerun escalates the same
cases (and, their records kept, sends nothing).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from judge.errors import UsageError
from judge.jury.config import Escalation
from judge.rubric import Rubric


def check_escalation(rule: Escalation, rubric: Rubric) -> None:
    """UsageError when `escalate.labels` names a label the rubric does not have."""
    known = [c.name for c in rubric.behaviour.choices(rubric)]
    unknown = [label for label in rule.labels if label not in known]
    if unknown:
        raise UsageError(
            f"jury escalate.labels: {unknown} are not labels of rubric {rubric.ref} "
            f"({', '.join(known) or 'it has none'})"
        )


def unsure(record: Mapping[str, Any], rubric: Rubric, rule: Escalation) -> str | None:
    """Why the first juror's record of a case is unsure (the module's rules), as
    `what: detail` (`status: parse_error`, `label: minor_issue`, `score: ...`,
    `confidence: ...`), or None."""
    status = record.get("status")
    if status != "ok":
        return f"status: {status}"
    label, score = record.get("label"), record.get("score")
    if label is not None and label in rule.labels:
        return f"label: {label}"
    behaviour = rubric.behaviour
    if behaviour.panel_combines == "score" and isinstance(score, int | float):
        threshold = behaviour.threshold(rubric)
        if abs(score - threshold) <= rule.margin:
            return f"score: {score:g}, within {rule.margin:g} of {threshold:g}"
    confidence = (record.get("verdict") or {}).get("confidence")
    if (
        rule.min_confidence is not None
        and isinstance(confidence, int | float)
        and confidence < rule.min_confidence
    ):
        return f"confidence: {confidence:g}, below {rule.min_confidence:g}"
    return None


def escalations(
    records: Iterable[Mapping[str, Any]], wanted: Collection[str], rubric: Rubric, rule: Escalation
) -> dict[str, str]:
    """The cases among `wanted` (ids) to escalate, with why, from the first juror's file."""
    why = {}
    for record in records:
        case_id = record["id"]
        if case_id in wanted:
            reason = unsure(record, rubric, rule)
            if reason is not None:
                why[case_id] = reason
    return why
