"""A graded dataset, its figures with their intervals, and gates on them: what the pytest
plugin (`judge.pytest_plugin`) asserts on, usable from any script too.

Figures are named `RUBRIC_ID.NAME`: every number of the rubric's summary (as `judge grade
--fail-if` reads them: `faithfulness.mean_score`, `faithfulness.status.parse_error`,
`faithfulness.error_rate`), and two estimates with 95% intervals over the scored cases:

- `RUBRIC_ID.pass_rate.{estimate,ci95_low,ci95_high,n,passed}`: the share of scored cases
  with the rubric's pass label (the higher-scored of two labels: `faithful`), Wilson
  interval (`calibration.inference.intervals.wilson_interval`);
- `RUBRIC_ID.mean_score.{estimate,ci95_low,ci95_high,n}`: the mean 0..1 score, the
  bounded-scale Wilson interval (`calibration.agreement.small_sample.bounded_mean_interval`:
  the largest variance a 0..1 score allows at that mean). A normal interval covered
  0.86-0.93 at 10-30 conversations whose scores pile up at 1; this one 0.99-1.00
  (`benchmarks/cluster_intervals.md`). Each scored record (a conversation, for the
  conversation kinds) is one value, taken as independent of the others.

Gate on the interval, not on one verdict or one point: `pass_rate.ci95_low >= 0.8` holds
only when the data show the rate is at least 0.8, however the judge's noise falls. An
undefined figure fails its gate (`calibration.decisions.gates`, the evaluator every command uses).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from calibration.decisions.gates import Check, GateError, evaluate, parse_condition
from judge.api import open_graders, run_sync
from judge.config import JudgeConfig
from judge.engine.inputs import iter_cases, validate_file
from judge.engine.measure.estimates import rubric_scale
from judge.engine.measure.run_gates import grade_metrics, grade_undefined_reasons
from judge.engine.summary import summarise
from judge.rubric import Rubric, RubricLibrary, load_rubric
from judge.schemas import GradedRecord

WORST_SHOWN = 5


@dataclass
class GradedSet:
    """One rubric's records over a dataset, with its summary."""

    rubric: Rubric
    records: list[GradedRecord]
    summary: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.summary:
            self.summary = summarise(self.records, self.rubric)


