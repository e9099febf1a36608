"""Batch files with a jury: one request file per juror out, every juror's results in.

`--export-batch DIR --jury J` writes `DIR/<juror>.jsonl` for each juror (its own model's
request bodies, as a single judge's export: the cases its cache cannot answer and its
records file has not graded; a file past the Batch API's limits goes on in
`<juror>.2.jsonl`, ...). In `mode: cyclic` a juror's file holds its share only
(judge.jury.plan: the share is a function of the case ids, so export and import agree).
`--import-batch DIR --jury J` reads each juror's results (`DIR/<juror>.jsonl` and
`DIR/<juror>.*.jsonl`: an output and an error file, or parts) and grades the jury as a
live run does (`judge.jury.run.grade_panel`), each juror's backend answering from its
results (`judge.batch.replay.ReplayBackend`): the jurors' records files, then the panel's
records and summary, the same as a live run's for the same replies (a batch has no
repair round trip and no latency, as a single judge's import); what a juror's results
held that no case used is said, per juror (`import_warnings`).

Refused with one line: `mode: escalate` (the other jurors are asked only where the first
juror's verdict is unsure, which its replies say only once they are back), and a
pairwise rubric (a juror judges each pair in both orders, two requests of one case id).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from judge.api import open_cache
from judge.batch.format import custom_id_for
from judge.batch.replay import (
    ExportReport,
    ImportReport,
    ReplayBackend,
    ResultIndex,
    check_models,
)
from judge.batch.replay import export_requests as export_juror
from judge.config import JudgeConfig
from judge.engine.cache import VerdictCache
from judge.engine.files import Selection
from judge.engine.grader import Grader
from judge.engine.inputs import iter_cases, validate_file
from judge.engine.records import KEEP_STATUSES
from judge.engine.resume import unchanged_ids
from judge.errors import UsageError
from judge.jury.config import Jury
from judge.jury.plan import cyclic_plan
from judge.jury.run import Panel, juror_path
from judge.rubric import Rubric


def check_batch_jury(jury: Jury, rubric: Rubric) -> None:
    """What a jury cannot do through batch files, refused before anything is written."""
    if jury.mode == "escalate":
        raise UsageError(
            "--jury with mode: escalate does not batch: the other jurors are asked only where "
            "the first juror is unsure, which its replies say only once they are back; grade "
            "it live, or use mode: full or cyclic"
        )
    if rubric.behaviour.compares_two:
        raise UsageError(
            f"a jury on the pairwise rubric {rubric.ref} does not batch yet: each juror "
            "judges every pair in both orders; grade it live"
        )


@dataclass(frozen=True)
class JurorExport:
    name: str
    report: ExportReport


def juror_shares(jury: Jury, input_path: Path, selection: Selection) -> list[Selection]:
    """Each juror's cases: the selection (`full`), or its cyclic share of it."""
    if jury.mode != "cyclic":
        return [selection] * len(jury.jurors)
    ids = [case.id for case in iter_cases(input_path)]
    plan = cyclic_plan(ids, selection.indices(len(ids)), len(jury.jurors), jury.overlap_share)
    return [Selection(only=plan.share(n)) for n in range(len(jury.jurors))]


async def export_jury(
    jury: Jury,
    rubric: Rubric,
    configs: Sequence[JudgeConfig],
    input_path: Path,
    folder: Path,
    *,
    out_dir: Path,
    selection: Selection | None = None,
    cache: VerdictCache | None = None,
) -> list[JurorExport]:
    """Every juror's request file in `folder` (module doc); a case already in a juror's
    records file under `out_dir` is not exported again."""
    check_batch_jury(jury, rubric)
    validate_file(input_path, rubric)
    shares = juror_shares(jury, input_path, selection or Selection())
    done = []
    for juror, config, share in zip(jury.jurors, configs, shares, strict=True):
        records = juror_path(out_dir, juror.name)
        # as a live rerun: a juror's answered cases (its parse errors too) are not asked again
        kept = (*KEEP_STATUSES, "parse_error")
        skip = unchanged_ids(records, rubric, input_path, kept)
        report = await export_juror(
            rubric,
            config,
            input_path,
            folder / f"{juror.name}.jsonl",
            selection=share,
            cache=cache,
            skip_ids=skip,
        )
        done.append(JurorExport(juror.name, report))
    return done


def results_of(jury: Jury, folder: Path) -> list[list[Path]]:
    """Each juror's results files in `folder`: `<name>.jsonl` and `<name>.*.jsonl`. A
    juror with none, or a file that names no juror, is a UsageError."""
    if not folder.is_dir():
        raise UsageError(f"--import-batch {folder}: with --jury, a folder of results files")
    names = [j.name for j in jury.jurors]
    found: dict[str, list[Path]] = {n: [] for n in names}
    strays = []
    for path in sorted(folder.glob("*.jsonl")):
        name = re.sub(r"\..*$", "", path.name)
        if name in found:
            found[name].append(path)
        else:
            strays.append(path.name)
    if strays:
        raise UsageError(
            f"--import-batch {folder}: {strays[0]} names no juror of the jury "
            f"({', '.join(names)}): results files are NAME.jsonl or NAME.*.jsonl"
        )
    missing = [n for n, paths in found.items() if not paths]
    if missing:
        raise UsageError(
            f"--import-batch {folder}: no results for juror {missing[0]!r} "
            f"({folder / (missing[0] + '.jsonl')}, or {missing[0]}.*.jsonl)"
        )
    return [found[n] for n in names]


@asynccontextmanager
async def open_replay_panel(
    jury: Jury, rubric: Rubric, configs: Sequence[JudgeConfig], results: Sequence[list[Path]]
) -> AsyncIterator[Panel]:
    """A `Panel` whose jurors answer from their results files (each checked to be its own
    model's, `judge.batch.replay.check_models`); closed when the block ends."""
    check_batch_jury(jury, rubric)
    indexes = [ResultIndex(paths) for paths in results]
    for index, config in zip(indexes, configs, strict=True):
        check_models(index, config)
    backends = [
        ReplayBackend(config, index) for config, index in zip(configs, indexes, strict=True)
    ]
    cache = open_cache(configs[0])
    try:
        graders = tuple(Grader(b, rubric, cache=cache, concurrency=64) for b in backends)
        yield Panel(jury, rubric, graders)
    finally:
        for backend in backends:
            await backend.aclose()
        if cache is not None:
            cache.close()


def import_warnings(panel: Panel, input_path: Path) -> list[str]:
    """What each juror's results held that no case used, as a single judge's import says
    it (`ImportReport.warnings`): lines matching no case, lines that are not result
    lines, custom_ids given twice. Read once the panel is graded."""
    ids = [custom_id_for(case.id) for case in iter_cases(input_path)]
    said = []
    for juror, grader in zip(panel.jury.jurors, panel.graders, strict=True):
        backend = grader.backend
        assert isinstance(backend, ReplayBackend)
        index = backend.results
        unused = sum(index.discard(i) for i in ids)
        report = ImportReport(
            {}, index.lines, index.remaining(), unused, index.duplicates, index.unreadable
        )
        said += [f"juror {juror.name}: {warning}" for warning in report.warnings()]
    return said
