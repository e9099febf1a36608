"""Self-preference probe: does the judge favour answers from its own model family?

Cases carry the model that wrote each answer: `metadata.generator` (pointwise) or
`metadata.generator_a` / `generator_b` (pairs). Families come from model names
(`judge.probes.families`); the judge's family from its model, or `--judge-family` (a
family name or a model name). Cases that cannot compare the judge's family with another
are refused before anything is sent (`check_matches`).

Pointwise: judge_gap = mean judge score of own-family answers - of the others (Welch t
interval and test). With human labels (`--human FILE`, id,label) the same gap for the
humans on the same answers, and excess_gap = judge_gap - human_gap: how much more the
judge likes its own family than people do (0 = no self-preference).

Pairwise (pairs with exactly one own-family answer, judged in both orders and
swap-resolved so position bias cannot pose as self-preference): own_win_rate = own-family
wins / non-tie verdicts (Wilson, binomial test vs 0.5), beside the humans' own_win_rate
(from `--human` or `metadata.better`) and excess_own_preference = mean over pairs of
(judge own score - human own score), own score 1 win, 0.5 tie, 0 loss.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from calibration.estimates.probe_stats import binomial_p, difference_fields, rate_fields
from calibration.inference.means import welch_interval
from judge.engine.grader import Grader
from judge.errors import UsageError
from judge.probes._common import (
    BiasCheck,
    ProbeOptions,
    ProbeResult,
    fmt,
    fmt_p,
    mean_check,
    rate_check,
    status_counts,
)
from judge.probes.families import FAMILY_NAMES, family_of, judge_family
from judge.probes.position import judge_both_orders, pair_verdicts, resolve
from judge.rubric import Rubric
from judge.schemas import Case


def human_score(label: Any, rubric: Rubric) -> float | None:
    """A human label on the judge's 0..1 score scale (the rubric's kind reads it); None
    when it has none (abstained)."""
    return rubric.behaviour.human_score(rubric, label)


def gap_check(name: str, own: Sequence[float], other: Sequence[float]) -> BiasCheck:
    """The bias check on mean(own) - mean(other), with Welch intervals; no bias = 0."""
    estimate = float(np.mean(own) - np.mean(other)) if len(own) and len(other) else None
    return BiasCheck(
        name,
        estimate,
        0.0,
        lambda c: welch_interval(own, other, confidence=c),
        n=len(own) + len(other),
    )


async def run_self_preference(
    grader: Grader, cases: Sequence[Case], options: ProbeOptions
) -> ProbeResult:
    own = judge_family(options.judge_family, options.judge_model)
    head = {"probe": "self-preference", "judge_model": options.judge_model, "judge_family": own}
    pairwise = grader.rubric.behaviour.compares_two
    problem = match_problem(cases, own, pairwise=pairwise)
    result = await (_pairwise if pairwise else _pointwise)(grader, cases, options, head)
    if problem is not None:  # said, never silent: the report holds nothing to compare
        result.report["warning"] = problem
        result.markdown[1:1] = ["", f"**Warning:** {problem}"]
    return result


GENERATOR_KEYS = ("generator", "generator_a", "generator_b")


def case_families(cases: Sequence[Case]) -> set[str]:
    """Every model family the cases' generators belong to."""
    return {
        f for c in cases for k in GENERATOR_KEYS if (f := family_of(str(c.metadata.get(k) or "")))
    }


def match_problem(cases: Sequence[Case], own: str, *, pairwise: bool) -> str | None:
    """Why the cases cannot measure self-preference for the family `own` (None when they
    can): no pair with exactly one own-family answer (pairwise), or no own-family answer
    or no other one (pointwise). It names the families the cases hold and the valid
    names; `judge probe` says it before anything is sent. The offline rules judge with no
    answer of its own is refused instead (`needs_model_judge`): nothing can be measured."""
    needs_model_judge(cases, own)
    if pairwise:
        sides = [
            [family_of(str(c.metadata.get(k) or "")) for k in ("generator_a", "generator_b")]
            for c in cases
        ]
        found = {f for pair in sides for f in pair if f}
        if any((a == own) != (b == own) for a, b in sides):
            return None
        what = "no pair has exactly one answer from it (metadata.generator_a / generator_b)"
    else:
        families = [family_of(str(c.metadata.get("generator") or "")) for c in cases]
        found = {f for f in families if f}
        if own in found and any(f != own for f in families):
            return None
        side = "its own family" if own not in found else "any other family"
        what = f"no answer comes from {side} (metadata.generator)"
    held = ", ".join(sorted(found)) or "none: no case names its generator"
    return (
        f"the judge's family is {own!r} but {what}, so 0 answers are matched and there is "
        f"nothing to compare; the cases' families: {held}. --judge-family takes one of "
        f"{', '.join(FAMILY_NAMES)} (or a model name, e.g. gpt-4o)"
    )


def needs_model_judge(cases: Sequence[Case], own: str) -> None:
    """Refuse the offline rules judge when no answer is its own (UsageError): the probe
    measures how much a model judge favours its own family's answers, and the rules judge
    (the default, with no model configured) wrote none of them. `--judge-family` names a
    family to measure instead, on any judge."""
    if own == "rules" and "rules" not in case_families(cases):
        raise UsageError(
            "the self-preference probe needs a model judge: it measures how much a judge "
            "favours answers from its own model family, and the offline rules judge wrote "
            "none of these answers; set a model (--model and --base-url, or the test server "
            "`python -m judge.testserver`) or name the family to measure with --judge-family "
            "(e.g. openai)"
        )