@dataclass
class DatasetResult:
    """A dataset graded with one rubric or several: `sets` by rubric id, the `source` it
    came from, and how many requests grading it sent (0 when every verdict was cached)."""

    source: str
    sets: dict[str, GradedSet]
    requests: int = 0

    def figures(self) -> dict[str, float | None]:
        """Every figure a gate can name (module docstring), flat."""
        out: dict[str, float | None] = {}
        for rubric_id, graded in self.sets.items():
            out |= {f"{rubric_id}.{k}": v for k, v in set_figures(graded).items()}
        return out

    def reasons(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for rubric_id, graded in self.sets.items():
            reasons = grade_undefined_reasons(graded.summary)
            out |= {f"{rubric_id}.{k}": v for k, v in reasons.items()}
        return out

    def worst(self, rubric_id: str, n: int = WORST_SHOWN) -> list[GradedRecord]:
        """The `n` lowest-scored cases (failed ones first): where to look first."""
        records = self.sets[rubric_id].records
        return sorted(records, key=lambda r: (r.status == "ok", r.score or 0.0, r.id))[:n]


def set_figures(graded: GradedSet) -> dict[str, float | None]:
    """One rubric's figures (module docstring), without the rubric id."""
    out: dict[str, float | None] = dict(grade_metrics(graded.summary))
    scored = [r for r in graded.records if r.status == "ok" and r.score is not None]
    _, positive, _ = rubric_scale(graded.rubric)
    if positive is not None:
        passed = sum(r.label == positive for r in scored)
        out |= _prefixed("pass_rate", proportion_figures(passed, len(scored)))
    out |= _prefixed("mean_score", mean_figures([float(r.score or 0.0) for r in scored]))
    return out


def _prefixed(name: str, figures: dict[str, float | None]) -> dict[str, float | None]:
    return {f"{name}.{k}": v for k, v in figures.items()}


def proportion_figures(passed: int, n: int) -> dict[str, float | None]:
    """`passed / n` with its 95% Wilson interval; None when n is 0.

    >>> proportion_figures(8, 10)["ci95_low"] < 0.8 < proportion_figures(80, 100)["ci95_high"]
    True
    """
    # scipy: only when figures are asked for
    from calibration.inference.intervals import wilson_interval

    if n == 0:
        return {"estimate": None, "ci95_low": None, "ci95_high": None, "n": 0, "passed": 0}
    low, high = wilson_interval(passed, n)
    return {"estimate": passed / n, "ci95_low": low, "ci95_high": high, "n": n, "passed": passed}


def mean_figures(scores: Sequence[float]) -> dict[str, float | None]:
    """The mean 0..1 score with its 95% bounded-scale Wilson interval (module docstring);
    None when no case was scored. It does not collapse when the scores do not vary
    (ten scores of 1: ``[0.72, 1]``).

    >>> mean_figures([0.0, 1.0, 1.0, 1.0])["estimate"]
    0.75
    """
    from calibration.agreement.small_sample import bounded_mean_interval

    n = len(scores)
    if n == 0:
        return {"estimate": None, "ci95_low": None, "ci95_high": None, "n": 0}
    mean = math.fsum(scores) / n
    low, high = bounded_mean_interval(mean, n, 0.0, 1.0)
    return {"estimate": mean, "ci95_low": low, "ci95_high": high, "n": n}


def grade_dataset_file(
    config: JudgeConfig,
    path: Path,
    rubrics: Sequence[str] = ("faithfulness",),
    rubrics_dirs: Sequence[Path] = (),
) -> DatasetResult:
    """Grade every case of a JSONL/CSV/Parquet file with each rubric (checked in full
    first, as `judge grade` does); through the verdict cache when the config has one."""
    return run_sync(lambda: _grade(config, path, rubrics, rubrics_dirs))


async def _grade(
    config: JudgeConfig, path: Path, refs: Sequence[str], dirs: Sequence[Path]
) -> DatasetResult:
    library = RubricLibrary(list(dirs))
    rubrics = [load_rubric(ref, library) for ref in refs]
    validate_file(path, rubrics)
    sets: dict[str, GradedSet] = {}
    async with open_graders(config, rubrics) as graders:
        for grader in graders:
            records = await grader.grade_many(iter_cases(path), use_cache=config.use_cache)
            sets[grader.rubric.id] = GradedSet(grader.rubric, records)
    fresh = (
        0
        if config.offline
        else sum(
            not r.cached
            for s in sets.values()
            for r in s.records
            if r.judge.model not in ("rules", "computed")
        )
    )
    return DatasetResult(str(path), sets, requests=fresh)


class GateFailed(AssertionError):
    """A dataset gate that does not hold; the message says the figure, its interval and
    the worst cases with their evidence."""

    def __init__(self, message: str, check: Check) -> None:
        super().__init__(message)
        self.check = check


def assert_gate(result: DatasetResult, expression: str, *, worst: int = WORST_SHOWN) -> Check:
    """Assert that `expression` (`METRIC OP NUMBER`, e.g.
    `faithfulness.pass_rate.ci95_low >= 0.8`) holds on the dataset's figures; its check when
    it does. Raises `GateFailed` (an AssertionError) listing the `worst` cases with their
    evidence when it does not, or when the figure is undefined; `ValueError` naming the valid
    figures for a typo.

    The expression says what must hold (pytest's sense), the opposite of `--fail-if`.

    >>> from judge import Judge
    >>> judge = Judge()
    >>> rubric = judge.rubric("faithfulness")
    >>> records = judge.grade_many([{"id": str(i), "question": "q?", "contexts": ["c"],
    ...                              "answer": "c."} for i in range(20)])
    >>> result = DatasetResult("inline", {"faithfulness": GradedSet(rubric, records)})
    >>> assert_gate(result, "faithfulness.pass_rate.ci95_low >= 0.8").status
    'ok'
    """
    __tracebackhide__ = True  # pytest shows the message, not this function
    figures = result.figures()
    try:
        condition = parse_condition(expression, figures.keys(), what="this dataset")
    except GateError as exc:
        raise ValueError(str(exc)) from None
    # evaluate() fails a run when its condition holds: check the expression's negation
    negated = type(condition)(
        condition.metric, _NEGATION[condition.op], condition.threshold, expression
    )
    check = evaluate([negated], figures, reasons=result.reasons())[0]
    if check.fails:
        raise GateFailed(failure_message(result, expression, check, worst), check)
    return check


_NEGATION = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def failure_message(result: DatasetResult, expression: str, check: Check, worst: int) -> str:
    """The gate, the figure with its interval, and the worst cases with their evidence."""
    metric = check.condition.metric
    rubric_id = metric.split(".", 1)[0]
    figures = result.figures()
    value = "undefined" if check.value is None else f"{check.value:.4g}"
    lines = [f"gate {expression!r} does not hold on {result.source}: {metric} = {value}"]
    if check.status == "undefined":
        lines[0] += f" ({check.reason})"
    base = metric.rsplit(".", 1)[0]
    if f"{base}.estimate" in figures:
        est, low, high = (figures.get(f"{base}.{k}") for k in ("estimate", "ci95_low", "ci95_high"))
        n = figures.get(f"{base}.n")
        lines.append(
            f"  {base} = {_num(est)} [95% {_num(low)}, {_num(high)}] over {n} scored cases"
        )
    if rubric_id in result.sets:
        lines.append(f"  worst cases ({rubric_id}):")
        lines += [f"    {line}" for r in result.worst(rubric_id, worst) for line in evidence(r)]
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3g}"


def evidence(record: GradedRecord) -> list[str]:
    """A record in a few lines: id, status, score and label, then what the verdict says
    against it (an unsupported claim and its evidence, a criterion's reason, an error)."""
    head = f"{record.id}: {record.status}, score {_num(record.score)}, label {record.label}"
    if record.status != "ok":
        return [head, f"  error: {_short(record.error or record.raw or '')}"]
    return [head, *(f"  {line}" for line in _verdict_lines(record.verdict or {}))]


def _verdict_lines(verdict: dict[str, Any]) -> Iterable[str]:
    claims = verdict.get("claims")
    if isinstance(claims, list):
        bad = [c for c in claims if isinstance(c, dict) and c.get("verdict") != "supported"]
        for claim in bad[:3]:
            yield f"{claim.get('verdict')}: {_short(str(claim.get('claim')))}"
            yield f"  evidence: {_short(str(claim.get('evidence') or '-'))}"
        return
    for key in ("reason", "explanation", "rationale", "evidence"):
        if verdict.get(key):
            yield f"{key}: {_short(str(verdict[key]))}"
            return
    yield _short(str(verdict))


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
