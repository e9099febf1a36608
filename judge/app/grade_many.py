"""Grading several rubrics in one pass (`judge grade INPUT --rubric A,B,C -o OUT/`).

The input is read and validated once, against every rubric's inputs; each rubric writes
OUT/<rubric id>.jsonl under the same resume, identity and order rules as one rubric
(`judge.engine.files.grade_files`); the rubrics share one backend (one connection pool),
one cache and one concurrency budget. One summary covers every rubric and, when the pass
grades both a retrieval and a generation signal, the two-by-two diagnosis
(`judge.engine.diagnosis`). The exit code is the worst of the rubrics' (1 before 3).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.io.jsonout import write_strict_json
from calibration.io.rows import row_format
from judge.api import open_graders
from judge.app.edge import edge, note
from judge.app.judges import judge_config, rubric_library
from judge.app.outputs import Output, check_outputs, require_inputs
from judge.app.parquet import parquet_outputs, write_parquet_option
from judge.app.references import joined
from judge.app.runs import (
    GradeResult,
    finish_pass,
    prices_from_args,
    selection_from_args,
    settle_heap,
)
from judge.config import JudgeConfig
from judge.engine.diagnosis import SIGNALS, SignalSource, diagnose, diagnose_files, signal_sources
from judge.engine.files import Target, grade_files
from judge.engine.inputs import derived_ids_note
from judge.engine.measure.run_gates import grade_metric_names, pass_conditions, pass_metrics
from judge.errors import InputError, UsageError
from judge.report.rag import write_pass_report
from judge.rubric import Rubric, load_rubric

if TYPE_CHECKING:
    from judge.app.requests import GradeRequest

SINGLE_ONLY = ("batch_api", "export_batch", "import_batch", "human_labels")


def check_diagnosis_options(args: GradeRequest, rubrics: Sequence[Rubric]) -> None:
    """A threshold must be on 0..1 and have a rubric of its signal in the pass."""
    sources = signal_sources(rubrics)
    for signal in SIGNALS:
        value = getattr(args, f"{signal}_threshold")
        if value is None:
            continue
        flag = f"--{signal}-threshold"
        if not 0.0 <= value <= 1.0:
            raise UsageError(f"{flag} must be between 0 and 1 (scores are on 0..1), got {value}")
        if not sources[signal] or not all(sources[s] for s in SIGNALS):
            raise UsageError(
                f"{flag} sets the two-by-two diagnosis, which needs a pass of several "
                "rubrics with a retrieval and a generation signal (e.g. --rubric "
                "retrieval,faithfulness)"
            )


def rubric_refs(text: str) -> list[str]:
    """`--rubric a,b@2,c` as a list; UsageError for an empty or repeated entry."""
    refs = [part.strip() for part in text.split(",")]
    if not all(refs):
        raise UsageError(f"--rubric {text!r}: an empty rubric between commas")
    return refs


def run_grade_many(args: GradeRequest, env: Mapping[str, str], refs: list[str]) -> GradeResult:
    """Several rubrics in one pass (the module's rules)."""
    for name in SINGLE_ONLY:
        if getattr(args, name, None):
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} grades one rubric at a time; run it once per rubric")
    library = rubric_library(args, env)
    rubrics = [load_rubric(ref, library) for ref in refs]
    ids = [r.id for r in rubrics]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise UsageError(f"--rubric lists {', '.join(repeated)} more than once; one version each")
    check_diagnosis_options(args, rubrics)
    thresholds = {s: getattr(args, f"{s}_threshold") for s in SIGNALS}
    sources = signal_sources(rubrics, thresholds)
    conditions = pass_conditions(args.fail_if, _gate_names(rubrics, sources))
    files = _outputs(args, rubrics)
    config = judge_config(args.judge, env)
    with (
        input_file(args.input, args.input_format) as given,
        joined(given, args.references, args.join_on) as input_path,
    ):
        edge().judge(config)
        summaries = asyncio.run(_grade_pass(args, config, rubrics, files, input_path))
        by_id = {r.id: summaries[r.ref] for r in rubrics}
        diagnosis = diagnose_files({r.ref: files[r.id] for r in rubrics}, sources)
        whole = pass_summary(summaries, diagnosis)
        if args.html:  # inside: the cases' text is read from the input (stdin is spooled)
            write_pass_report(args.html, whole, {r.ref: files[r.id] for r in rubrics}, input_path)
            note(f"report: {args.html}")
    _tell_pass(summaries, whole, diagnosis, len(rubrics))
    note(f"records: {', '.join(str(files[i]) for i in ids)}")
    if args.summary:
        write_strict_json(args.summary, whole)
    write_parquet_option(args.parquet, [files[i] for i in ids], library)
    code = finish_pass(
        by_id,
        {i: files[i] for i in ids},
        pass_metrics(by_id, diagnosis),
        max_error_rate=args.max_error_rate,
        conditions=conditions,
    )
    return GradeResult(code, whole, tuple(files[i] for i in ids))


