"""`judge probe --jury`: a bias probe on a panel, and on each of its jurors beside it.

A probe asks its grader `grade_many(cases)` (judge.probes). `PanelGrader` answers as a
single judge's grader does, by asking every juror's own grader (its cache, retries,
parsing, repair and concurrency; the jurors concurrently) and tallying each case's votes
into a panel record (judge.jury.records: the jury file's rule, quorum and weights). The
probe's figures are then the panel's. Every juror's records of each call are kept, and the
same probe is run again on each juror with `_Replay`, a grader that answers those records
in the order they were asked (no request is sent twice): the juror's own figures, so the
report shows whether the panel dilutes one juror's position or verbosity bias.

Only `mode: full` juries probe: a probe compares each case's variants (both orders, the
padded copy), which a cyclic or escalating panel would hand to different jurors.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from judge.engine.grader import Grader
from judge.errors import ApiError, UsageError
from judge.jury.config import Jury
from judge.jury.records import panel_record
from judge.jury.run import Panel, all_jurors, naming
from judge.probes import ProbeOptions, ProbeResult, run_probe
from judge.probes._common import fmt
from judge.rubric import Rubric
from judge.schemas import Case, GradedRecord

# The figures of each probe the per-juror table shows (a report's own names).
HEADLINES: dict[str, tuple[str, ...]] = {
    "position": ("consistency_rate", "first_position_win_rate", "tie_rate"),
    "verbosity": ("mean_score_change", "share_raised", "padded_win_rate"),
    "repeat": ("exact_agreement_rate", "mean_spread"),
    "injection": ("flip_rate", "toward_rate"),
    "self-preference": ("own_win_rate", "excess_own_preference"),
}


def check_probe_jury(jury: Jury, probe: str, judge_family: str | None) -> None:
    """What a jury cannot probe, refused before anything is sent (a UsageError)."""
    if jury.mode != "full":
        raise UsageError(
            f"judge probe --jury takes a jury of mode: full, not mode: {jury.mode} (a probe "
            "compares each case's variants, which that mode would give to different jurors)"
        )
    if probe == "self-preference" and judge_family is None:
        raise UsageError(
            "self-preference with --jury needs --judge-family: a panel has no model family "
            "of its own (each juror's figures use its own model's family)"
        )


class PanelGrader:
    """A panel as a probe's grader: each case asked of every juror, the votes tallied."""

    def __init__(self, panel: Panel) -> None:
        self.panel = panel
        self.rubric: Rubric = panel.rubric
        self.calls: list[list[list[GradedRecord]]] = []  # per call: per juror, its records
        self.outcomes: Counter[str] = Counter()  # the panel's outcomes, over every call

    async def grade_many(
        self, cases: Iterable[Case], *, use_cache: bool = True
    ) -> list[GradedRecord]:
        """The panel's record of each case (input order), from every juror's record."""
        listed = list(cases)
        jury, graders = self.panel.jury, self.panel.graders

        async def one(number: int) -> list[GradedRecord]:
            try:
                return await graders[number].grade_many(listed, use_cache=use_cache)
            except ApiError as exc:
                raise naming(exc, jury.jurors[number], graders[number]) from exc

        per_juror = await all_jurors([one(n) for n in range(len(graders))])
        self.calls.append(per_juror)
        identity = self.panel.identity
        records = [
            panel_record(self.rubric, jury, list(row), identity)
            for row in zip(*per_juror, strict=True)
        ]
        self.outcomes.update(str(r.panel["outcome"]) for r in records)
        return list(records)


class _Replay:
    """One juror's records of a panel probe, answered again in the order they were asked."""

    def __init__(self, rubric: Rubric, calls: Sequence[list[GradedRecord]]) -> None:
        self.rubric = rubric
        self._calls = iter(calls)

    async def grade_many(
        self, cases: Iterable[Case], *, use_cache: bool = True
    ) -> list[GradedRecord]:
        records = next(self._calls)
        ids = [c.id for c in cases]
        if ids != [r.id for r in records]:  # the probes are deterministic: a bug otherwise
            raise RuntimeError("a juror's replay was asked other cases than the panel was")
        return records


async def probe_panel(
    probe: str,
    panel: Panel,
    cases: Sequence[Case],
    options: ProbeOptions,
) -> ProbeResult:
    """The probe on the panel, with `jurors` (each juror's report on its own votes) and
    `jury` (rule, outcomes, requests per juror) in its report and a per-juror table in its
    Markdown. Self-preference: the panel's family is `options.judge_family`; each
    juror's is its own model's."""
    grader = PanelGrader(panel)
    result = await run_probe(probe, _as_grader(grader), cases, options)
    names = [j.name for j in panel.jury.jurors]
    reports: dict[str, dict[str, Any]] = {}
    for number, juror in enumerate(panel.jury.jurors):
        calls = [call[number] for call in grader.calls]
        own = dataclasses.replace(options, judge_model=juror.model, judge_family=None)
        replay = _as_grader(_Replay(panel.rubric, calls))
        reports[juror.name] = (await run_probe(probe, replay, cases, own)).report
    requests = {
        name: sum(not r.cached for call in grader.calls for r in call[n])
        for n, name in enumerate(names)
    }
    if "judge_calls" in result.report:  # the panel's requests are all its jurors'
        result.report["judge_calls"] = sum(requests.values())
    result.report["jury"] = {
        "rule": panel.jury.rule,
        "scores": panel.jury.scores,
        "min_votes": panel.jury.quorum,
        "jurors": [{"name": j.name, "model": j.model} for j in panel.jury.jurors],
        "outcomes": dict(sorted(grader.outcomes.items())),
        "requests": sum(requests.values()),
        "requests_by_juror": requests,
    }
    result.report["jurors"] = reports
    result.markdown += juror_table(probe, result.report, reports)
    return result


def _as_grader(grader: PanelGrader | _Replay) -> Grader:
    """A probe takes a `Grader`; these answer the two things a probe asks of one
    (`rubric`, `grade_many`)."""
    return grader  # type: ignore[return-value]


def juror_table(probe: str, panel: dict[str, Any], jurors: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown: the probe's headline figures (95% intervals) for the panel and each juror."""
    shown = [k for k in HEADLINES[probe] if any(k in r for r in (panel, *jurors.values()))]
    if not shown:
        return []
    lines = [
        "",
        "## The panel and each juror",
        "",
        "| judge | " + " | ".join(shown) + " |",
        "|---|" + "---|" * len(shown),
    ]
    for name, report in [("panel", panel), *jurors.items()]:
        cells = [fmt(report.get(k), report.get(f"{k}_ci95")) for k in shown]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines
