"""``judge gate``: a candidate judge against the baseline on a human-labelled anchor set.

Exit 3 when the candidate is significantly worse (the paired interval of the kappa
difference lies wholly below 0, or McNemar's exact p is under ``--alpha`` with the
candidate right less often), drops more than ``--max-drop`` in kappa, has a kappa whose
interval's lower bound is under ``--min-kappa``, or meets a ``--fail-if`` condition;
2 for bad input or usage; 0 otherwise. Argument parsing and printing only: the
statistics are in :mod:`calibration.compare.judges`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.compare.anchor_inputs import GateInputs, read_gate_inputs
from calibration.compare.judges import compare_judges
from calibration.decisions.evidence import shortfall
from calibration.decisions.gates import Condition, GateError, evaluate, parse_condition
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
from judge.cli._calibrate_gates import EXIT_GATE
from judge.cli._flag_types import kappa_value, non_negative_int, rate

if TYPE_CHECKING:
    from judge.cli._requests import GateRequest

__all__ = ["add_arguments", "run"]


def _condition(text: str) -> Condition:
    try:
        return parse_condition(text, GATE_METRIC_NAMES)
    except GateError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _drop(text: str) -> float:
    value = kappa_value(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value:g} is negative: a drop is 0 or more")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``gate`` arguments to ``parser``."""
    files = parser.add_argument_group("files (JSONL or CSV with id and label)")
    files.add_argument("--baseline", type=Path, required=True, metavar="OLD",
                       help="the judge in use: graded records or labels")  # fmt: skip
    files.add_argument("--candidate", type=Path, required=True, metavar="NEW",
                       help="the judge to adopt, graded on the same cases")  # fmt: skip
    files.add_argument("--labels", type=Path, required=True, metavar="HUMAN",
                       help="human labels of the anchor cases")  # fmt: skip
    gates = parser.add_argument_group("gates (exit 3 when one fails)")
    gates.add_argument("--min-kappa", type=kappa_value, metavar="K",
                       help="fail when the candidate's kappa interval goes below K")  # fmt: skip
    gates.add_argument("--max-drop", type=_drop, metavar="D",
                       help="fail when kappa drops by more than D from the baseline")  # fmt: skip
    gates.add_argument("--alpha", type=rate, default=0.05, metavar="A",
                       help="McNemar significance level (default: 0.05)")  # fmt: skip
    gates.add_argument("--fail-if", type=_condition, action="append", default=[],
                       metavar="EXPR", help="fail when 'METRIC OP NUMBER' holds, e.g. "
                       "'flip_rate > 0.2' (repeatable)")  # fmt: skip
    out = parser.add_argument_group("output")
    out.add_argument("--json", type=Path, metavar="FILE", help="write the comparison as JSON")
    out.add_argument("--markdown", type=Path, metavar="FILE", help="write it as Markdown")
    out.add_argument("--seed", type=non_negative_int, default=0, help="bootstrap seed (0)")
    out.add_argument("--bootstrap", type=non_negative_int, default=DEFAULT_RESAMPLES, metavar="N",
                     help="bootstrap resamples (default: 2000; 0: McNemar alone)")  # fmt: skip


def _conditions(request: GateRequest) -> list[Condition]:
    conditions = list(request.fail_if)
    if request.max_drop is not None:
        conditions.append(_condition(f"kappa_drop > {request.max_drop!r}"))
    if request.min_kappa is not None:
        name = "candidate_kappa_ci95_low" if request.bootstrap else "candidate_kappa"
        conditions.append(_condition(f"{name} < {request.min_kappa!r}"))
    return conditions


def _evidence(inputs: GateInputs, result: dict[str, Any], bar: float) -> str | None:
    """Why the anchor labels are too few to back ``--min-kappa`` (the label plan per class,
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


def run(request: GateRequest) -> int:
    """Compare, print, write; 0 passed, 2 bad input (``error: ...``), 3 the gate failed."""
    try:
        inputs = read_gate_inputs(request.baseline, request.candidate, request.labels)
    except CalibrationInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
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
    print("\n".join(terminal_lines(result)))
    return EXIT_GATE if result["gate"]["failed"] else 0
