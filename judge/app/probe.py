"""The probe job: one bias probe on a judge (or a jury), its gate, and its reports
(OUT.json, OUT.md, OUT.records.jsonl for some probes, the HTML report when asked for).

In two steps, so that a caller can guard the outputs in between: `plan_probe` checks the
request (gate conditions, the jury file, the output's name) before anything is read or
sent; `run_probe_job` reads the cases (or the recorded verdicts of `--verdicts`), asks the
judge, gates the result and writes the reports. Notes for the person running it go to
`say`, one line each; nothing is printed here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.app.judging import Say, judge_config, judge_notes, panel_configs, rubric_library
from judge.config import JudgeConfig
from judge.engine.files import Selection
from judge.engine.measure.run_gates import check_conditions, probe_failure
from judge.errors import UsageError
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
from judge.probes.families import FAMILY_NAMES
from judge.probes.verbosity import PADDINGS
from judge.rubric import Rubric, load_rubric
from judge.schemas import Case

if TYPE_CHECKING:
    from calibration.decisions.gates import Condition
    from judge.app.judging import JudgeChoice
    from judge.jury.config import Jury

__all__ = [
    "FAIL_IF_METRICS",
    "FAMILY_NAMES",
    "PADDINGS",
    "PROBE_KINDS",
    "ProbeOutcome",
    "ProbePlan",
    "ProbeRequest",
    "plan_probe",
    "run_probe_job",
]


# The headline numbers in each probe's report, for `--fail-if "METRIC OP NUMBER"` (any
# number in OUT.json works, by its dotted path; tests/engine/test_cli_help.py checks these exist).
FAIL_IF_METRICS: dict[str, tuple[str, ...]] = {
    "position": (
        "consistency_rate",
        "first_position_win_rate",
        "first_position_p_value",
        "tie_rate",
        "first_slot_inconsistency_rate",
        "second_slot_inconsistency_rate",
    ),
    "verbosity": ("mean_score_change", "share_raised", "share_lowered", "wilcoxon_p_value"),
    "verbosity, pairwise": ("padded_win_rate", "padded_win_p_value", "padded_preferred_rate"),
    "repeat": (
        "exact_agreement_rate",
        "mean_spread",
        "max_spread",
        "krippendorff_alpha_labels",
        "krippendorff_alpha_scores",
    ),
    "injection": ("flip_rate", "toward_rate", "flips"),
    "self-preference": ("own_win_rate", "own_win_p_value", "excess_own_preference"),
}


@dataclass(frozen=True)
class ProbeRequest:
    """`judge probe PROBE`."""

    probe: str
    input: str | None
    rubric: str | None
    output: Path | None
    verdicts: Path | None
    repeats: int
    padding: tuple[str, ...] | None
    judge_family: str | None
    human: Path | None
    overwrite: bool
    fail_if: tuple[str, ...]
    max_flip_rate: float | None
    fail_if_biased: bool
    tolerance: float
    alpha: float
    html: Path | None
    rubrics_dir: tuple[Path, ...]
    judge: JudgeChoice
    jury: Path | None = None  # --jury JURY.yaml: probe a panel (judge.jury.probe)
    limit: int | None = None  # --limit / --sample / --sample-seed: as grade's
    sample: int | None = None
    sample_seed: int = 0


@dataclass(frozen=True)
class ProbePlan:
    """A checked probe request: what it writes (flag, path, kind), what it reads, its jury
    and gate conditions."""

    request: ProbeRequest
    output: Path
    outputs: list[tuple[str, Path, str]]
    inputs: list[Path]
    jury: Jury | None = None
    conditions: list[Condition] = field(default_factory=list)


@dataclass(frozen=True)
class ProbeOutcome:
    """What the probe found, the files written, and how it ends: `failure` says why the
    probe measured nothing (exit 1), `gate_failed` that a gate held (exit 3)."""

    result: ProbeResult
    output: Path
    paths: list[Path]
    failure: str | None
    gate_failed: bool


def plan_probe(request: ProbeRequest) -> ProbePlan:
    """Every check that needs no file read: a typo or a bad range fails here, before
    anything is read or sent."""
    for name in ("limit", "sample"):
        value = getattr(request, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name} must be at least 1, got {value}")
    jury = _jury(request)
    conditions = _conditions(request, jury)
    stem = Path(request.input or request.verdicts or "").stem
    output = request.output or Path(f"{stem}.probe-{request.probe}.json")
    outputs = [
        ("-o", output, "probe"),
        ("-o", output.with_suffix(".md"), "markdown"),
        ("-o", output.with_suffix(".records.jsonl"), "probe-records"),
        *([("--html", request.html, "html")] if request.html else []),
    ]
    inputs = [Path(p) for p in (request.input, request.verdicts, request.human) if p]
    return ProbePlan(request, output, outputs, inputs, jury, conditions)


def run_probe_job(plan: ProbePlan, env: Mapping[str, str], *, say: Say) -> ProbeOutcome:
    """Run the planned probe, gate it, write its reports."""
    request = plan.request
    if request.verdicts is not None:
        result = _recorded(request, env)
    else:
        result = _judged(request, env, plan.jury, say)
    gate = run_gate(
        result,
        conditions=plan.conditions,
        biased=request.fail_if_biased,
        tolerance=request.tolerance,
        alpha=request.alpha,
    )
    result.report["gate"] = gate
    result.markdown += gate_markdown(gate)
    paths = write_outputs(result, plan.output)
    if request.html:
        from judge.report.probe import write_probe_report

        cases = Path(request.input) if request.input else None
        paths.append(write_probe_report(request.html, result.report, cases, result.records))
    failure = probe_failure(result.report)
    return ProbeOutcome(result, plan.output, paths, failure, bool(gate["failed"]))


def _jury(request: ProbeRequest) -> Jury | None:
    """The `--jury` file, read and checked for this probe before anything is sent."""
    if request.jury is None:
        return None
    if request.verdicts is not None:
        raise UsageError("--jury asks the jurors; --verdicts reads verdicts already recorded")
    from judge.jury.config import load_jury
    from judge.jury.probe import check_probe_jury

    jury = load_jury(request.jury)
    check_probe_jury(jury, request.probe, request.judge_family)
    return jury


def _conditions(request: ProbeRequest, jury: Jury | None = None) -> list[Condition]:
    """Every gate condition, parsed and checked against the probe's names."""
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
    from judge.probes.position import check_ids, position_result, read_recorded_verdicts

    if request.probe != "position":
        raise UsageError("--verdicts works with the position probe only")
    if request.limit is not None or request.sample is not None:
        raise UsageError("--limit and --sample choose the cases to ask; --verdicts reads all")
    verdicts = request.verdicts
    assert verdicts is not None  # run_probe_job calls this with --verdicts only
    pairs = read_recorded_verdicts(verdicts)
    if request.input:
        rubric = _rubric(request.rubric or "pairwise", request, env)
        check_ids(pairs, load_cases(Path(request.input), rubric), Path(verdicts))
    return position_result(pairs, {"source": "recorded", "verdicts": str(verdicts)})


