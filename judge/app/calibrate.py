"""The calibrate job: a judge's labels against human labels, with a jury's figures when the
judge side is a panel's records, the gates asked for, the report folder and the HTML report.

The statistics are `calibration`'s (which never imports the engine); the jury part is
:mod:`judge.app.calibrate_jury`, the gates :mod:`judge.app.calibrate_gates`, the label
budget (`--plan`) :mod:`judge.app.calibrate_plan`, another tool's output as the judge side
:mod:`judge.app.calibrate_foreign`. Nothing here prints: bad input is a `UsageError`
(exit 2), a failed gate is said in the result (`gate_failed`: exit 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.errors import CalibrationInputError
from calibration.inference.intervals import DEFAULT_RESAMPLES, MAX_RESAMPLES
from calibration.io.labels import read_labels
from calibration.report.output import output_problem
from calibration.report.result import calibrate, write_report
from judge.app.calibrate_foreign import FROM_CHOICES, JudgeSide, foreign_judge_side
from judge.app.calibrate_gates import GATE_READY, check_gates, parse_calibrate_condition
from judge.app.calibrate_jury import jury_section
from judge.app.calibrate_plan import DEFAULT_KAPPA, PlanResult, plan_labels
from judge.engine.measure.pass_class import PassClass, among, pass_class_of
from judge.engine.outlock import hold
from judge.errors import UsageError
from judge.report.calibrate import write_calibration_report

if TYPE_CHECKING:
    from judge.app.requests import CalibrateRequest

__all__ = [
    "DEFAULT_KAPPA",
    "DEFAULT_RESAMPLES",
    "MAX_RESAMPLES",
    "FROM_CHOICES",
    "GATE_READY",
    "CalibrateResult",
    "JudgeSide",
    "PlanResult",
    "calibrate_labels",
    "foreign_judge_side",
    "hold_report_folder",
    "parse_calibrate_condition",
    "plan_labels",
]


@dataclass(frozen=True)
class CalibrateResult:
    """What `calibration.json` holds (`jury` and `gate` added when they apply), and every
    file written (the report folder's, then the HTML report)."""

    result: dict[str, Any]
    paths: list[Path]

    @property
    def gate_failed(self) -> bool:
        gate = self.result.get("gate")
        return bool(gate and gate["failed"])


def hold_report_folder(folder: Path) -> None:
    """One run per report folder, like every output (judge.engine.outlock)."""
    hold(folder, "-o")


def calibrate_labels(request: CalibrateRequest) -> CalibrateResult:
    """Calibrate, check the gates, write the report (and `request.html`)."""
    judge_labels, human_labels = request.judge_labels, request.human_labels
    if judge_labels is None or human_labels is None:
        raise UsageError("JUDGE_LABELS and HUMAN_LABELS are required (or use --plan)")
    problem = output_problem(request.output, folder=True)
    if problem is not None:
        raise UsageError(f"-o {problem}")
    try:
        result = _statistics(request, judge_labels, human_labels)
        jury = jury_section(
            judge_labels,
            human_labels,
            human_field=request.human_field,
            n_bootstrap=request.bootstrap,
            seed=request.seed,
        )
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None
    if jury is not None:
        result["jury"] = jury
    gate = check_gates(result, require_ready=request.require_ready, fail_if=request.fail_if)
    if gate is not None:
        result["gate"] = gate
    try:
        paths = write_report(result, request.output)
    except OSError as exc:  # permissions, a full disk: said in one line, nothing half-read
        raise UsageError(f"cannot write the report to {request.output}: {exc.strerror}") from None
    if request.html:
        paths.append(write_calibration_report(request.html, result, request.cases))
    return CalibrateResult(result, paths)


def _statistics(
    request: CalibrateRequest, judge_labels: Path, human_labels: Path
) -> dict[str, Any]:
    labels = [v.strip() for v in request.labels.split(",")] if request.labels else None
    found = _pass_class(request, judge_labels, human_labels)
    result = calibrate(
        judge_labels,
        human_labels,
        judge_field=request.judge_field,
        human_field=request.human_field,
        weights=request.weights,
        group_field=request.group_field,
        slice_field=request.slice_field,
        threshold=request.threshold,
        fit_threshold=request.fit_threshold,
        labels=labels,
        positive_label=found.label,
        n_bootstrap=request.bootstrap,
        seed=request.seed,
        test_fraction=request.split,
        cases=request.cases,
        explain=request.explain,
    )
    if result.get("binary"):  # which label the pass rates count, and why (printed)
        result["binary"]["positive_from"] = found.source
    return result


def _pass_class(request: CalibrateRequest, judge_labels: Path, human_labels: Path) -> PassClass:
    """`--positive-label`, else the records' rubric's pass label (judge.engine.measure.pass_class)
    when either side uses it, else calibration's file rule."""
    found = pass_class_of(judge_labels, request.positive_label)
    if found.label is None or found.source == "--positive-label":
        return found
    if request.judge_field == "label" and found.label in found.seen:
        return found  # the judge's records use it: no second read of the files
    sides = ((judge_labels, request.judge_field), (human_labels, request.human_field))
    values = [r.value for path, f in sides for r in read_labels(path, field=f).records]
    return among(found, values)
