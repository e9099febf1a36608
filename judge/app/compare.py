"""The compare job: systems graded with the same rubrics on the same cases, compared metric
by metric (each later run against the first). The runs are read by `judge.report.runs` (or
`judge.report.foreign_runs` for other tools' outputs), the statistics are
`calibration.compare.runs`'. Nothing here prints: bad input is a `UsageError` (exit 2), a
failed `--fail-if` is said in the result (`failed`: exit 3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calibration.decisions.gates import evaluate
from calibration.inference.intervals import DEFAULT_RESAMPLES
from calibration.io.jsonout import write_strict_json
from calibration.report.comparison import render_compare_markdown
from judge.engine.measure.run_gates import check_conditions
from judge.errors import UsageError
from judge.report.compare import compare_runs, gate_values
from judge.report.compare_report import write_compare_report
from judge.report.foreign_runs import read_any_run
from judge.report.runs import Run

if TYPE_CHECKING:
    from judge.app.requests import CompareRequest
    from judge.rubric import RubricLibrary

__all__ = ["DEFAULT_RESAMPLES", "CompareResult", "check_compare_request", "compare_systems"]

EXAMPLE = "faithfulness.score.diff < -0.05"


@dataclass(frozen=True)
class CompareResult:
    """The comparison (what `--json` holds), its Markdown, and each `--fail-if` check as
    `(B vs A, 'EXPR: value -> outcome')`."""

    result: dict[str, Any]
    markdown: str
    checks: list[tuple[str, str]]
    failed: bool


def check_compare_request(request: CompareRequest) -> None:
    """The checks no argparse type expresses; a UsageError before anything is read."""
    if len(request.runs) < 2:
        raise UsageError("compare needs two runs or more (RUN_A RUN_B ...)")
    if not 0.0 < request.alpha < 1.0:
        raise UsageError(f"--alpha must be between 0 and 1, got {request.alpha}")
    if request.resamples < 1:
        raise UsageError(f"--resamples must be at least 1, got {request.resamples}")


def compare_systems(request: CompareRequest, library: RubricLibrary) -> CompareResult:
    """Read the runs, compare them, check `--fail-if`, write `--json` and `--html`."""
    check_compare_request(request)
    runs = [read_any_run(path, library, request.from_tool) for path in request.runs]
    result = compare_runs(
        runs,
        alpha=request.alpha,
        n_resamples=request.resamples,
        seed=request.seed,
        only=request.metric,
    )
    if not result["tests"]:
        raise UsageError(
            "no metric both runs have"
            + (f" matches --metric {' '.join(request.metric)}" if request.metric else "")
            + (_valueless(runs) or "; compare runs graded with the same rubrics")
        )
    result["pass_rates"] = pass_rates(runs, request.positive_label)
    values = [gate_values(c) for c in result["comparisons"]]
    names = set().union(*values)  # known once the runs are read (nothing is sent: no cost)
    conditions = check_conditions(request.fail_if, names, what="this comparison", example=EXAMPLE)
    if request.json:
        write_strict_json(request.json, result)
    if request.html:
        write_compare_report(request.html, result, runs)
    checks, failed = [], False
    for comparison, figures in zip(result["comparisons"], values, strict=True):
        for check in evaluate(conditions, figures):
            where = f"{comparison['b']} vs {comparison['a']}"
            checks.append(
                (where, f"{check.condition.text}: {check.value_text('g')} -> {check.outcome()}")
            )
            failed = failed or check.fails
    markdown = render_compare_markdown(result) + _pass_markdown(result["pass_rates"])
    return CompareResult(result, markdown, checks, failed)


def pass_rates(runs: list[Run], positive: str | None = None) -> list[dict[str, Any]]:
    """Per rubric of two classes: the label counted as a pass (`--positive-label`, else the
    rubric's, `Kind.pass_label`) and each run's share of its ok records with it."""
    out = []
    for rubric_id in sorted(set().union(*(run.rubrics for run in runs))):
        sides = [run.rubrics.get(rubric_id) for run in runs]
        found = next((s.pass_label for s in sides if s is not None and s.pass_label), None)
        label = positive or found
        if label is None:
            continue
        source = "--positive-label" if positive else f"rubric {rubric_id}: the label it scores 1.0"
        rates = [
            None if s is None or not s.labels else s.labels.get(label, 0) / sum(s.labels.values())
            for s in sides
        ]
        out.append({"rubric": rubric_id, "label": label, "from": source,
                    "runs": [run.name for run in runs], "rates": rates})  # fmt: skip
    return out


def _pass_markdown(rows: list[dict[str, Any]]) -> str:
    """One line a rubric: which label counts as a pass, and each run's pass rate."""
    if not rows:
        return ""
    lines = ["", "Pass rates (ok records):"]
    for row in rows:
        rates = ", ".join(
            f"{name} {'-' if rate is None else f'{rate:.1%}'}"
            for name, rate in zip(row["runs"], row["rates"], strict=True)
        )
        lines.append(f"- {row['rubric']}: pass = {row['label']!r} ({row['from']}): {rates}")
    return "\n".join(lines) + "\n"


def _valueless(runs: list[Run]) -> str:
    """Where the runs share a rubric but a run holds no value of it (no verdict parsed):
    what each holds, so that "graded with the same rubrics" is not the advice."""
    shared = set.intersection(*(set(run.rubrics) for run in runs))
    empty = [
        f"{run.name} has {len(run.rubrics[r].ids)} {r} records and no value"
        for run in runs
        for r in sorted(shared)
        if not any(run.rubrics[r].values.values())
    ]
    return f": {'; '.join(empty)} (no verdict parsed)" if shared and empty else ""