async def _pointwise(
    grader: Grader, cases: Sequence[Case], options: ProbeOptions, head: dict[str, Any]
) -> ProbeResult:
    records = await grader.grade_many(cases)
    humans, rubric = options.human_labels or {}, grader.rubric
    by_family: dict[str, list[float]] = {}
    own: list[float] = []
    other: list[float] = []
    matched: dict[bool, list[tuple[float, float]]] = {True: [], False: []}  # (judge, human)
    for case, record in zip(cases, records, strict=True):
        family = family_of(str(case.metadata.get("generator") or "")) or "unknown"
        if record.score is None:
            continue
        by_family.setdefault(family, []).append(record.score)
        is_own = family == head["judge_family"]
        (own if is_own else other).append(record.score)
        h = human_score(humans[case.id], rubric) if case.id in humans else None
        if h is not None:
            matched[is_own].append((record.score, h))
    d_own = [j - h for j, h in matched[True]]
    d_other = [j - h for j, h in matched[False]]
    h_own, h_other = [h for _, h in matched[True]], [h for _, h in matched[False]]
    report: dict[str, Any] = {
        **head,
        "mode": "pointwise",
        "cases": len(cases),
        "status": status_counts(records),
        "by_family": {
            f: {"n": len(s), "mean_score": float(np.mean(s))} for f, s in sorted(by_family.items())
        },
        "own_answers": len(own),
        "other_answers": len(other),
        **difference_fields("judge_gap", own, other),
        "human_matched": len(d_own) + len(d_other),
        **difference_fields("human_gap", h_own, h_other),
        **difference_fields("excess_gap", d_own, d_other),
    }
    humans_known = bool(d_own or d_other)
    check = (
        gap_check("excess_gap", d_own, d_other)
        if humans_known
        else gap_check("judge_gap", own, other)
    )
    lines = [
        "# Self-preference probe (pointwise)",
        "",
        f"Judge family: {head['judge_family']}; {len(own)} own-family answers, {len(other)} others.",
        "",
        "| family | answers | mean judge score |",
        "|---|---|---|",
        *(f"| {f} | {v['n']} | {fmt(v['mean_score'])} |" for f, v in report["by_family"].items()),
        "",
        f"- judge gap (own - others): {fmt(report['judge_gap'], report['judge_gap_ci95'])}",
        f"- human gap on the same answers: {fmt(report['human_gap'], report['human_gap_ci95'])}",
        f"- excess (judge gap - human gap): {fmt(report['excess_gap'], report['excess_gap_ci95'])}",
    ]
    return ProbeResult(report=report, checks=[check], markdown=lines)


async def _pairwise(
    grader: Grader, cases: Sequence[Case], options: ProbeOptions, head: dict[str, Any]
) -> ProbeResult:
    own_family, humans = head["judge_family"], options.human_labels or {}
    mixed: list[tuple[Case, str]] = []  # (pair, own side "a" or "b")
    for case in cases:
        fa = family_of(str(case.metadata.get("generator_a") or "")) == own_family
        fb = family_of(str(case.metadata.get("generator_b") or "")) == own_family
        if fa != fb:
            mixed.append((case, "a" if fa else "b"))
    graded = await judge_both_orders(grader, [c for c, _ in mixed])
    judge_scores, diffs, human_wins, human_decisive = [], [], 0, 0
    for (case, side), (ab, ba) in zip(mixed, graded, strict=True):
        winner = resolve(pair_verdicts(case.id, ab, ba))
        if winner is None:
            continue
        score = 0.5 if winner == "tie" else float(winner == side)
        judge_scores.append(score)
        label = humans.get(case.id, case.metadata.get("better"))
        h = human_score(label, grader.rubric) if label is not None else None
        if h is not None:
            h_own = h if side == "a" else 1 - h
            diffs.append(score - h_own)
            human_decisive += h_own != 0.5
            human_wins += h_own == 1.0
    wins = sum(s == 1.0 for s in judge_scores)
    decisive = sum(s != 0.5 for s in judge_scores)
    report: dict[str, Any] = {
        **head,
        "mode": "pairwise",
        "cases": len(cases),
        "mixed_pairs": len(mixed),
        "status": status_counts([r for pair in graded for r in pair]),
        "own_wins": wins,
        "decisive_verdicts": decisive,
        **rate_fields("own_win_rate", wins, decisive),
        "own_win_p_value": binomial_p(wins, decisive),
        "human_matched": len(diffs),
        **rate_fields("human_own_win_rate", human_wins, human_decisive),
        "excess_own_preference": float(np.mean(diffs)) if diffs else None,
    }
    checks: list[BiasCheck] = (
        [mean_check("excess_own_preference", diffs)]
        if diffs
        else [rate_check("own_win_rate", wins, decisive, 0.5)]
    )
    lines = [
        "# Self-preference probe (pairwise)",
        "",
        f"Judge family: {own_family}; {len(mixed)} pairs with exactly one own-family answer, "
        "judged in both orders and swap-resolved.",
        "",
        f"- judge's own-family win rate: {fmt(report['own_win_rate'], report['own_win_rate_ci95'])}, "
        f"binomial p {fmt_p(report['own_win_p_value'])}",
        f"- humans' own-family win rate: "
        f"{fmt(report['human_own_win_rate'], report['human_own_win_rate_ci95'])}",
        f"- excess own preference (judge - human, per pair): {fmt(report['excess_own_preference'])}",
    ]
    return ProbeResult(report=report, checks=checks, markdown=lines)