def _judged(
    request: ProbeRequest, env: Mapping[str, str], jury: Jury | None, say: Say
) -> ProbeResult:
    if not request.input:
        raise UsageError(f"judge probe {request.probe} needs INPUT (or --verdicts for position)")
    if not request.rubric:
        raise UsageError("--rubric is required, e.g. --rubric pairwise")
    if jury is not None:
        config, configs = panel_configs(request.judge, jury, env)
    else:
        config, configs = judge_config(request.judge, env, say=say), []
    rubric = _probed_rubric(request, env)
    every = load_cases(Path(request.input), rubric)
    selection = Selection(limit=request.limit, sample=request.sample, seed=request.sample_seed)
    chosen = selection.indices(len(every))
    cases = every if chosen is None else [c for i, c in enumerate(every) if i in chosen]
    options = _options(request, None if jury else config.model or "rules")
    if request.probe == "self-preference":
        _check_families(request, cases, rubric, options, say)
    for juror_config in configs or [config]:
        for line in judge_notes(juror_config):
            say(line)
    if jury is not None:
        say(f"judge: probing a jury of {len(jury.jurors)}: {_names(jury)}")
        result = asyncio.run(_run_jury(request.probe, jury, configs, rubric, cases, options))
    else:
        result = asyncio.run(_run(request.probe, config, rubric, cases, options))
    judge = f"jury of {_names(jury)}" if jury else config.model or "rules"
    return _headed(result, request, rubric, judge, _described(selection, len(every)))


