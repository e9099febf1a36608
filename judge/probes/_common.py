"""Bias probes: transform the inputs, reuse the grader, report rates with 95% intervals.

Each probe (position, verbosity, repeat, injection, self-preference) lives in its own
`judge/probes_<name>.py` and returns a `ProbeResult`: a JSON-ready report, the bias checks
a CI gate can act on, a short Markdown summary and, for some probes, records. This module
holds what they share: loading cases, rates with Wilson intervals, the gate and the writers.

Every rate `x` in a report comes with `x_ci95` (Wilson 95% interval) and the counts it was
computed from. Failed verdicts (`parse_error`, `api_error`) are never a grade: they are
counted in the report and left out of every rate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from calibration.intervals import binomial_test_p, wilson_interval
from calibration.report import to_strict_json
from judge.engine import gates
from judge.engine.inputs import iter_cases, validate_file
from judge.errors import UsageError
from judge.rubric import Rubric
from judge.schemas import Case, GradedRecord

PROBE_KINDS = ("position", "verbosity", "repeat", "injection", "self-preference")
# The probes that change or compare the graded answer: a rubric that grades none (its kind
# has no answer field, e.g. context relevance) has nothing for them to act on.
ANSWER_PROBES = ("verbosity", "self-preference")
MAX_LISTED_IDS = 20


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
    """One bias a gate can act on: an estimate, its value under no bias, and an interval
    at any confidence. Biased beyond `tolerance` = the interval lies entirely outside
    `null ± tolerance`."""

    name: str
    estimate: float | None
    null: float
    interval: Callable[[float], tuple[float, float]]

    def evaluate(self, *, tolerance: float, confidence: float) -> dict[str, Any]:
        lo, hi = self.interval(confidence)
        defined = self.estimate is not None and math.isfinite(lo) and math.isfinite(hi)
        biased = defined and (lo > self.null + tolerance or hi < self.null - tolerance)
        return {
            "check": self.name,
            "estimate": self.estimate,
            "null": self.null,
            "interval": [lo, hi],
            "confidence": confidence,
            "tolerance": tolerance,
            "status": "undefined" if not defined else "biased" if biased else "ok",
        }


def rate_check(name: str, k: int, n: int, null: float) -> BiasCheck:
    """A bias check on the rate k / n with Wilson intervals."""
    estimate = k / n if n else None
    return BiasCheck(name, estimate, null, lambda c: wilson_interval(k, n, confidence=c))


def mean_check(name: str, values: Sequence[float], null: float = 0.0) -> BiasCheck:
    """A bias check on a mean with Student t intervals."""
    array = np.asarray(values, dtype=float)
    estimate = float(array.mean()) if len(array) else None
    return BiasCheck(name, estimate, null, lambda c: mean_interval(array, confidence=c))


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
    return None


# ---- statistics ------------------------------------------------------------------------


def rate_fields(name: str, k: int, n: int) -> dict[str, Any]:
    """`{name: k/n, name_ci95: [lo, hi]}`; both null when n is 0 (nothing observed)."""
    if n == 0:
        return {name: None, f"{name}_ci95": None}
    lo, hi = wilson_interval(k, n)
    # exact ends: the formula leaves float noise (1e-17) where the bound is 0 or 1
    return {name: k / n, f"{name}_ci95": [0.0 if k == 0 else lo, 1.0 if k == n else hi]}


def binomial_p(k: int, n: int, p: float = 0.5) -> float | None:
    """Exact two-sided binomial test p-value; null when n is 0."""
    return None if n == 0 else binomial_test_p(k, n, p)


def mean_interval(values: np.ndarray, *, confidence: float = 0.95) -> tuple[float, float]:
    """Student t interval of the mean; (nan, nan) below two values. A constant sample
    gives a zero-width interval at its value."""
    n = len(values)
    if n < 2:
        return (math.nan, math.nan)
    mean = float(values.mean())
    sem = float(values.std(ddof=1)) / math.sqrt(n)
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sem
    return (mean - half, mean + half)


def paired_change(before: Sequence[float], after: Sequence[float]) -> dict[str, Any]:
    """Mean change after - before with its t interval, shares raised / lowered / unchanged
    (Wilson), and the Wilcoxon signed-rank p-value (scipy; null when every change is 0)."""
    diffs = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    n = len(diffs)
    raised, lowered = int((diffs > 1e-12).sum()), int((diffs < -1e-12).sum())
    out: dict[str, Any] = {"n": n}
    out["mean_score_change"] = float(diffs.mean()) if n else None
    lo, hi = mean_interval(diffs)
    out["mean_score_change_ci95"] = [lo, hi] if n >= 2 else None
    out["raised"], out["lowered"], out["unchanged"] = raised, lowered, n - raised - lowered
    out.update(rate_fields("share_raised", raised, n))
    out.update(rate_fields("share_lowered", lowered, n))
    out["wilcoxon_p_value"] = wilcoxon_p(diffs)
    return out


def wilcoxon_p(diffs: np.ndarray) -> float | None:
    """Two-sided Wilcoxon signed-rank p-value of paired differences; null when all are 0."""
    if not np.any(np.abs(diffs) > 1e-12):
        return None
    return float(stats.wilcoxon(diffs, zero_method="wilcox").pvalue)


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


# ---- inputs and outputs ----------------------------------------------------------------


def load_cases(path: Path, rubric: Rubric) -> list[Case]:
    """Every case of a file, validated in full first (InputError names file and line)."""
    validate_file(path, rubric)
    return list(iter_cases(path))


def status_counts(records: Sequence[GradedRecord]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        counts[record.status] = counts.get(record.status, 0) + 1
    return counts


def write_outputs(result: ProbeResult, out: Path) -> list[Path]:
    """OUT.json (strict JSON), OUT.md beside it and, when the probe made records,
    OUT.records.jsonl (one graded record per input case, input order)."""
    import json

    out.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(to_strict_json(result.report), indent=2, ensure_ascii=False, allow_nan=False)
    out.write_text(data + "\n", "utf-8")
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


def parse_condition(text: str) -> tuple[str, str, float]:
    """`METRIC OP NUMBER` (e.g. `flip_rate > 0`) -> its parts; UsageError otherwise."""
    condition = gates.parse_condition(text)
    return condition.metric, condition.op, condition.threshold


def _lookup(report: dict[str, Any], path: str) -> Any:
    value: Any = report
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise UsageError(f"--fail-if: this probe's report has no metric {path!r}")
        value = value[part]
    return value


def run_gate(
    result: ProbeResult,
    *,
    conditions: Sequence[str] = (),
    biased: bool = False,
    tolerance: float = 0.05,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Evaluate `--fail-if` conditions (fail when one holds) and, with `biased`, every bias
    check at confidence 1 - alpha. Undefined metrics do not fail; they are listed."""
    checks: list[dict[str, Any]] = []
    for text in conditions:
        name, op, threshold = parse_condition(text)
        value = _lookup(result.report, name)
        if value is not None and not isinstance(value, int | float):
            raise UsageError(f"--fail-if: {name!r} is not a number")
        holds = value is not None and gates.OPS[op](float(value), threshold)
        status = "undefined" if value is None else "failed" if holds else "ok"
        checks.append({"condition": text, "value": value, "status": status})
    if biased:
        for check in result.checks:
            checks.append(check.evaluate(tolerance=tolerance, confidence=1 - alpha))
    failed = any(c["status"] in ("failed", "biased") for c in checks)
    return {"failed": failed, "checks": checks}


def gate_markdown(gate: dict[str, Any]) -> list[str]:
    if not gate["checks"]:
        return []
    lines = ["", f"## Gate: {'FAILED' if gate['failed'] else 'passed'}", ""]
    for check in gate["checks"]:
        if "condition" in check:
            lines.append(f"- `{check['condition']}`: {fmt(check['value'])} -> {check['status']}")
        else:
            lo, hi = check["interval"]
            span = "n/a" if check["status"] == "undefined" else f"{lo:.3f}..{hi:.3f}"
            lines.append(
                f"- {check['check']}: {fmt(check['estimate'])} (interval {span}, no bias = "
                f"{check['null']}, tolerance {check['tolerance']}) -> {check['status']}"
            )
    return lines
