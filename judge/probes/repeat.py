"""Repeatability probe: each case judged K times with the cache bypassed.

- exact_agreement_rate = cases whose K verdicts all give the same label (`abstained`
  counts as a label) / cases with K parsed verdicts, Wilson interval.
- per-case spread = max - min of the K scores; the report gives its mean and maximum and
  the ids of the cases that moved.
- agreement coefficient: Krippendorff's alpha with the repeats as raters, nominal on
  labels and interval on scores (1 = perfectly repeatable, 0 = chance); null when every
  verdict is the same (no disagreement to expect), which is perfect repeatability.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from calibration.agreement.multirater import krippendorff_alpha
from calibration.estimates.probe_stats import rate_fields
from judge.engine.grader import Grader
from judge.errors import UsageError
from judge.probes._common import (
    ProbeOptions,
    ProbeResult,
    fmt,
    listed,
    rate_check,
    status_counts,
    unmeasured,
)
from judge.schemas import Case, GradedRecord


def outcome_label(record: GradedRecord) -> str | None:
    if record.status == "abstained":
        return "abstained"
    return record.label if record.status == "ok" else None


def repeat_stats(ids: Sequence[str], runs: Sequence[Sequence[GradedRecord]]) -> dict[str, Any]:
    """The figures of the module docstring from `runs[i]` = the K records of case `ids[i]`."""
    labels = [[outcome_label(r) for r in rs] for rs in runs]
    scores = [[r.score for r in rs] for rs in runs]
    complete = [i for i, ls in enumerate(labels) if all(x is not None for x in ls)]
    agreeing = [i for i in complete if len(set(labels[i])) == 1]
    spreads = {
        ids[i]: max(s) - min(s)
        for i, ss in enumerate(scores)
        if len(s := [x for x in ss if x is not None]) >= 2
    }
    unstable = [ids[i] for i in complete if i not in set(agreeing)]
    unstable += [i for i, s in spreads.items() if s > 0 and i not in unstable]
    return {
        "complete_cases": len(complete),
        "agreeing_cases": len(agreeing),
        **rate_fields("exact_agreement_rate", len(agreeing), len(complete)),
        "mean_spread": float(np.mean(list(spreads.values()))) if spreads else None,
        "max_spread": max(spreads.values()) if spreads else None,
        "spread_by_case": spreads,
        "unstable_ids": unstable,
        "krippendorff_alpha_labels": _alpha(labels, "nominal"),
        "krippendorff_alpha_scores": _alpha(scores, "interval"),
    }


def _alpha(table: list[list[Any]], level: str) -> float | None:
    if not table:
        return None
    value = krippendorff_alpha(np.asarray(table, dtype=object), level=level)  # type: ignore[arg-type]
    return None if np.isnan(value) else value


async def run_repeat(grader: Grader, cases: Sequence[Case], options: ProbeOptions) -> ProbeResult:
    k = options.repeats
    if k < 2:
        raise UsageError(f"--repeats must be at least 2, got {k}")
    records = await grader.grade_many((c for c in cases for _ in range(k)), use_cache=False)
    runs = [records[i * k : (i + 1) * k] for i in range(len(cases))]
    report: dict[str, Any] = {
        "probe": "repeat",
        "cases": len(cases),
        "repeats": k,
        "judge_calls": sum(not r.cached for r in records),
        "status": status_counts(records),
        **repeat_stats([c.id for c in cases], runs),
    }
    n, agreeing = report["complete_cases"], report["agreeing_cases"]
    report |= unmeasured(n, "cases with every repeat parsed", report["status"])
    # an alpha of null means no variation only where verdicts parsed
    blank = "n/a = no variation at all" if n else "n/a: no case has every repeat parsed"
    lines = [
        "# Repeatability probe",
        "",
        f"{len(cases)} cases x {k} repeats, cache bypassed; {n} cases with every repeat parsed.",
        "",
        f"- exact agreement across repeats: "
        f"{fmt(report['exact_agreement_rate'], report['exact_agreement_rate_ci95'])}",
        f"- score spread per case (max - min): mean {fmt(report['mean_spread'])}, "
        f"max {fmt(report['max_spread'])}",
        f"- Krippendorff's alpha across repeats: labels {fmt(report['krippendorff_alpha_labels'])}, "
        f"scores {fmt(report['krippendorff_alpha_scores'])} ({blank})",
        f"- cases that moved: {listed(report['unstable_ids'])}",
    ]
    checks = [rate_check("disagreement_rate", n - agreeing, n, 0.0)]
    return ProbeResult(report=report, checks=checks, markdown=lines)
