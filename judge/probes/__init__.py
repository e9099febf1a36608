"""Bias probes: transform the inputs, reuse the grader, report rates with 95% intervals.

One module per probe (`position`, `verbosity`, `repeat`, `injection`, `self_preference`),
each returning a `ProbeResult`: a JSON-ready report, the bias checks a CI gate can act on, a
short Markdown summary and, for some probes, records. What they share (loading cases, bias
checks, the gate, the writers) is in `judge.probes._common`; their statistics (rates with
Wilson intervals, t and Welch intervals, tests) are pure functions in `calibration`; which
inputs a probe may pad, swap or inject into is the rubric kind's to say (`judge.kinds`).
"""

from __future__ import annotations

from collections.abc import Sequence

from judge.engine.grader import Grader
from judge.errors import UsageError
from judge.probes._common import (
    PROBE_KINDS,
    BiasCheck,
    ProbeOptions,
    ProbeResult,
    gate_markdown,
    load_cases,
    probe_metrics,
    probe_problem,
    rate_check,
    run_gate,
    write_outputs,
)
from judge.probes.injection import INJECTIONS, PLACEMENTS, run_injection
from judge.probes.position import run_position
from judge.probes.repeat import run_repeat
from judge.probes.self_preference import run_self_preference
from judge.probes.verbosity import PADDINGS, run_verbosity
from judge.schemas import Case

__all__ = [
    "PROBE_KINDS",
    "BiasCheck",
    "ProbeOptions",
    "ProbeResult",
    "gate_markdown",
    "load_cases",
    "probe_metric_names",
    "probe_metrics",
    "probe_problem",
    "rate_check",
    "run_gate",
    "run_probe",
    "write_outputs",
]

# What `--fail-if` may name, per probe: the report's numbers (tests/e2e/test_exit_codes.py checks
# these against real reports). Rates' `_ci95` lists and per-case maps are not gateable.
_PROBE_METRICS: dict[str, tuple[str, ...]] = {
    "position": (
        *("judge_calls", "pairs", "complete_pairs", "unparsed_pairs", "consistent_pairs"),
        *("consistency_rate", "inconsistent_pairs", "first_slot_inconsistency_rate"),
        *("second_slot_inconsistency_rate", "tie_inconsistency_rate", "first_position_wins"),
        *("decisive_verdicts", "first_position_win_rate", "first_position_p_value"),
        *("first_position_pairs_up", "first_position_pairs_down"),
        *("tie_verdicts", "tie_rate", "tied_both_orders", "inconsistent.first_slot"),
        *("inconsistent.second_slot", "inconsistent.with_tie", "resolved.a", "resolved.b"),
        "resolved.tie",
    ),
    "verbosity": ("cases", "n", "score_changes_total"),
    "repeat": (
        *("cases", "repeats", "judge_calls", "complete_cases", "agreeing_cases"),
        *("exact_agreement_rate", "mean_spread", "max_spread", "krippendorff_alpha_labels"),
        "krippendorff_alpha_scores",
    ),
    "injection": ("cases", "variants"),
    "self-preference": (
        *("cases", "mixed_pairs", "own_wins", "decisive_verdicts", "own_win_rate"),
        *("own_win_p_value", "human_matched", "human_own_win_rate", "excess_own_preference"),
    ),
}
_CHANGE = (
    *("n", "mean_score_change", "raised", "lowered", "unchanged", "share_raised"),
    *("share_lowered", "wilcoxon_p_value"),
)
_FLIPS = ("eligible", "flips", "flip_rate", "toward_rate")


def probe_metric_names(
    probe: str, *, paddings: Sequence[str] = (), jurors: Sequence[str] = ()
) -> set[str]:
    """Every name `--fail-if` accepts for a probe (`paddings`: the verbosity strategies
    chosen, default all), so a typo is refused before anything is sent. With `jurors` (a
    jury's names, judge.jury.probe) the names are the panel's, each juror's under
    `juror.NAME.`, and `jury.requests`."""
    if jurors:
        own = probe_metric_names(probe, paddings=paddings)
        each = {f"juror.{j}.{name}" for j in jurors for name in own}
        return own | each | {"jury.requests", *(f"jury.requests_by_juror.{j}" for j in jurors)}
    names = set(_PROBE_METRICS[probe])
    if probe != "position":
        names |= {f"status.{s}" for s in ("ok", "abstained", "parse_error", "api_error")}
    if probe == "verbosity":
        names |= set(_CHANGE)
        for strategy in paddings or PADDINGS:
            names |= {f"by_strategy.{strategy}.{leaf}" for leaf in _CHANGE}
    if probe == "injection":
        names |= set(_FLIPS)
        for group, keys in (("by_injection", INJECTIONS), ("by_placement", PLACEMENTS)):
            names |= {f"{group}.{key}.{leaf}" for key in keys for leaf in _FLIPS}
    return names


async def run_probe(
    probe: str, grader: Grader, cases: Sequence[Case], options: ProbeOptions | None = None
) -> ProbeResult:
    """Run one probe (a name of PROBE_KINDS) over validated cases with `grader`."""
    runners = {
        "position": run_position,
        "verbosity": run_verbosity,
        "repeat": run_repeat,
        "injection": run_injection,
        "self-preference": run_self_preference,
    }
    if probe not in runners:
        raise UsageError(f"unknown probe {probe!r}; one of {', '.join(PROBE_KINDS)}")
    problem = probe_problem(probe, grader.rubric)
    if problem:
        raise UsageError(problem)
    return await runners[probe](grader, cases, options or ProbeOptions())