async def _grade_pass(
    args: GradeRequest,
    config: JudgeConfig,
    rubrics: Sequence[Rubric],
    files: Mapping[str, Path],
    input_path: Path,
) -> dict[str, dict[str, Any]]:
    """Every rubric's summary, by ref: one backend, one cache, one concurrency budget."""
    prices = prices_from_args(args, config)
    async with open_graders(config, list(rubrics)) as graders:
        targets = [Target(g, files[g.rubric.id]) for g in graders]
        settle_heap()
        done = await grade_files(
            targets,
            input_path,
            selection=selection_from_args(args),
            overwrite=args.overwrite,
            use_cache=config.use_cache,
            progress=edge().progress,
            prices=prices,
            concurrency=config.max_in_flight,
        )
        edge().requests(graders[0].backend)
        return done


def _tell_pass(
    summaries: Mapping[str, dict[str, Any]],
    whole: dict[str, Any],
    diagnosis: dict[str, Any] | None,
    count: int,
) -> None:
    """Each rubric's summary, the pass's line and its two-by-two, to the edge."""
    for summary in summaries.values():
        edge().summary(summary)
    cost = whole["estimated_cost_usd"]
    edge().line(
        f"pass: {count} rubrics over {whole['cases']} cases; tokens: "
        f"{whole['tokens']['prompt']} prompt, {whole['tokens']['completion']} completion; "
        f"cached: {whole['cached']}; estimated cost: "
        + ("unknown" if cost is None else f"${cost:.4f}")
    )
    edge().diagnosis(diagnosis)


def pass_summary(
    summaries: Mapping[str, dict[str, Any]], diagnosis: dict[str, Any] | None
) -> dict[str, Any]:
    """`--summary FILE.json` of a pass: each rubric's summary by ref, the two-by-two (null
    without both signals) and the pass's tokens, cached records and cost."""
    costs = [s.get("estimated_cost_usd") for s in summaries.values()]
    known = [float(c) for c in costs if c is not None]
    return {
        "rubrics": dict(summaries),
        "diagnosis": diagnosis,
        "cases": max((s["cases"] for s in summaries.values()), default=0),
        "cached": sum(s["cached"] for s in summaries.values()),
        "tokens": {
            part: sum(s["tokens"][part] for s in summaries.values())
            for part in ("prompt", "completion")
        },
        "estimated_cost_usd": None if len(known) < len(costs) else round(sum(known), 6),
    }


def _gate_names(
    rubrics: Sequence[Rubric], sources: Mapping[str, Sequence[SignalSource]]
) -> dict[str, set[str]]:
    names = {r.id: grade_metric_names(r) for r in rubrics}
    if all(sources[s] for s in SIGNALS):
        empty, _ = pass_metrics({}, diagnose([], sources))
        names["diagnosis"] = {n.removeprefix("diagnosis.") for n in empty}
    return names


def _outputs(args: GradeRequest, rubrics: Sequence[Rubric]) -> dict[str, Path]:
    """OUT/<rubric id>.jsonl for each rubric, checked before anything is read or sent."""
    stdin = args.input == "-"
    if stdin and args.output is None:
        raise UsageError("reading cases from stdin (-) needs -o OUT/: the folder a rerun resumes")
    folder = args.output or Path(f"{Path(args.input).stem}.graded")
    require_inputs([] if stdin else [Path(args.input)])
    if folder.exists() and not folder.is_dir():
        raise UsageError(
            f"-o {folder} is a file; with several rubrics -o names a folder that gets one "
            "records file per rubric"
        )
    files = {r.id: folder / f"{r.id}.jsonl" for r in rubrics}
    outputs = [Output("-o", path, "records") for path in files.values()]
    if args.summary:
        outputs.append(Output("--summary", args.summary, "summary"))
    if args.html:
        outputs.append(Output("--html", args.html, "html"))
    outputs += parquet_outputs(args.parquet, next(iter(files.values())))
    check_outputs(outputs, [] if stdin else [Path(args.input)], overwrite=args.overwrite)
    return files


class input_file:  # noqa: N801 (used as a context manager, like open)
    """The input path; stdin (`-`) is spooled to a temporary file so it can be read twice.
    A file without ids gets derived ones, said here in one line (judge.engine.inputs)."""

    def __init__(self, name: str, fmt: str | None) -> None:
        self.name, self.fmt = name, fmt
        self._tmp: Path | None = None

    def __enter__(self) -> Path:
        path = Path(self.name) if self.name != "-" else self._spool()
        derived = derived_ids_note(path)
        if derived:
            note(f"judge: {'<stdin>' if self.name == '-' else self.name}: {derived}")
        return path

    def _spool(self) -> Path:
        with tempfile.NamedTemporaryFile(prefix="stdin-", delete=False) as handle:
            shutil.copyfileobj(sys.stdin.buffer, handle)
        spooled = Path(handle.name)
        fmt = self.fmt or row_format(spooled)  # no --input-format: by the first character
        if self.fmt is None and fmt == "csv":
            note(
                "judge: <stdin> read as CSV (it does not start with '{'); pass "
                "--input-format jsonl or csv to say which"
            )
        self._tmp = spooled.rename(spooled.with_suffix(f".{fmt}"))
        return self._tmp

    def __exit__(self, kind: object, error: BaseException | None, tb: object) -> None:
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)
            if isinstance(error, InputError):  # name what the user gave, not our spool file
                raise InputError("<stdin>", error.problems) from None
