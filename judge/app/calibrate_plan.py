"""``judge calibrate --plan``: the label budget, from given rates or from label files."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calibration.agreement.metrics import kappa_from_confusion
from calibration.decisions.plan import plan_sample_size, predicted_width
from calibration.errors import CalibrationInputError
from calibration.report.result import calibrate
from judge.errors import UsageError

if TYPE_CHECKING:
    from judge.app.requests import CalibrateRequest

__all__ = ["DEFAULT_KAPPA", "PlanResult", "plan_labels"]

DEFAULT_KAPPA = 0.6


@dataclass(frozen=True)
class PlanResult:
    """The plan (`describe`: its one paragraph) and, with label files, what they give now."""

    describe: str
    labelled: int | None = None  # the labelled pass/fail pairs the files hold
    width_now: float | None = None  # the interval width those give
    basis_note: str | None = None  # why the plan's kappa is not the one calibrate reports


def _observed(request: CalibrateRequest) -> dict[str, Any]:
    """Rates and kappa of the labelled pairs in the two files (no intervals computed)."""
    judge_labels, human_labels = request.judge_labels, request.human_labels
    assert judge_labels is not None and human_labels is not None  # plan_labels asks for both
    result = calibrate(
        judge_labels,
        human_labels,
        judge_field=request.judge_field,
        human_field=request.human_field,
        threshold=request.threshold,
        fit_threshold=request.fit_threshold,
        labels=[v.strip() for v in request.labels.split(",")] if request.labels else None,
        positive_label=request.positive_label,
        n_bootstrap=0,
    )
    binary = result.get("binary")
    if not binary:
        raise CalibrationInputError(
            "--plan needs two pass/fail classes; these files have "
            f"{result.get('labels')}: use --threshold or --judge-rate/--human-rate",
            path=request.human_labels,
        )
    c = binary["counts"]
    # Kappa of the pass/fail pairs the rates come from (abstentions aside).
    kappa = kappa_from_confusion([[c["tn"], c["fp"]], [c["fn"], c["tp"]]])
    return {
        "n": sum(c.values()),
        "kappa": kappa if math.isfinite(kappa) else None,
        "human_rate": binary["human_pass_rate"],
        "judge_rate": binary["judge_pass_rate"],
        "all_n": result.get("n"),
        "all_kappa": result.get("kappa"),
        "labels": result.get("labels"),
    }


def _plan_basis(seen: dict[str, Any]) -> str | None:
    """Say so when the plan's kappa is not the one `judge calibrate` prints: the plan counts
    pass/fail pairs only, leaving out cases either side marked abstained (or any third
    class)."""
    if seen["all_n"] == seen["n"] or seen["kappa"] is None:
        return None
    full = seen["all_kappa"]
    shown = "undefined" if full is None else f"{full:.3f}"
    return (
        f"The plan's kappa {seen['kappa']:.3f} is of the {seen['n']} pass/fail pairs; "
        f"`judge calibrate` reports kappa {shown} over all {seen['all_n']} matched cases "
        f"(labels {', '.join(map(str, seen['labels'] or []))}): "
        f"{seen['all_n'] - seen['n']} abstained or third-class cases are left out here."
    )


def _pick(flag: float | None, *fallbacks: float | None) -> float:
    for value in (flag, *fallbacks):
        if value is not None:
            return value
    raise AssertionError("the last fallback is never None")


def plan_labels(request: CalibrateRequest) -> PlanResult:
    """The plan for `request`; a UsageError (exit 2) for files or figures that cannot be used."""
    try:
        seen = _observed(request) if request.judge_labels and request.human_labels else {}
        human = _pick(request.human_rate, request.prevalence, seen.get("human_rate"), 0.5)
        judge = _pick(request.judge_rate, request.prevalence, seen.get("judge_rate"), human)
        kappa = _pick(request.kappa, seen.get("kappa"), DEFAULT_KAPPA)
        plan = plan_sample_size(kappa, request.width, human_rate=human, judge_rate=judge)
        if not seen:
            return PlanResult(plan.describe())
        now = predicted_width(seen["n"], kappa, human_rate=human, judge_rate=judge)
    except (CalibrationInputError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    return PlanResult(plan.describe(), seen["n"], now, _plan_basis(seen))
