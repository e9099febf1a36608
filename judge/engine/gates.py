"""Gates on a finished run: `--fail-if "METRIC OP NUMBER"` and the limit on failed cases.

A gate expression is checked (syntax and metric name) before the first request, so a typo
costs nothing; the message lists the names that command accepts. The grade metrics are the
summary's numbers (DESIGN.md "Summary"), flattened with dots (`win_rates.A`,
`status.api_error`), plus `failed` (api_error + parse_error) and `error_rate`
(failed / cases). The probe side uses the same parser with its own names
(`judge.probes._common.probe_metric_names`).
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from judge.engine.records import scan_records
from judge.engine.summary import summarise
from judge.errors import UsageError
from judge.rubric import Rubric
from judge.schemas import Status

_EXPR = re.compile(
    r"^\s*([A-Za-z_][\w.]*)\s*(<=|>=|==|!=|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)
OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
FAILED_STATUSES = ("api_error", "parse_error")
MAX_CAUSES = 1000  # distinct error texts counted; beyond it, memory would grow with N
MAX_LISTED = 40


@dataclass(frozen=True)
class Condition:
    """`METRIC OP NUMBER`: the gate fails when it holds."""

    text: str
    metric: str
    op: str
    threshold: float

    def holds(self, value: float) -> bool:
        return OPS[self.op](value, self.threshold)


def parse_condition(text: str, *, flag: str = "--fail-if") -> Condition:
    """Parse `METRIC OP NUMBER` (e.g. `error_rate > 0.01`); UsageError otherwise."""
    match = _EXPR.match(text)
    if not match:
        raise UsageError(
            f"{flag} {text!r}: expected METRIC OP NUMBER with OP one of "
            f"{' '.join(OPS)}, e.g. 'mean_score < 0.8'"
        )
    return Condition(text.strip(), match[1], match[2], float(match[3]))


def check_conditions(
    texts: Iterable[str], valid: Collection[str], *, what: str, flag: str = "--fail-if"
) -> list[Condition]:
    """Parse every expression and check its metric is one of `valid` (named `what` in the
    message, which lists them). Call before anything is sent."""
    conditions = [parse_condition(text, flag=flag) for text in texts]
    for condition in conditions:
        if condition.metric not in valid:
            names = sorted(valid)
            listed = ", ".join(names[:MAX_LISTED]) + (" ..." if len(names) > MAX_LISTED else "")
            raise UsageError(
                f"{flag} {condition.text!r}: {what} has no metric {condition.metric!r}; "
                f"valid names: {listed}"
            )
    return conditions


def evaluate(conditions: Sequence[Condition], values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each condition with its value and status: `failed` (it holds), `ok`, or `undefined`
    (no value, e.g. a mean over zero scored cases)."""
    out = []
    for condition in conditions:
        value = values.get(condition.metric)
        if not isinstance(value, int | float) or isinstance(value, bool):
            status = "undefined"
        else:
            status = "failed" if condition.holds(float(value)) else "ok"
        out.append({"condition": condition.text, "value": value, "status": status})
    return out


# ---- grade ----------------------------------------------------------------------------


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Numbers (and nulls) of a nested dict under dotted names."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out |= flatten(value, f"{name}.")
        elif value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
            out[name] = value
    return out


def grade_metrics(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The summary's numbers a grade gate can use (slices and model names left out)."""
    top = {k: v for k, v in summary.items() if k not in ("by_slice", "judge_models", "status")}
    values = flatten(top)
    statuses = summary.get("status", {})
    for status in get_args(Status):
        values[f"status.{status}"] = statuses.get(status, 0)
    failed = sum(statuses.get(s, 0) for s in FAILED_STATUSES)
    values["failed"] = failed
    values["error_rate"] = failed / summary["cases"] if summary.get("cases") else None
    return values


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
    out: list[Condition] = []
    for text in texts:
        condition = parse_condition(text, flag=flag)
        head, _, rest = condition.metric.partition(".")
        if head in names and rest in names[head]:
            out.append(condition)
            continue
        owners = [prefix for prefix, valid in names.items() if condition.metric in valid]
        if not owners:
            every = {f"{prefix}.{name}" for prefix, valid in names.items() for name in valid}
            check_conditions([text], every, what="this pass", flag=flag)
        out.extend(
            Condition(
                f"{p}.{condition.text}",
                f"{p}.{condition.metric}",
                condition.op,
                condition.threshold,
            )
            for p in owners
        )
    return out


def pass_metrics(
    summaries: Mapping[str, Mapping[str, Any]], diagnosis: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The numbers a pass's gates read: `RUBRIC_ID.NAME` for each rubric's grade metrics
    (`summaries` by rubric id) and `diagnosis.NAME` for the two-by-two's counts and rates
    (`diagnosis.cells.healthy.rate`, `diagnosis.unclassified`)."""
    values = {
        f"{rubric_id}.{name}": value
        for rubric_id, summary in summaries.items()
        for name, value in grade_metrics(summary).items()
    }
    if diagnosis is not None:
        top = {k: v for k, v in diagnosis.items() if k != "by_slice"}
        values |= flatten(top, "diagnosis.")
    return values


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
    probe's rates already leave failed verdicts out; with none left there is no result)."""
    statuses = report.get("status")
    if isinstance(statuses, Mapping) and statuses:
        total = sum(statuses.values())
        failed = {s: statuses[s] for s in FAILED_STATUSES if statuses.get(s)}
        if total and sum(failed.values()) == total:
            parts = ", ".join(f"{s} {n}" for s, n in failed.items())
            return f"every one of its {total} verdicts failed ({parts})"
    pairs = report.get("pairs")
    if isinstance(pairs, int) and pairs and report.get("complete_pairs") == 0:
        return f"none of its {pairs} pairs has both verdicts"
    return None


def commonest_failure(records: Iterable[Mapping[str, Any]]) -> tuple[str, int] | None:
    """The error text most failed records share, and how many share it."""
    causes: Counter[str] = Counter()
    for record in records:
        if record.get("status") not in FAILED_STATUSES:
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
