"""Grade a file with a jury: every juror as a single judge, then the panel's records.

Each juror is a `Grader` of its own (its backend, its concurrency; the cache shared, keyed
by each juror's identity) running `judge.engine.files.grade_file` into
`OUT/jurors/<name>.jsonl`: the same rendered prompt, cache, retries, parsing, repair and
resume as a single judge, so a juror's file is a single judge's file. The jurors run
concurrently, each within its own concurrency. When every juror is done, the panel's
records are built from the jurors' files (one per case, input order) and written to
`OUT/<rubric>.jsonl` by an atomic rewrite; a rerun re-reads the jurors' files (none of
their finished cases is asked again) and rebuilds the panel's.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.agreement.panel import panel_agreement
from judge.api import make_backend, open_cache
from judge.config import JudgeConfig
from judge.engine.files import Selection, grade_file
from judge.engine.grader import Grader
from judge.engine.identity import describe_identity
from judge.engine.inputs import iter_cases, validate_file
from judge.engine.records import check_resumable, scan_records
from judge.engine.summary import summarise
from judge.errors import ApiError, UsageError
from judge.jury.config import Juror, Jury, juror_config
from judge.jury.humans import against_humans
from judge.jury.records import PanelRecord, panel_identity, panel_record
from judge.rubric import Rubric
from judge.schemas import GradedRecord

if TYPE_CHECKING:
    from judge.client import AsyncHttpClient
    from judge.engine.measure.human_labels import HumanLabels


@dataclass(frozen=True)
class Panel:
    """A jury ready to grade: one grader per juror, in the jury file's order."""

    jury: Jury
    rubric: Rubric
    graders: tuple[Grader, ...]

    @property
    def identity(self) -> dict[str, Any]:
        return panel_identity(self.jury, [g.identity for g in self.graders])


def juror_configs(jury: Jury, base: JudgeConfig, env: Mapping[str, str]) -> list[JudgeConfig]:
    """Every juror's judge config over the command line's (`juror_config`)."""
    return [juror_config(j, base, env) for j in jury.jurors]


@asynccontextmanager
async def open_panel(
    jury: Jury,
    rubric: Rubric,
    configs: list[JudgeConfig],
    *,
    http_client: AsyncHttpClient | None = None,
) -> Any:
    """A `Panel` whose backends and cache are closed when the block ends."""
    if not rubric.behaviour.needs_judge:
        raise UsageError(f"rubric {rubric.ref} is computed from the cases: a jury has no say")
    cache = open_cache(configs[0])
    async with AsyncExitStack() as stack:
        graders = []
        for config in configs:
            backend = make_backend(config, http_client=http_client)
            stack.push_async_callback(backend.aclose)
            graders.append(Grader(backend, rubric, cache=cache, concurrency=config.max_in_flight))
        try:
            yield Panel(jury, rubric, tuple(graders))
        finally:
            if cache is not None:
                cache.close()


def juror_path(out_dir: Path, name: str) -> Path:
    return out_dir / "jurors" / f"{name}.jsonl"


async def grade_panel(
    panel: Panel,
    input_path: Path,
    out_dir: Path,
    *,
    selection: Selection | None = None,
    overwrite: bool = False,
    use_cache: bool = True,
    prices: tuple[float, float] | None = None,
    n_boot: int = 1000,
    human_labels: HumanLabels | None = None,
) -> dict[str, Any]:
    """Grade `input_path` with every juror, then write the panel's records to
    `out_dir/<rubric>.jsonl`; the panel's summary, with `jury` (each juror's summary, the
    panel's outcomes and `agreement`: calibration.agreement.panel). The input (and the
    `human_labels`, against it) is validated before any juror is asked anything; with
    labels, `jury.vs_humans` compares every juror and the panel with people
    (judge.jury.humans)."""
    names = [j.name for j in panel.jury.jurors]
    await asyncio.to_thread(validate_file, input_path, [panel.rubric])
    if human_labels is not None:
        ids = (c.id for c in iter_cases(input_path))
        await asyncio.to_thread(human_labels.check, panel.rubric, ids)
    paths = [juror_path(out_dir, n) for n in names]
    if overwrite:
        for path in paths:
            path.unlink(missing_ok=True)
    for grader, path in zip(panel.graders, paths, strict=True):  # all before any is asked
        await asyncio.to_thread(_check_resumable, grader, path)

    async def one(grader: Grader, path: Path, juror: Juror) -> dict[str, Any]:
        try:
            return await _grade_juror(grader, path)
        except ApiError as exc:
            raise _naming(exc, juror) from exc

    async def _grade_juror(grader: Grader, path: Path) -> dict[str, Any]:
        return await grade_file(
            grader,
            input_path,
            path,
            selection=selection or Selection(),
            use_cache=use_cache,
            prices=prices,
        )

    summaries = await _all(
        [one(g, p, j) for g, p, j in zip(panel.graders, paths, panel.jury.jurors, strict=True)]
    )
    output = out_dir / f"{panel.rubric.id}.jsonl"
    await asyncio.to_thread(_write_panel, panel, paths, output)
    summary = await asyncio.to_thread(_summarise_panel, panel, paths, output, prices, n_boot)
    summary["jury"]["jurors"] = {
        name: _juror_summary(s, str(path))
        for name, s, path in zip(names, summaries, paths, strict=True)
    }
    if human_labels is not None:
        tokens = {
            n: s["tokens"]["prompt"] + s["tokens"]["completion"]
            for n, s in zip(names, summaries, strict=True)
        }
        records = [PanelRecord.model_validate(d) for _, d in scan_records(output)]
        compare = partial(
            against_humans, records, panel.rubric, human_labels, tokens=tokens, n_bootstrap=n_boot
        )
        summary["jury"]["vs_humans"] = await asyncio.to_thread(compare)
    return summary


