"""What a grading run checks before its first request, and how a run ends (its exit code).

Before: option ranges, every `--fail-if` expression, every output path, the model an
endpoint serves when only `--base-url` is given. After: exit 1 when every case failed or
more than `--max-error-rate` did, with one line naming the commonest cause; exit 3 when a
`--fail-if` gate holds (DESIGN.md "Exit codes"); the records stay either way.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.decisions.gates import Condition, evaluate
from judge.app.edge import note
from judge.app.outputs import Output
from judge.app.selection import check_selection, selection_from_args
from judge.config import JudgeConfig
from judge.engine.measure.run_gates import (
    abstained_line,
    check_conditions,
    failure_line,
    grade_metric_names,
    grade_metrics,
    grade_undefined_reasons,
)
from judge.engine.pricing import prices_for
from judge.errors import UsageError
from judge.rubric import Rubric

if TYPE_CHECKING:
    from judge.app.requests import GradeRequest

DEFAULT_MAX_ERROR_RATE = 0.05
EXIT_OK, EXIT_FATAL, EXIT_GATE = 0, 1, 3  # DESIGN.md "Exit codes" (judge.cli._common's)
EXIT_TOO_FEW = 4  # too few labels to tell: not a failed run (1), not a failed gate (3)
__all__ = ["selection_from_args"]  # re-exported: grade and batch import it from here


@functools.cache  # once a process
def settle_heap() -> None:
    """Once a process, just before a run's first request: collect what start-up left
    behind, then move every object still alive (modules, rubrics, the client, the input's
    index) out of the cyclic collector's sight (`gc.freeze`). The collector then scans
    only what the run itself makes: at C = 512 a full collection walked the start-up heap
    every few hundred replies (benchmarks/CLIENT.md). Only the command line calls it (a
    run is the process's last work); a server's or a notebook's heap is left alone."""
    gc.collect()
    gc.freeze()


@dataclass(frozen=True)
class GradeResult:
    """A finished grading job: its exit code (DESIGN.md "Exit codes"), its summary (a
    pass's whole summary; None where nothing was graded: an export) and its records files."""

    code: int
    summary: dict[str, Any] | None = None
    records: tuple[Path, ...] = ()


def check_run_options(args: GradeRequest) -> None:
    """Ranges no parser type can say; UsageError before anything is read or sent."""
    check_selection(args)
    if not 0.0 <= args.max_error_rate <= 1.0:
        raise UsageError(f"--max-error-rate must be between 0 and 1, got {args.max_error_rate}")
    prices = (args.price_input, args.price_output)
    if (prices[0] is None) != (prices[1] is None):
        raise UsageError("give both --price-input and --price-output (USD per million tokens)")
    if any(p is not None and not 0 <= p < 1e6 for p in prices):
        raise UsageError("--price-input/--price-output must be between 0 and 1000000")
    batch = args.batch_api or args.export_batch or args.import_batch
    if getattr(args, "human_labels", None) is not None and batch:
        raise UsageError(
            "--human-labels works with online grading only, not with the batch flags: "
            "finish the batch, then run `judge calibrate RECORDS HUMAN_LABELS`"
        )


def run_conditions(args: GradeRequest, rubric: Rubric) -> list[Condition]:
    """Every `--fail-if`, checked against the summary names of the rubric's kind (and,
    with `--human-labels`, the `ppi.*` estimates)."""
    valid = grade_metric_names(rubric)
    if getattr(args, "human_labels", None) is not None:
        # the statistics stack loads only when labels are given: offline grading starts light
        from judge.engine.measure.estimates import estimate_metric_names

        valid |= estimate_metric_names(rubric)
    return check_conditions(args.fail_if, valid, what=f"a {rubric.kind} summary")


def grade_outputs(args: GradeRequest, records: Path) -> list[Output]:
    outputs = [Output("-o", records, "records")]
    if args.summary:
        outputs.append(Output("--summary", args.summary, "summary"))
    if args.html:  # the batch forms share these outputs, with html None
        outputs.append(Output("--html", args.html, "html"))
    return outputs


def finish_run(
    summary: dict[str, Any],
    records: Path,
    *,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    conditions: Sequence[Condition] = (),
) -> int:
    """The exit code of a finished run, with one line for the user (the edge's note) for each reason."""
    return finish_pass(
        {"": summary},
        {"": records},
        (grade_metrics(summary), grade_undefined_reasons(summary)),
        max_error_rate=max_error_rate,
        conditions=conditions,
    )


def finish_pass(
    summaries: Mapping[str, dict[str, Any]],
    records: Mapping[str, Path],
    values: tuple[Mapping[str, Any], Mapping[str, str]],
    *,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    conditions: Sequence[Condition] = (),
) -> int:
    """The exit code of a finished pass of one rubric or several (`summaries` and their
    `records` files by the same key), with one line for the user (the edge's note) for each reason: 1 when any
    rubric's run failed (every one is named), else 3 when any gate holds on `values` (the
    numbers, and why any is undefined)."""
    failures = [failure_line(summaries[k], records[k], max_error_rate) for k in summaries]
    for failure in failures:
        if failure is not None:
            note(f"error: {failure}")
    if any(failures):
        return EXIT_FATAL
    for key in summaries:
        abstained = abstained_line(summaries[key], records[key])
        if abstained is not None:
            note(f"judge: {(key + ': ') if key else ''}{abstained}")
    # a gate that cannot be computed (e.g. a mean over no scored case) fails, saying why
    numbers, reasons = values
    checks = evaluate(conditions, numbers, reasons=reasons)
    for check in checks:
        line = f"{check.condition.text}: {check.value_text('g')} -> {check.outcome()}"
        note(f"gate: {line}")
    return EXIT_GATE if any(check.fails for check in checks) else EXIT_OK


def prices_from_args(
    args: GradeRequest, config: JudgeConfig, *, batch: bool = False
) -> tuple[float, float] | None:
    """USD per million (prompt, completion) tokens: `--price-input/--price-output` (both,
    checked up front) as given, else `judge.engine.pricing.prices_for`."""
    override = None
    if args.price_input is not None and args.price_output is not None:
        override = (args.price_input, args.price_output)
    return prices_for(config, override=override, batch=batch)
