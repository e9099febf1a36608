"""The panel's record of one case: the aggregate verdict, with every juror's vote beside it.

A panel record is a graded record (the same fields, so summaries, calibration and reports
read it as any other) plus `panel`: the rule, `votes` ("2 of 3"), the outcome, the tally,
the spread of the scores, which jurors failed and why, and every juror's vote with its
status and judge identity. Its `verdict` is the verdict of the first juror (in the file's
order) whose vote is the panel's label, or, where scores decide, whose score is nearest
the panel's (`panel.verdict_from`): a representative for kind statistics such as claim
counts, never what decided the case. In `mode: cyclic` a case outside the overlap has
one juror (`graded_by`, `votes: 1 of 1`: its verdict is the panel's, and its failure the
panel's failure); an overlap case (`overlap: true`) has the whole panel and its rule. In
`mode: escalate` a case the first juror was sure of has its vote alone; an escalated one
(`escalated`: why) the whole panel's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judge.engine.identity import judge_id as hash_identity
from judge.jury.config import Jury
from judge.jury.vote import Tally, Vote, tally
from judge.rubric import Rubric
from judge.schemas import GradedRecord, JudgeInfo, Status, Usage, utc_now

PANEL_JUDGE = JudgeInfo(model="jury", output_mode="panel")


class PanelRecord(GradedRecord):
    """A graded record with the panel's votes (`panel`)."""

    panel: dict[str, Any]


def panel_identity(jury: Jury, identities: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What decides a panel's verdicts: each juror's identity and weight, and the rules."""
    jurors = [
        {"name": j.name, "weight": j.weight, "identity": identity}
        for j, identity in zip(jury.jurors, identities, strict=True)
    ]
    identity: dict[str, Any] = {
        "jury": jurors,
        "rule": jury.rule,
        "scores": jury.scores,
        "quorum": jury.quorum,
    }
    if jury.mode == "cyclic":
        identity.update(mode=jury.mode, overlap=jury.overlap_share)
    elif jury.mode == "escalate":
        identity.update(mode=jury.mode, escalate=jury.escalation.model_dump(mode="json"))
    return identity


def panel_record(
    rubric: Rubric,
    jury: Jury,
    records: Sequence[GradedRecord],
    identity: dict[str, Any],
    *,
    members: Sequence[int] | None = None,
    extra: Mapping[str, Any] | None = None,
    notes: Sequence[Mapping[str, Any] | None] | None = None,
) -> PanelRecord:
    """The panel's record from the jurors' records of one case (in the jury file's order):
    every juror's, or those of the jurors numbered `members` (cyclic mode), whose quorum
    is then the jury's or, for fewer jurors, all of them. `extra` goes into `panel` (the
    mode's own keys: `overlap`, `escalated`)."""
    jurors = list(jury.jurors) if members is None else [jury.jurors[i] for i in members]
    votes = [
        Vote(j.name, r.status, r.label, r.score, j.weight, r.error)
        for j, r in zip(jurors, records, strict=True)
    ]
    quorum = min(jury.quorum, len(jurors))
    result = tally(votes, rule=jury.rule, scores=jury.scores, quorum=quorum)
    combines = rubric.behaviour.panel_combines
    status, label, score = _decision(result, combines)
    source = _representative(votes, result, combines) if status == "ok" else None
    first = records[0]
    return PanelRecord(
        id=first.id,
        rubric=rubric.id,
        rubric_version=rubric.version,
        rubric_sha256=rubric.sha256,
        judge=PANEL_JUDGE,
        judge_id=hash_identity(identity),
        status=status,
        verdict=records[source].verdict if source is not None else None,
        score=score,
        label=label,
        error=_error(result, combines),
        cached=all(r.cached for r in records),
        usage=sum((r.usage for r in records), Usage()),
        latency_ms=max(r.latency_ms for r in records),
        slices=first.slices,
        confidence=agreement(result) if status == "ok" else None,
        confidence_source="votes" if status == "ok" and result.label is not None else None,
        # when the last vote was made: a rerun that keeps every juror's record keeps the
        # panel's time (drift --by windows by it)
        graded_at=max((r.graded_at for r in records if r.graded_at), default=None) or utc_now(),
        case_time=first.case_time,
        inputs_sha256=first.inputs_sha256,  # every juror was shown the same case
        panel={
            **_panel(jury, result, combines, votes, records, source, notes),
            **(extra or {}),
        },
    )


def agreement(result: Tally) -> float | None:
    """The panel's confidence in its label: the share (by weight) of the jurors that voted
    who voted for it; None without a label."""
    cast = sum(result.counts.values())
    if result.label is None or not cast:
        return None
    return round(result.counts.get(result.label, 0.0) / cast, 6)


def _decision(result: Tally, combines: str) -> tuple[Status, str | None, float | None]:
    if result.outcome == "short":
        failures = {f["status"] for f in result.failed}
        return ("api_error" if failures == {"api_error"} else "parse_error"), None, None
    if result.outcome == "abstained":  # most of the panel abstained: so does the panel
        return "abstained", None, None
    if combines == "score":
        if result.score is None:
            return "abstained", None, None
        return "ok", result.label, result.score
    if result.outcome == "no_majority":
        return "abstained", None, None
    return "ok", result.label, result.score


def _error(result: Tally, combines: str) -> str | None:
    if result.outcome == "short":
        why = "; ".join(f"{f['juror']} {f['status']}: {f['error']}" for f in result.failed)
        return f"votes: {result.votes}, fewer than min_votes {result.quorum} ({why})"
    if result.outcome == "no_majority" and combines == "label":
        return f"no_majority under {result.counts} (votes: {result.votes})"
    return None


def _representative(votes: Sequence[Vote], result: Tally, combines: str) -> int | None:
    if combines == "label":
        return next(i for i, v in enumerate(votes) if v.choice == result.label)
    scored = [
        (abs((v.score or 0.0) - (result.score or 0.0)), i)
        for i, v in enumerate(votes)
        if v.status == "ok" and v.score is not None
    ]
    return min(scored)[1] if scored else None


def _panel(
    jury: Jury,
    result: Tally,
    combines: str,
    votes: Sequence[Vote],
    records: Sequence[GradedRecord],
    source: int | None,
    notes: Sequence[Mapping[str, Any] | None] | None,
) -> dict[str, Any]:
    return {
        "mode": jury.mode,
        "graded_by": [v.juror for v in votes],
        "rule": jury.rule,
        "scores": jury.scores,
        "combines": combines,
        "outcome": result.outcome,
        "votes": result.votes,
        "min_votes": result.quorum,
        "tally": result.counts,
        "spread": result.spread,
        "failed": result.failed,
        "verdict_from": votes[source].juror if source is not None else None,
        "jurors": [
            {
                "juror": v.juror,
                "status": v.status,
                "label": v.label,
                "score": v.score,
                "weight": v.weight,
                "error": v.error,
                "cached": r.cached,
                "judge": r.judge.model_dump(mode="json"),
                "judge_id": r.judge_id,
                **(note or {}),
            }
            for v, r, note in zip(votes, records, notes or [None] * len(votes), strict=True)
        ],
    }