def _check_resumable(grader: Grader, path: Path) -> None:
    check_resumable(
        path,
        rubric_sha256=grader.rubric.sha256,
        rubric_ref=grader.rubric.ref,
        judge_id=grader.judge_id,
        judge=describe_identity(grader.identity),
    )


def _naming(exc: ApiError, juror: Juror) -> ApiError:
    """The same error, its message saying which juror (and which key variable) it was."""
    named = copy.copy(exc)
    key = f"; its key is ${juror.api_key_env}" if juror.api_key_env else ""
    named.args = (f"juror {juror.name!r} ({juror.model}{key}): {exc}",)
    return named


async def _all(jobs: list[Any]) -> list[dict[str, Any]]:
    """Run the jurors together; the first error (a fatal judge error) cancels the rest."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(job) for job in jobs]
    except* Exception as failures:
        raise failures.exceptions[0] from None
    return [t.result() for t in tasks]


def panel_records(panel: Panel, paths: list[Path]) -> Iterator[PanelRecord]:
    """The panel's record of each case, from the jurors' finished files (input order)."""
    identity = panel.identity
    streams = [(GradedRecord.model_validate(d) for _, d in scan_records(p)) for p in paths]
    for records in zip(*streams, strict=True):
        ids = {r.id for r in records}
        if len(ids) != 1:
            raise UsageError(f"the jurors' files disagree on the case order: {sorted(ids)}")
        yield panel_record(panel.rubric, panel.jury, records, identity)


def _write_panel(panel: Panel, paths: list[Path], output: Path) -> None:
    tmp = output.with_name(output.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in panel_records(panel, paths):
            handle.write(record.model_dump_json() + "\n")
    os.replace(tmp, output)


def _summarise_panel(
    panel: Panel, paths: list[Path], output: Path, prices: tuple[float, float] | None, n_boot: int
) -> dict[str, Any]:
    records = [PanelRecord.model_validate(d) for _, d in scan_records(output)]
    summary = summarise(records, panel.rubric, prices)
    names = [j.name for j in panel.jury.jurors]
    labels = [
        [v["label"] if v["status"] == "ok" else None for v in r.panel["jurors"]] for r in records
    ]
    scores = [
        [v["score"] if v["status"] == "ok" else None for v in r.panel["jurors"]] for r in records
    ]
    summary["jury"] = {
        "rule": panel.jury.rule,
        "scores": panel.jury.scores,
        "min_votes": panel.jury.quorum,
        "combines": panel.rubric.behaviour.panel_combines,
        "outcomes": dict(sorted(Counter(r.panel["outcome"] for r in records).items())),
        "votes": dict(sorted(Counter(r.panel["votes"] for r in records).items())),
        "agreement": panel_agreement(labels, scores, names, n_boot=n_boot),
        "records": str(output),
    }
    return summary


def _juror_summary(summary: dict[str, Any], path: str) -> dict[str, Any]:
    keep = ("cases", "status", "scored", "mean_score", "tokens", "estimated_cost_usd", "cached")
    return {
        "records": path,
        "judge_models": summary.get("judge_models"),
        **{k: summary.get(k) for k in keep},
    }
