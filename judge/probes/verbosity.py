"""Verbosity probe: does padding that adds no claim change the verdict?

Padding strategies (deterministic; each makes the answer longer and says nothing new):
- `courtesy`: a greeting before and an offer of more help after the answer.
- `greeting`: a salutation and thanks before the answer ("Hi there, thanks for reaching out!").
- `offer`: an offer of further help after the answer.
- `restate`: an opening sentence that repeats the question back.
- `recap`: a closing sentence that repeats the answer's first sentence ("To recap: ...").

Pointwise rubrics: each answer graded as is and with each padding; the report gives the
mean score change (padded - original) with a t interval, the shares raised and lowered
(Wilson) and a Wilcoxon signed-rank test (scipy). An unbiased judge changes nothing.

Pairwise rubrics: the concise answer (the case's better one when `metadata.better` is A or
B, else both answers) against its own padded copy, judged in both orders so position bias
cancels out. `padded_win_rate` = verdicts won by the padded copy / non-tie verdicts; 0.5
means length does not matter to it, a tie is the ideal (the copy adds nothing).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from calibration.estimates.probe_stats import binomial_p, paired_change, rate_fields
from judge.engine.grader import Grader
from judge.probes._common import (
    BiasCheck,
    ProbeOptions,
    ProbeResult,
    fmt,
    fmt_p,
    listed,
    mean_check,
    rate_check,
    status_counts,
    unmeasured,
)
from judge.probes.position import content_winner, judge_both_orders
from judge.schemas import Case

COURTESY_OPEN = "Thank you for your question, I am happy to help with this."
COURTESY_CLOSE = "I hope this helps, and please let me know if there is anything else I can do."
GREETING = "Hi there, thanks for reaching out!"
OFFER = "If you have any other questions, feel free to ask. I'm always happy to help."
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(\s|$)", re.DOTALL)
MAX_SCORE_CHANGES = 200


def _courtesy(answer: str, question: str) -> str:
    return f"{COURTESY_OPEN} {answer} {COURTESY_CLOSE}"


def _greeting(answer: str, question: str) -> str:
    return f"{GREETING} {answer}"


def _offer(answer: str, question: str) -> str:
    return f"{answer} {OFFER}"


def _restate(answer: str, question: str) -> str:
    asked = question.strip().rstrip("?.!").strip()
    return f'You asked: "{asked}?" {answer}' if asked else answer


def _recap(answer: str, question: str) -> str:
    match = _FIRST_SENTENCE.match(answer.strip())
    first = (match[1] if match else answer.strip()).strip()
    return f"{answer} To recap: {first[0].lower() + first[1:]}" if first else answer


PADDINGS: dict[str, Callable[[str, str], str]] = {
    "courtesy": _courtesy,
    "greeting": _greeting,
    "offer": _offer,
    "restate": _restate,
    "recap": _recap,
}


def pad(answer: str, question: str, strategy: str) -> str:
    """The answer padded with one strategy of PADDINGS."""
    return PADDINGS[strategy](answer, question)


def strategies(options: ProbeOptions) -> list[str]:
    return list(options.paddings) or list(PADDINGS)


async def run_verbosity(
    grader: Grader, cases: Sequence[Case], options: ProbeOptions
) -> ProbeResult:
    if grader.rubric.behaviour.compares_two:
        return await _pairwise(grader, cases, strategies(options))
    return await _pointwise(grader, cases, strategies(options))


async def _pointwise(grader: Grader, cases: Sequence[Case], names: list[str]) -> ProbeResult:
    variants = [
        c.model_copy(update={"answer": pad(c.answer or "", c.question or "", s)})
        for c in cases
        for s in names
    ]
    originals = await grader.grade_many(cases)
    padded = await grader.grade_many(variants)
    rows: dict[str, list[tuple[str, float, float]]] = {s: [] for s in names}
    for i, record in enumerate(padded):
        before = originals[i // len(names)]
        if before.score is not None and record.score is not None:
            rows[names[i % len(names)]].append((record.id, before.score, record.score))
    every = [row for s in names for row in rows[s]]
    report: dict[str, Any] = {
        "probe": "verbosity",
        "mode": "pointwise",
        "cases": len(cases),
        "strategies": names,
        "status": status_counts([*originals, *padded]),
        **paired_change([r[1] for r in every], [r[2] for r in every]),
        "raised_ids": sorted({r[0] for r in every if r[2] > r[1]}),
        "lowered_ids": sorted({r[0] for r in every if r[2] < r[1]}),
        "by_strategy": {
            s: paired_change([r[1] for r in rows[s]], [r[2] for r in rows[s]]) for s in names
        },
        **score_changes(rows),
    }
    report |= unmeasured(report["n"], "graded pairs of versions", report["status"])
    checks = [mean_check("mean_score_change", [r[2] - r[1] for r in every])]
    return ProbeResult(report=report, checks=checks, markdown=_pointwise_markdown(report))


def score_changes(rows: dict[str, list[tuple[str, float, float]]]) -> dict[str, Any]:
    """The pairs whose score padding changed, largest change first (at most
    MAX_SCORE_CHANGES, so a report over a million answers stays small): what a reader
    checks before trusting `lowered` (a count of pairs, where `lowered_ids` counts cases)."""
    pairs = [(s, i, b, a) for s, entries in rows.items() for i, b, a in entries if a != b]
    pairs.sort(key=lambda p: -abs(p[3] - p[2]))
    changed = [{"id": i, "padding": s, "score": b, "padded_score": a} for s, i, b, a in pairs]
    return {
        "score_changes": changed[:MAX_SCORE_CHANGES],
        "score_changes_total": len(changed),
    }


def _pointwise_markdown(report: dict[str, Any]) -> list[str]:
    lines = [
        "# Verbosity probe (pointwise)",
        "",
        f"{report['cases']} answers x {len(report['strategies'])} paddings "
        f"({', '.join(report['strategies'])}); {report['n']} graded pairs of versions.",
        "",
        "| padding | n | mean score change [95%] | share raised [95%] | share lowered | Wilcoxon p |",
        "|---|---|---|---|---|---|",
    ]
    rows = [("all", report), *report["by_strategy"].items()]
    for name, r in rows:
        lines.append(
            f"| {name} | {r['n']} | {fmt(r['mean_score_change'], r['mean_score_change_ci95'])} "
            f"| {fmt(r['share_raised'], r['share_raised_ci95'])} | {fmt(r['share_lowered'])} "
            f"| {fmt_p(r['wilcoxon_p_value'])} |"
        )
    lines += ["", f"Raised by padding: {listed(report['raised_ids'])}"]
    return lines


async def _pairwise(grader: Grader, cases: Sequence[Case], names: list[str]) -> ProbeResult:
    pairs: list[Case] = []
    for case in cases:
        better = str(case.metadata.get("better", "")).upper()
        concise = [case.answer_a] if better == "A" else [case.answer_b] if better == "B" else []
        for answer in concise or [case.answer_a, case.answer_b]:
            for s in names:
                padded = pad(answer or "", case.question or "", s)
                pairs.append(case.model_copy(update={"answer_a": answer, "answer_b": padded}))
    graded = await judge_both_orders(grader, pairs)
    wins = {"concise": 0, "padded": 0, "tie": 0}
    padded_ids: set[str] = set()
    for case, records in zip(pairs, graded, strict=True):
        for order, record in zip(("ab", "ba"), records, strict=True):
            winner = content_winner(order, record.label if record.status == "ok" else None)
            if winner is not None:
                wins[{"a": "concise", "b": "padded", "tie": "tie"}[winner]] += 1
                if winner == "b":
                    padded_ids.add(case.id)
    decisive = wins["concise"] + wins["padded"]
    verdicts = decisive + wins["tie"]
    report: dict[str, Any] = {
        "probe": "verbosity",
        "mode": "pairwise",
        "cases": len(cases),
        "strategies": names,
        "padded_pairs": len(pairs),
        "status": status_counts([r for pair in graded for r in pair]),
        "verdicts": wins,
        **rate_fields("padded_win_rate", wins["padded"], decisive),
        "padded_win_p_value": binomial_p(wins["padded"], decisive),
        **rate_fields("padded_preferred_rate", wins["padded"], verdicts),
        **rate_fields("tie_rate", wins["tie"], verdicts),
        "padded_win_ids": sorted(padded_ids),
    }
    report |= unmeasured(verdicts, "parsed verdicts on a pair", report["status"])
    checks: list[BiasCheck] = [rate_check("padded_win_rate", wins["padded"], decisive, 0.5)]
    lines = [
        "# Verbosity probe (pairwise)",
        "",
        f"{len(pairs)} concise-vs-padded pairs from {len(cases)} cases, each judged in both "
        f"orders. Verdicts: concise {wins['concise']}, padded {wins['padded']}, tie {wins['tie']}.",
        "",
        f"- padded win rate among non-tie verdicts (0.5 = indifferent): "
        f"{fmt(report['padded_win_rate'], report['padded_win_rate_ci95'])}, "
        f"binomial p {fmt_p(report['padded_win_p_value'])}",
        f"- padded preferred, all verdicts: "
        f"{fmt(report['padded_preferred_rate'], report['padded_preferred_rate_ci95'])}",
        f"- pairs where the padded copy won: {listed(report['padded_win_ids'])}",
    ]
    return ProbeResult(report=report, checks=checks, markdown=lines)
