"""`judge probe KIND INPUT --rubric ID`: run one bias probe, write OUT.json and OUT.md.

With `--verdicts RECORDED.jsonl` the position statistics come from verdicts already
recorded (any tool's judge); nothing is sent. The gate options exit 3 (EXIT_GATE) when a
`--fail-if` condition holds or, with `--fail-if-biased`, when a bias check's interval lies
entirely beyond its no-bias value +/- `--tolerance`. The job is judge.app.probe's.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

from judge.app.probe import (
    FAIL_IF_METRICS,
    FAMILY_NAMES,
    PADDINGS,
    PROBE_KINDS,
    ProbeRequest,
    plan_probe,
    run_probe_job,
)
from judge.cli._common import EXIT_FATAL, EXIT_GATE, EXIT_OK, add_judge_options, say
from judge.cli._help import PROBE_EXAMPLES
from judge.cli._html import add_html_option
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import request_from
from judge.cli._selection import add_selection_options


def add_probe_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "probe",
        help="measure a judge's biases (position, verbosity, ...)",
        description="Run one bias probe on a judge; write OUT.json and a short OUT.md. "
        "Every rate comes with a Wilson 95% interval.",
        epilog=probe_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("probe", choices=PROBE_KINDS, help="which probe")
    p.add_argument("input", nargs="?", help="JSONL or CSV cases (pairs for position)")
    p.add_argument("--rubric", help="ID or ID@VERSION (pairwise for position)")
    p.add_argument("-o", "--output", type=Path, help="report (default: INPUT.probe-KIND.json)")
    _add_probe_options(p)
    _add_gate_options(p)
    add_selection_options(p, verb="probe")
    add_html_option(p)
    add_judge_options(p)
    p.set_defaults(run=run_probe_command)


def _add_probe_options(p: argparse.ArgumentParser) -> None:
    """What each probe reads or asks besides INPUT."""
    p.add_argument(
        "--jury",
        type=Path,
        metavar="JURY.yaml",
        help="probe a panel (mode: full): every juror asked, the figures the panel's "
        "verdicts', each juror's beside them (juror.NAME.METRIC for --fail-if)",
    )
    p.add_argument(
        "--verdicts", type=Path, help="position: recorded verdicts (id, order ab|ba, label)"
    )
    p.add_argument("--repeats", type=int, default=5, help="repeat: verdicts per case (5)")
    paddings = sorted(PADDINGS)
    p.add_argument("--padding", action="append", choices=paddings, help="verbosity (default: all)")
    p.add_argument(
        "--judge-family",
        help="self-preference: the judge's model family, one of "
        f"{', '.join(FAMILY_NAMES)}, or a model name (gpt-4o -> openai); default: the "
        "family of --model",
    )
    p.add_argument("--human", type=Path, help="self-preference: human labels (id,label)")
    p.add_argument(
        "--overwrite", action="store_true", help="replace an -o file that is not a report"
    )


def probe_epilog() -> str:
    """The --fail-if metric names by probe, then the examples."""
    lines = ['metrics for --fail-if "METRIC OP NUMBER" (OP is < <= > >= == or !=):']
    for probe, names in FAIL_IF_METRICS.items():
        lines.extend(
            textwrap.wrap(
                ", ".join(names),
                width=92,
                initial_indent=f"  {probe + ':':<21}",
                subsequent_indent=" " * 23,
            )
        )
    lines.append("  any other number in OUT.json by its dotted path, e.g. inconsistent.first_slot")
    return "\n".join(lines) + "\n\n" + PROBE_EXAMPLES


def _add_gate_options(p: argparse.ArgumentParser) -> None:
    gate = p.add_argument_group("gate (exit 3)")
    gate.add_argument(
        "--fail-if",
        action="append",
        default=[],
        metavar="EXPR",
        help="fail when METRIC OP NUMBER holds, e.g. 'consistency_rate < 0.9' "
        "(metric names below; repeat for several)",
    )
    gate.add_argument(
        "--max-flip-rate", type=float, help="injection: same as --fail-if 'flip_rate > X'"
    )
    gate.add_argument(
        "--fail-if-biased",
        action="store_true",
        help="pass only when every bias check's interval lies within no-bias +/- tolerance; "
        "beyond it is biased, across its edge is too few pairs (cases) to tell: both fail",
    )
    gate.add_argument("--tolerance", type=float, default=0.05, help="bias tolerance (0.05)")
    gate.add_argument("--alpha", type=float, default=0.05, help="1 - confidence of the gate (0.05)")


def run_probe_command(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return probe_command(request_from(ProbeRequest, args), env)


def probe_command(request: ProbeRequest, env: Mapping[str, str]) -> int:
    """`judge probe PROBE`, from its request: plan, guard the outputs, run, print."""
    plan = plan_probe(request)
    outputs = [Output(*output) for output in plan.outputs]
    check_outputs(outputs, plan.inputs, overwrite=request.overwrite)
    outcome = run_probe_job(plan, env, say=say)
    print("\n".join(outcome.result.markdown))
    print("wrote: " + ", ".join(str(p) for p in outcome.paths), file=sys.stderr)
    if outcome.failure is not None:
        print(f"error: the probe failed: {outcome.failure}; see {outcome.output}", file=sys.stderr)
        return EXIT_FATAL
    return EXIT_GATE if outcome.gate_failed else EXIT_OK
