"""Gates on a finished run: `--fail-if "METRIC OP NUMBER"` and the limit on failed cases.

A gate expression is checked (syntax and metric name) before the first request, so a typo
costs nothing; the message lists the names that command accepts. The grade metrics are the
summary's numbers (DESIGN.md "Summary"), flattened with dots (`win_rates.A`,
`status.api_error`), plus `failed` (api_error + parse_error) and `error_rate`
(failed / cases). The parser and evaluator are `calibration.decisions.gates`, shared by every
command; the probe side has its own names (`judge.probes.probe_metric_names`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any, get_args

from calibration.decisions.gates import Condition, GateError, flatten_numbers, parse_conditions
from judge.engine.records import scan_records
from judge.engine.summary import summarise
from judge.errors import UsageError
from judge.rubric import Rubric
from judge.schemas import Status

FAILED_STATUSES = ("api_error", "parse_error")
MAX_CAUSES = 1000  # distinct error texts counted; beyond it, memory would grow with N


def check_conditions(
    texts: Iterable[str],
    valid: Collection[str],
    *,
    what: str,
    flag: str = "--fail-if",
    example: str = "mean_score < 0.8",
) -> list[Condition]:
    """Parse every expression (`calibration.decisions.gates`, the one parser) and check its metric is
    one of `valid` (named `what` in the message, which lists them); UsageError naming
    `flag` otherwise. Call before anything is sent."""
    try:
        return parse_conditions(texts, valid, what=what, example=example)
    except GateError as exc:
        raise UsageError(f"{flag} {exc}") from None


# ---- grade ----------------------------------------------------------------------------


def grade_metrics(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The summary's numbers a grade gate can use (slices and model names left out)."""
    top = {k: v for k, v in summary.items() if k not in ("by_slice", "judge_models", "status")}
    values = flatten_numbers(top)
    statuses = summary.get("status", {})
    for status in get_args(Status):
        values[f"status.{status}"] = statuses.get(status, 0)
    failed = sum(statuses.get(s, 0) for s in FAILED_STATUSES)
    values["failed"] = failed
    values["error_rate"] = failed / summary["cases"] if summary.get("cases") else None
    return values


def grade_undefined_reasons(summary: Mapping[str, Any]) -> dict[str, str]:
    """Why a grade metric is undefined (a gate on it then fails, saying so): a figure
    over scored cases when no case was scored, the error rate of no cases."""
    none_scored = "no case of this run was scored for it (every case failed or abstained)"
    reasons = {name: none_scored for name, v in grade_metrics(summary).items() if v is None}
    if not summary.get("cases"):
        reasons["error_rate"] = "no cases"
    return reasons


def grade_metric_names(rubric: Rubric) -> set[str]:
    """What `judge grade --fail-if` accepts for a rubric: the names of an empty summary of
    it (its kind's figures included), so they follow the summary as it grows."""
    return set(grade_metrics(summarise([], rubric)))


def pass_conditions(
    texts: Iterable[str], names: Mapping[str, Collection[str]], *, flag: str = "--fail-if"
) -> list[Condition]:
    """`--fail-if` of a pass of several rubrics. `names` maps each prefix (a rubric id, and
    `diagnosis` for the two-by-two) to the names valid under it. `faithfulness.mean_score <
    0.8` gates that rubric; a name with no prefix (`error_rate > 0.05`) gates every rubric
    that has it, one condition each. UsageError, listing the names, for an unknown one."""
    prefixed = {f"{prefix}.{name}" for prefix, valid in names.items() for name in valid}
    bare = set().union(*names.values()) if names else set()
    out: list[Condition] = []
    for condition in check_conditions(texts, prefixed | bare, what="this pass", flag=flag):
        if condition.metric in prefixed:
            out.append(condition)
            continue
        out.extend(
            Condition(
                f"{p}.{condition.metric}",
                condition.op,
                condition.threshold,
                f"{p}.{condition.text}",
            )  # fmt: skip
            for p, valid in names.items()
            if condition.metric in valid
        )
    return out


