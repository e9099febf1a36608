"""The gate job: a candidate judge against the baseline on a human-labelled anchor set.

The gate fails (exit 3) when the candidate is significantly worse (the paired interval of
the kappa difference lies wholly below 0, or McNemar's exact p is under ``alpha`` with the
candidate right less often), drops more than ``max_drop`` in kappa, has a kappa whose
interval's lower bound is under ``min_kappa`` (or too few labels to back that bar), or
meets a ``fail_if`` condition. The statistics are :mod:`calibration.compare.judges`'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calibration.compare.anchor_inputs import GateInputs, read_gate_inputs
from calibration.compare.judges import compare_judges
from calibration.decisions.evidence import shortfall
from calibration.decisions.gates import Condition, evaluate, parse_condition
from calibration.errors import CalibrationInputError
from calibration.inference.intervals import DEFAULT_RESAMPLES
from calibration.io.jsonout import to_strict_json, write_strict_json
from calibration.report.gate import (
    GATE_METRIC_NAMES,
    gate_figures,
    gate_undefined_reasons,
    render_gate_markdown,
    terminal_lines,
)
from judge.errors import UsageError

if TYPE_CHECKING:
    from judge.app.requests import GateRequest

__all__ = ["DEFAULT_RESAMPLES", "GateResult", "gate_judges", "parse_gate_condition"]


@dataclass(frozen=True)
class GateResult:
    """The comparison as strict JSON (what `--json` holds, `gate` included) and the lines
    that say it on a terminal."""

    result: dict[str, Any]
    lines: list[str]

    @property
    def failed(self) -> bool:
        return bool(self.result["gate"]["failed"])


def parse_gate_condition(text: str) -> Condition:
    """`--fail-if EXPR` of the gate; a ValueError naming the valid names otherwise."""
    return parse_condition(text, GATE_METRIC_NAMES)


def gate_judges(request: GateRequest) -> GateResult:
    """Compare, gate and write `request.json` and `request.markdown`; a UsageError for
    files that cannot be read or joined."""
    try:
        inputs = read_gate_inputs(request.baseline, request.candidate, request.labels)
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None
    result = compare_judges(
        inputs.ids,
        inputs.human,
        inputs.baseline,
        inputs.candidate,
        labels=inputs.labels,
        n_bootstrap=request.bootstrap,
        seed=request.seed,
        alpha=request.alpha,
    )
    result["files"] = inputs.files
    result["left_out"] = inputs.left_out
    result["gate"] = _gate(result, request, inputs)
    result = to_strict_json(result)
    _write(result, request)
    return GateResult(result, terminal_lines(result))


def _conditions(request: GateRequest) -> list[Condition]:
    conditions = list(request.fail_if)
    if request.max_drop is not None:
        conditions.append(parse_gate_condition(f"kappa_drop > {request.max_drop!r}"))
    if request.min_kappa is not None:
        name = "candidate_kappa_ci95_low" if request.bootstrap else "candidate_kappa"
        conditions.append(parse_gate_condition(f"{name} < {request.min_kappa!r}"))
    return conditions


def _evidence(inputs: GateInputs, result: dict[str, Any], bar: float) -> str | None:
    """Why the anchor labels are too few to back ``min_kappa`` (the label plan per class,
    :mod:`calibration.decisions.evidence`), or ``None`` when they are enough."""
    kappa = result["candidate"]["kappa"]
    return shortfall(inputs.human, inputs.candidate, inputs.labels, kappa, bar)


def _gate(result: dict[str, Any], request: GateRequest, inputs: GateInputs) -> dict[str, Any]:
    worse = result["verdict"] == "worse"
    checks = [f"candidate significantly worse -> {'failed' if worse else 'ok'}"]
    reasons = gate_undefined_reasons(result)
    evaluated = evaluate(_conditions(request), gate_figures(result), reasons=reasons)
    checks += [check.describe() for check in evaluated]
    bar = request.min_kappa
    short = None if bar is None else _evidence(inputs, result, bar)
    if short is not None:
        checks.append(f"enough labels for --min-kappa {bar:g}: {short} -> failed")
    failed = worse or any(c.fails for c in evaluated) or short is not None
    return {"failed": failed, "checks": checks}


def _write(result: dict[str, Any], request: GateRequest) -> None:
    if request.json:
        write_strict_json(request.json, result)
    if request.markdown:
        request.markdown.parent.mkdir(parents=True, exist_ok=True)
        request.markdown.write_text(render_gate_markdown(result), encoding="utf-8")
