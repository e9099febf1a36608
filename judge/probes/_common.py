"""Bias probes: transform the inputs, reuse the grader, report rates with 95% intervals.

Each probe (position, verbosity, repeat, injection, self-preference) lives in its own
module of `judge.probes` and returns a `ProbeResult`: a JSON-ready report, the bias checks
a CI gate can act on, a short Markdown summary and, for some probes, records. This module
holds what they share that is about probes: loading cases, the bias checks, the gate and
the writers. The statistics are pure functions in `calibration` (`calibration.estimates.probe_stats`
for report fields, `calibration.inference.intervals` and `calibration.inference.means` for intervals).

Every rate `x` in a report comes with `x_ci95` (Wilson 95% interval) and the counts it was
computed from. Failed verdicts (`parse_error`, `api_error`) are never a grade: they are
counted in the report and left out of every rate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import numpy as np

from calibration.decisions.gates import Condition, evaluate, flatten_numbers
from calibration.inference.intervals import wilson_interval
from calibration.inference.means import mean_interval
from calibration.io.jsonout import write_strict_json
from judge.engine.inputs import iter_cases, validate_file
from judge.rubric import Rubric
from judge.schemas import Case, GradedRecord, Status

PROBE_KINDS = ("position", "verbosity", "repeat", "injection", "self-preference")
# The probes that change or compare the graded answer: a rubric that grades none (its kind
# has no answer field, e.g. context relevance) has nothing for them to act on.
ANSWER_PROBES = ("verbosity", "self-preference")
MAX_LISTED_IDS = 20
UNDEFINED_CHECK = "too few verdicts for an estimate and its interval"
UNDEFINED_METRIC = "nothing in this run to compute it from"


@dataclass(frozen=True)
class ProbeOptions:
    """What a probe needs beyond the grader and the cases."""

    repeats: int = 5
    paddings: tuple[str, ...] = ()  # verbosity: empty = every strategy
    judge_model: str | None = None  # self-preference: the judge's model name
    judge_family: str | None = None  # self-preference: overrides the family read from the model
    human_labels: dict[str, Any] | None = None  # id -> human label (self-preference)


@dataclass(frozen=True)
class BiasCheck:
    """One bias a gate can act on: an estimate, its value under no bias, an interval at any
    confidence, and how many units (`n` pairs or cases) it rests on.

    Three outcomes (a probe never passes on too little evidence):
    `biased` when the interval lies entirely outside `null ± tolerance`; `ok` (the pass)
    only when it lies entirely inside; `inconclusive` when it straddles an edge: too few
    units to tell, which fails the gate like `undefined` and names how many units would
    tell (:func:`units_needed`). A judge with a true first-position rate of 0.78 passed a
    position probe of 5-10 pairs 37% of the time when "not shown biased" was a pass."""

    name: str
    estimate: float | None
    null: float
    interval: Callable[[float], tuple[float, float]]
    n: int = 0
    unit: str = "cases"

    def evaluate(self, *, tolerance: float, confidence: float) -> dict[str, Any]:
        """The check at `confidence`: `ok`, `biased`, `inconclusive` or `undefined` (no
        estimate or no interval); all but `ok` fail the gate (`calibration.decisions.gates`)."""
        lo, hi = self.interval(confidence)
        defined = self.estimate is not None and math.isfinite(lo) and math.isfinite(hi)
        low_edge, high_edge = self.null - tolerance, self.null + tolerance
        biased = defined and (lo > high_edge or hi < low_edge)
        inside = defined and low_edge < lo and hi < high_edge
        status = (
            "undefined"
            if not defined
            else "biased"
            if biased
            else "ok"
            if inside
            else "inconclusive"
        )
        out = {
            "check": self.name,
            "estimate": self.estimate,
            "null": self.null,
            "interval": [lo, hi],
            "confidence": confidence,
            "tolerance": tolerance,
            "status": status,
            "fails": status != "ok",
            "reason": None if defined else UNDEFINED_CHECK,
            "n": self.n,
            "unit": self.unit,
        }
        if status == "inconclusive":
            assert self.estimate is not None
            needed = units_needed(self.estimate, (lo, hi), self.n, self.null, tolerance)
            out["needed"] = needed
            out["reason"] = inconclusive_reason(self.unit, self.n, needed, self.null, tolerance)
        return out


def units_needed(
    estimate: float, interval: tuple[float, float], n: int, null: float, tolerance: float
) -> int | None:
    """About how many units would put the interval on one side of `null ± tolerance`: the
    interval's half-width shrinks as 1/sqrt(n), so `n · (half-width / d)²` with `d` the
    distance from the estimate to the nearer edge; `None` when the estimate sits on an
    edge (no size tells it) or nothing was observed."""
    distance = abs(abs(estimate - null) - tolerance)
    half = (interval[1] - interval[0]) / 2
    if n <= 0 or distance < 1e-9:
        return None
    return max(n + 1, math.ceil(n * (half / distance) ** 2))


def inconclusive_reason(
    unit: str, n: int, needed: int | None, null: float, tolerance: float
) -> str:
    """The sentence an inconclusive check fails with."""
    how = (
        f"about {needed} {unit} would tell"
        if needed is not None
        else "the estimate sits on the tolerance's edge, no number of "
        f"{unit} will tell at this estimate"
    )
    return (
        f"too few {unit} to tell: with {n} {unit} the interval holds both "
        f"{null:g} ± {tolerance:g} (no bias) and values beyond it; {how}"
    )


def rate_check(name: str, k: int, n: int, null: float, *, unit: str = "cases") -> BiasCheck:
    """A bias check on the rate k / n with Wilson intervals."""
    estimate = k / n if n else None
    return BiasCheck(
        name, estimate, null, lambda c: wilson_interval(k, n, confidence=c), n=n, unit=unit
    )


def mean_check(name: str, values: Sequence[float], null: float = 0.0) -> BiasCheck:
    """A bias check on a mean with Student t intervals."""
    array = np.asarray(values, dtype=float)
    estimate = float(array.mean()) if len(array) else None
    return BiasCheck(
        name, estimate, null, lambda c: mean_interval(array, confidence=c), n=len(array)
    )


@dataclass
class ProbeResult:
    """What one probe run produced."""

    report: dict[str, Any]
    checks: list[BiasCheck] = field(default_factory=list)
    markdown: list[str] = field(default_factory=list)
    records: list[GradedRecord] | None = None


def probe_problem(probe: str, rubric: Rubric) -> str | None:
    """Why `probe` cannot run on `rubric` (its kind decides: a kind that needs no judge has
    no judge to probe; one that grades no answer has no answer to pad), or None."""
    kind = rubric.behaviour
    if not kind.needs_judge:
        return (
            f"rubric {rubric.ref} is computed from the cases alone, with no judge and no "
            f"answer: there is nothing for the {probe} probe to probe"
        )
    if probe in ANSWER_PROBES and not kind.answer_fields:
        return (
            f"the {probe} probe changes the graded answer, and rubric {rubric.ref} grades no "
            "answer (repeat and injection into the contexts still apply)"
        )
    if probe in ANSWER_PROBES and not kind.answers_are_text:
        return (
            f"the {probe} probe pads or attributes one answer text, and rubric {rubric.ref} "
            "grades conversations (repeat, injection and, for two conversations, position apply)"
        )
    return None


# ---- Markdown ------------------------------------------------------------------------


def listed(ids: Sequence[str]) -> str:
    """Ids for a Markdown line, the first MAX_LISTED_IDS of them."""
    if not ids:
        return "none"
    more = len(ids) - MAX_LISTED_IDS
    return ", ".join(f"`{i}`" for i in ids[:MAX_LISTED_IDS]) + (
        f" (+{more} more)" if more > 0 else ""
    )


def fmt(value: Any, ci: Any = None) -> str:
    """A number for Markdown: 3 decimals, with its interval when given."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    text = f"{value:.3f}" if isinstance(value, float) else str(value)
    if ci and all(isinstance(v, float) and math.isfinite(v) for v in ci):
        text += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
    return text