def pass_metrics(
    summaries: Mapping[str, Mapping[str, Any]], diagnosis: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The numbers a pass's gates read, and why any is undefined: `RUBRIC_ID.NAME` for each
    rubric's grade metrics (`summaries` by rubric id) and `diagnosis.NAME` for the
    two-by-two's counts and rates (`diagnosis.cells.healthy.rate`, `diagnosis.unclassified`)."""
    values: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    for rubric_id, summary in summaries.items():
        values |= {f"{rubric_id}.{k}": v for k, v in grade_metrics(summary).items()}
        reasons |= {f"{rubric_id}.{k}": v for k, v in grade_undefined_reasons(summary).items()}
    if diagnosis is not None:
        top = {k: v for k, v in diagnosis.items() if k != "by_slice"}
        values |= flatten_numbers(top, "diagnosis.")
        if not diagnosis.get("classified"):
            none = "no case has both a retrieval and a generation score"
            reasons |= {
                k: none for k, v in values.items() if k.startswith("diagnosis.") and v is None
            }
    return values, reasons


def run_failure(summary: Mapping[str, Any], max_error_rate: float) -> str | None:
    """Why the run counts as failed (DESIGN.md "Exit codes"), or None: every case failed,
    or more than `max_error_rate` of them did (api_error + parse_error)."""
    cases = summary.get("cases") or 0
    statuses = summary.get("status", {})
    failed = sum(statuses.get(s, 0) for s in FAILED_STATUSES)
    if not cases or not failed or (failed < cases and failed / cases <= max_error_rate):
        return None
    parts = ", ".join(f"{s} {statuses[s]}" for s in FAILED_STATUSES if statuses.get(s))
    limit = "" if failed == cases else f", over --max-error-rate {max_error_rate:g}"
    return f"{failed} of {cases} cases failed ({parts}{limit})"


def probe_failure(report: Mapping[str, Any]) -> str | None:
    """Why a probe run counts as failed, or None: every verdict it asked for failed (a
    probe's rates already leave failed verdicts out; with none left there is no result),
    or what its figures rest on came to nothing (the report's `unmeasured`: e.g. 0
    graded pairs of versions, where only the padded answers' replies were cut off)."""
    statuses = report.get("status")
    if isinstance(statuses, Mapping) and statuses:
        total = sum(statuses.values())
        failed = {s: statuses[s] for s in FAILED_STATUSES if statuses.get(s)}
        if total and sum(failed.values()) == total:
            parts = ", ".join(f"{s} {n}" for s, n in failed.items())
            return f"every one of its {total} verdicts failed ({parts})"
    if report.get("unmeasured"):  # the probe's own count of what its figures rest on
        return f"nothing could be measured: {report['unmeasured']}"
    pairs = report.get("pairs")
    if isinstance(pairs, int) and pairs and report.get("complete_pairs") == 0:
        return f"none of its {pairs} pairs has both verdicts"
    return None


def commonest_failure(
    records: Iterable[Mapping[str, Any]], statuses: tuple[str, ...] = FAILED_STATUSES
) -> tuple[str, int] | None:
    """The error text most failed records (or those of `statuses`) share, and how many."""
    causes: Counter[str] = Counter()
    for record in records:
        if record.get("status") not in statuses:
            continue
        cause = " ".join(str(record.get("error") or "no error text").split())[:200]
        if cause in causes or len(causes) < MAX_CAUSES:
            causes[cause] += 1
    return causes.most_common(1)[0] if causes else None


def failure_line(summary: Mapping[str, Any], records: Path, max_error_rate: float) -> str | None:
    """One line saying why the run failed, naming the commonest cause; None if it did not."""
    failure = run_failure(summary, max_error_rate)
    if failure is None:
        return None
    common = commonest_failure(data for _, data in scan_records(records))
    cause = f"; commonest cause ({common[1]} cases): {common[0]}" if common else ""
    return f"the run failed: {failure}{cause}; the records are kept in {records}"


def abstained_line(summary: Mapping[str, Any], records: Path) -> str | None:
    """One line when every case of the run abstained (nothing was scored: a run that says
    "graded N" would mislead), naming the commonest reason; None otherwise."""
    cases = summary.get("cases") or 0
    if not cases or (summary.get("status") or {}).get("abstained", 0) != cases:
        return None
    common = commonest_failure((data for _, data in scan_records(records)), ("abstained",))
    why = f" ({common[1]} of them: {common[0]})" if common else ""
    return (
        f"every one of the {cases} cases abstained{why}: nothing was scored "
        '(--fail-if "scored == 0" makes that a failed gate)'
    )