def _probed_rubric(request: ProbeRequest, env: Mapping[str, str]) -> Rubric:
    """The rubric, refused when this probe cannot run on it."""
    assert request.rubric is not None  # _judged checks --rubric first
    rubric = _rubric(request.rubric, request, env)
    if request.probe == "position" and not rubric.behaviour.compares_two:
        raise UsageError(f"the position probe needs a pairwise rubric, not {rubric.ref}")
    problem = probe_problem(request.probe, rubric)
    if problem:
        raise UsageError(problem)
    return rubric


def _options(request: ProbeRequest, judge_model: str | None) -> ProbeOptions:
    return ProbeOptions(
        repeats=request.repeats,
        paddings=tuple(request.padding or ()),
        judge_model=judge_model,
        judge_family=request.judge_family,
        human_labels=_human_labels(request.human) if request.human else None,
    )


def _headed(
    result: ProbeResult, request: ProbeRequest, rubric: Rubric, judge: str, picked: str
) -> ProbeResult:
    """The report and its Markdown, headed with what was probed on which cases."""
    head = {
        "rubric": rubric.ref,
        "rubric_sha256": rubric.sha256,
        "judge": judge,
        "input": str(request.input),
        **({"selection": picked} if picked else {}),
    }
    result.report = {"probe": result.report.pop("probe"), **head, **result.report}
    result.markdown[1:1] = [
        "",
        f"Judge `{judge}`, rubric `{rubric.ref}`, input `{request.input}`"
        + (f", cases {picked}." if picked else "."),
    ]
    return result


def _described(selection: Selection, count: int) -> str:
    """How the selection picked its cases, for a report: "" when it took them all."""
    if selection.indices(count) is None:
        return ""
    if selection.sample is not None and selection.sample < count:
        return f"--sample {selection.sample} (seed {selection.seed}) of {count}"
    return f"--limit {selection.limit} of {count}"


def _check_families(
    request: ProbeRequest, cases: Sequence[Case], rubric: Rubric, options: ProbeOptions, say: Say
) -> None:
    """Before anything is sent: a `--judge-family` that no case's generator belongs to is
    refused (a typo, or a family the cases do not hold); cases that cannot compare the
    family with another otherwise are said in one warning line (the probe still runs, its
    report says the same, and its bias check is undefined)."""
    from judge.probes.families import judge_family
    from judge.probes.self_preference import case_families, match_problem

    own = judge_family(options.judge_family, options.judge_model)
    problem = match_problem(cases, own, pairwise=rubric.behaviour.compares_two)
    if problem is None:
        return
    if request.judge_family and own not in case_families(cases):
        raise UsageError(f"--judge-family {request.judge_family}: {problem}")
    say(f"judge: warning: self-preference: {problem}")


def _rubric(ref: str, request: ProbeRequest, env: Mapping[str, str]) -> Rubric:
    return load_rubric(ref, rubric_library(request, env))


def _human_labels(path: Path) -> dict[str, Any]:
    from calibration.errors import CalibrationInputError
    from calibration.io.labels import read_labels

    try:
        labels = read_labels(path)
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None
    return {record.id: record.value for record in labels.records}


async def _run(
    kind: str, config: JudgeConfig, rubric: Rubric, cases: Sequence[Case], options: ProbeOptions
) -> ProbeResult:
    from judge.api import open_grader

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
    from judge.jury.probe import probe_panel
    from judge.jury.run import open_panel

    async with open_panel(jury, rubric, configs) as panel:
        return await probe_panel(kind, panel, cases, options)