def fmt_p(value: Any) -> str:
    """A p-value for Markdown: `< 0.001` below that (never `0.000`), else 3 decimals."""
    if not isinstance(value, int | float) or not math.isfinite(value):
        return "n/a"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


# ---- inputs and outputs ----------------------------------------------------------------


def load_cases(path: Path, rubric: Rubric) -> list[Case]:
    """Every case of a file, validated in full first (InputError names file and line)."""
    validate_file(path, rubric)
    return list(iter_cases(path))


def unmeasured(count: int, what: str, status: Mapping[str, int]) -> dict[str, str]:
    """`{"unmeasured": why}` when the probe's figures rest on nothing (`count` of `what`
    is 0), so the report says why and the run fails (`probe_failure`); else `{}`. The
    failed verdicts are counted: "nothing parsed" is told apart from "no variation"."""
    if count:
        return {}
    failed = {s: n for s, n in status.items() if s in ("parse_error", "api_error") and n}
    why = f"0 {what}"
    if failed:
        parts = ", ".join(f"{s} {n}" for s, n in failed.items())
        why += f": {sum(failed.values())} of {sum(status.values())} verdicts failed ({parts})"
    return {"unmeasured": why}


def status_counts(records: Sequence[GradedRecord]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        counts[record.status] = counts.get(record.status, 0) + 1
    return counts


def write_outputs(result: ProbeResult, out: Path) -> list[Path]:
    """OUT.json (strict JSON), OUT.md beside it and, when the probe made records,
    OUT.records.jsonl (one graded record per input case, input order)."""
    write_strict_json(out, result.report)
    written = [out, out.with_suffix(".md")]
    written[1].write_text("\n".join(result.markdown).rstrip() + "\n", "utf-8")
    if result.records is not None:
        path = out.with_suffix(".records.jsonl")
        with path.open("w", encoding="utf-8") as handle:
            for record in result.records:
                handle.write(record.model_dump_json() + "\n")
        written.append(path)
    return written


# ---- the gate --------------------------------------------------------------------------


def probe_metrics(report: dict[str, Any]) -> dict[str, Any]:
    """The report's numbers under dotted names (`by_strategy.recap.n`), as a gate sees
    them; a status no verdict had counts 0 (the report lists only the statuses seen). A
    jury's report gives each juror's under `juror.NAME.` (`juror.a.consistency_rate`)."""
    values = flatten_numbers({k: v for k, v in report.items() if k not in ("gate", "jurors")})
    if isinstance(report.get("status"), dict):
        for status in get_args(Status):
            values.setdefault(f"status.{status}", 0)
    for name, juror in (report.get("jurors") or {}).items():  # a jury's (judge.jury.probe)
        values |= {f"juror.{name}.{k}": v for k, v in probe_metrics(juror).items()}
    return values


def run_gate(
    result: ProbeResult,
    *,
    conditions: Sequence[Condition] = (),
    biased: bool = False,
    tolerance: float = 0.05,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Evaluate `--fail-if` conditions (parsed up front; fail when one holds) and, with
    `biased`, every bias check at confidence 1 - alpha. An undefined metric or check fails
    the gate, with its reason (`calibration.decisions.gates`: one rule for every command)."""
    values = probe_metrics(result.report)
    reasons = {name: UNDEFINED_METRIC for name, value in values.items() if value is None}
    checks = [check.as_dict() for check in evaluate(conditions, values, reasons=reasons)]
    if biased:
        for check in result.checks:
            checks.append(check.evaluate(tolerance=tolerance, confidence=1 - alpha))
    return {"failed": any(c["fails"] for c in checks), "checks": checks}


def gate_markdown(gate: dict[str, Any]) -> list[str]:
    if not gate["checks"]:
        return []
    lines = ["", f"## Gate: {'FAILED' if gate['failed'] else 'passed'}", ""]
    for check in gate["checks"]:
        if "condition" in check:
            lines.append(f"- `{check['condition']}`: {fmt(check['value'])} -> {_outcome(check)}")
        else:
            lo, hi = check["interval"]
            span = "n/a" if check["status"] == "undefined" else f"{lo:.3f}..{hi:.3f}"
            lines.append(
                f"- {check['check']}: {fmt(check['estimate'])} (interval {span}, no bias = "
                f"{check['null']}, tolerance {check['tolerance']}) -> {_outcome(check)}"
            )
    return lines


def _outcome(check: dict[str, Any]) -> str:
    if check["status"] == "undefined":
        return f"undefined (fails: {check['reason']})"
    if check["status"] == "inconclusive":
        return f"FAILS: {check['reason']}"
    return str(check["status"])
