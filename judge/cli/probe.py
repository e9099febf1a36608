"""`judge probe KIND INPUT --rubric ID`: run one bias probe, write OUT.json and OUT.md.

With `--verdicts RECORDED.jsonl` the position statistics come from verdicts already
recorded (any tool's judge); nothing is sent. The gate options exit 3 (EXIT_GATE) when a
`--fail-if` condition holds or, with `--fail-if-biased`, when a bias check's interval lies
entirely beyond its no-bias value +/- `--tolerance`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from calibration.decisions.gates import Condition
from calibration.errors import CalibrationInputError
from calibration.io.labels import read_labels
from judge.api import open_grader
from judge.cli._common import (
    EXIT_FATAL,
    EXIT_GATE,
    EXIT_OK,
    add_judge_options,
    announce_judge,
    config_from_args,
    rubric_library,
)
from judge.cli._help import probe_epilog
from judge.cli._html import add_html_option, probe_html
from judge.cli._jury_options import panel_configs
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import ProbeRequest, request_from
from judge.cli._selection import (
    add_selection_options,
    check_selection,
    described,
    selected,
    selection_from_args,
)
from judge.config import JudgeConfig
from judge.engine.measure.run_gates import check_conditions, probe_failure
from judge.errors import UsageError
from judge.jury.config import Jury, load_jury
from judge.jury.probe import check_probe_jury, probe_panel
from judge.jury.run import open_panel
from judge.probes import (
    PROBE_KINDS,
    ProbeOptions,
    ProbeResult,
    gate_markdown,
    load_cases,
    probe_metric_names,
    probe_problem,
    run_gate,
    run_probe,
    write_outputs,
)
from judge.probes.families import FAMILY_NAMES, judge_family
from judge.probes.position import check_ids, position_result, read_recorded_verdicts
from judge.probes.self_preference import case_families, match_problem
from judge.probes.verbosity import PADDINGS
from judge.rubric import Rubric, load_rubric
from judge.schemas import Case


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
    p.add_argument(
        "--padding", action="append", choices=sorted(PADDINGS), help="verbosity (default: all)"
    )
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
    add_selection_options(p, verb="probe")
    add_html_option(p)
    add_judge_options(p)
    p.set_defaults(run=run_probe_command)


def run_probe_command(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return probe_command(request_from(ProbeRequest, args), env)


def probe_command(request: ProbeRequest, env: Mapping[str, str]) -> int:
    """`judge probe PROBE`, from its request."""
    check_selection(request)
    jury = _jury(request)
    conditions = _conditions(request, jury)
    output = request.output or Path(
        f"{Path(request.input or request.verdicts or '').stem}.probe-{request.probe}.json"
    )
    check_outputs(_outputs(output, request.html), _inputs(request), overwrite=request.overwrite)
    if request.verdicts is not None:
        result = _recorded(request, env)
    else:
        result = _judged(request, env, jury)
    gate = run_gate(
        result,
        conditions=conditions,
        biased=request.fail_if_biased,
        tolerance=request.tolerance,
        alpha=request.alpha,
    )
    result.report["gate"] = gate
    result.markdown += gate_markdown(gate)
    paths = write_outputs(result, output)
    paths += probe_html(request, result.report, result.records)
    print("\n".join(result.markdown))
    print("wrote: " + ", ".join(str(p) for p in paths), file=sys.stderr)
    failure = probe_failure(result.report)
    if failure is not None:
        print(f"error: the probe failed: {failure}; see {output}", file=sys.stderr)
        return EXIT_FATAL
    return EXIT_GATE if gate["failed"] else EXIT_OK


def _outputs(report: Path, html: Path | None) -> list[Output]:
    """OUT.json, OUT.md and (some probes) OUT.records.jsonl: see `write_outputs`; and the
    HTML report when asked for."""
    outputs = [
        Output("-o", report, "probe"),
        Output("-o", report.with_suffix(".md"), "markdown"),
        Output("-o", report.with_suffix(".records.jsonl"), "probe-records"),
    ]
    return [*outputs, Output("--html", html, "html")] if html else outputs


def _inputs(request: ProbeRequest) -> list[Path]:
    return [Path(p) for p in (request.input, request.verdicts, request.human) if p]


def _jury(request: ProbeRequest) -> Jury | None:
    """The `--jury` file, read and checked for this probe before anything is sent."""
    if request.jury is None:
        return None
    if request.verdicts is not None:
        raise UsageError("--jury asks the jurors; --verdicts reads verdicts already recorded")
    jury = load_jury(request.jury)
    check_probe_jury(jury, request.probe, request.judge_family)
    return jury


def _conditions(request: ProbeRequest, jury: Jury | None = None) -> list[Condition]:
    """Every gate condition, parsed and checked against the probe's names: a typo fails
    here, before anything is sent."""
    texts = list(request.fail_if)
    if request.max_flip_rate is not None:
        if request.probe != "injection":
            raise UsageError("--max-flip-rate applies to the injection probe only")
        if not 0 <= request.max_flip_rate <= 1:
            raise UsageError(
                f"--max-flip-rate must be between 0 and 1, got {request.max_flip_rate}"
            )
        texts.append(f"flip_rate > {request.max_flip_rate}")
    names = [j.name for j in jury.jurors] if jury else ()
    valid = probe_metric_names(request.probe, paddings=request.padding or (), jurors=names)
    what, example = f"the {request.probe} probe", "consistency_rate < 0.9"
    conditions = check_conditions(texts, valid, what=what, example=example)
    if not 0 < request.alpha < 1:
        raise UsageError(f"--alpha must be between 0 and 1, got {request.alpha}")
    if request.tolerance < 0:
        raise UsageError(f"--tolerance must be >= 0, got {request.tolerance}")
    return conditions


def _recorded(request: ProbeRequest, env: Mapping[str, str]) -> ProbeResult:
    if request.probe != "position":
        raise UsageError("--verdicts works with the position probe only")
    if request.limit is not None or request.sample is not None:
        raise UsageError("--limit and --sample choose the cases to ask; --verdicts reads all")
    verdicts = request.verdicts
    assert verdicts is not None  # probe_command calls this with --verdicts only
    pairs = read_recorded_verdicts(verdicts)
    if request.input:
        rubric = _rubric(request.rubric or "pairwise", request, env)
        check_ids(pairs, load_cases(Path(request.input), rubric), Path(verdicts))
    return position_result(pairs, {"source": "recorded", "verdicts": str(verdicts)})


def _judged(request: ProbeRequest, env: Mapping[str, str], jury: Jury | None) -> ProbeResult:
    if not request.input:
        raise UsageError(f"judge probe {request.probe} needs INPUT (or --verdicts for position)")
    if not request.rubric:
        raise UsageError("--rubric is required, e.g. --rubric pairwise")
    if jury is not None:
        config, configs = panel_configs(request.judge, jury, env)
    else:
        config, configs = config_from_args(request.judge, env), []
    rubric = _rubric(request.rubric, request, env)
    if request.probe == "position" and not rubric.behaviour.compares_two:
        raise UsageError(f"the position probe needs a pairwise rubric, not {rubric.ref}")
    problem = probe_problem(request.probe, rubric)
    if problem:
        raise UsageError(problem)
    every = load_cases(Path(request.input), rubric)
    selection = selection_from_args(request)
    cases, picked = selected(every, selection), described(selection, len(every))
    options = ProbeOptions(
        repeats=request.repeats,
        paddings=tuple(request.padding or ()),
        judge_model=None if jury else config.model or "rules",
        judge_family=request.judge_family,
        human_labels=_human_labels(request.human) if request.human else None,
    )
    if request.probe == "self-preference":
        _check_families(request, cases, rubric, options)
    if jury is not None:
        for juror_config in configs:
            announce_judge(juror_config)
        print(f"judge: probing a jury of {len(jury.jurors)}: {_names(jury)}", file=sys.stderr)
        probing = _run_jury(request.probe, jury, configs, rubric, cases, options)
        result = asyncio.run(probing)
    else:
        announce_judge(config)
        result = asyncio.run(_run(request.probe, config, rubric, cases, options))
    head = {
        "rubric": rubric.ref,
        "rubric_sha256": rubric.sha256,
        "judge": f"jury of {_names(jury)}" if jury else config.model or "rules",
        "input": str(request.input),
        **({"selection": picked} if picked else {}),
    }
    result.report = {"probe": result.report.pop("probe"), **head, **result.report}
    result.markdown[1:1] = [
        "",
        f"Judge `{head['judge']}`, rubric `{rubric.ref}`, input `{request.input}`"
        + (f", cases {picked}." if picked else "."),
    ]
    return result


def _check_families(
    request: ProbeRequest, cases: Sequence[Case], rubric: Rubric, options: ProbeOptions
) -> None:
    """Before anything is sent: a `--judge-family` that no case's generator belongs to is
    refused (a typo, or a family the cases do not hold); cases that cannot compare the
    family with another otherwise are said in one warning line (the probe still runs, its
    report says the same, and its bias check is undefined)."""
    own = judge_family(options.judge_family, options.judge_model)
    problem = match_problem(cases, own, pairwise=rubric.behaviour.compares_two)
    if problem is None:
        return
    if request.judge_family and own not in case_families(cases):
        raise UsageError(f"--judge-family {request.judge_family}: {problem}")
    print(f"judge: warning: self-preference: {problem}", file=sys.stderr)


def _rubric(ref: str, request: ProbeRequest, env: Mapping[str, str]) -> Rubric:
    return load_rubric(ref, rubric_library(request, env))


def _human_labels(path: Path) -> dict[str, Any]:
    try:
        labels = read_labels(path)
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None
    return {record.id: record.value for record in labels.records}


async def _run(
    kind: str, config: JudgeConfig, rubric: Rubric, cases: Sequence[Case], options: ProbeOptions
) -> ProbeResult:
    async with open_grader(config, rubric) as grader:
        return await run_probe(kind, grader, cases, options)


def _names(jury: Jury) -> str:
    return ", ".join(f"{j.name} ({j.model})" for j in jury.jurors)


async def _run_jury(
    kind: str,
    jury: Jury,
    configs: list[JudgeConfig],
    rubric: Rubric,
    cases: Sequence[Case],
    options: ProbeOptions,
) -> ProbeResult:
    async with open_panel(jury, rubric, configs) as panel:
        return await probe_panel(kind, panel, cases, options)
