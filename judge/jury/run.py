"""Grade a file with a jury: every juror as a single judge, then the panel's records.

Each juror is a `Grader` of its own (its backend, its concurrency; the cache shared, keyed
by each juror's identity) running `judge.engine.files.grade_file` into
`OUT/jurors/<name>.jsonl`: the same rendered prompt, cache, retries, parsing, repair and
resume as a single judge, so a juror's file is a single judge's file. The jurors run
concurrently, each within its own concurrency. When every juror is done, the panel's
records are built from the jurors' files (one per case, input order) and written to
`OUT/<rubric>.jsonl` by an atomic rewrite; a rerun re-reads the jurors' files (none of
their answered cases is asked again) and rebuilds the panel's. In `mode: cyclic` each
juror grades only its share (`judge.jury.plan`), and the panel's file holds the cases
this run selected.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections import Counter
from collections.abc import Coroutine, Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from calibration.agreement.panel import panel_agreement
from judge.api import make_backend, open_cache
from judge.config import JudgeConfig, endpoint_of, is_openai
from judge.engine.files import Selection, grade_file
from judge.engine.grader import Grader
from judge.engine.identity import describe_identity
from judge.engine.inputs import iter_cases, validate_file
from judge.engine.records import KEEP_STATUSES, check_resumable, scan_records
from judge.engine.summary import summarise
from judge.errors import ApiError, OutputConflictError, UsageError
from judge.jury.config import Juror, Jury, juror_config
from judge.jury.costs import Prices, juror_prices, panel_cost
from judge.jury.escalate import check_escalation, escalations
from judge.jury.humans import against_humans
from judge.jury.pairwise import (
    both_orders,
    resolved_stream,
    swapped_input,
    swapped_path,
    write_swapped,
)
from judge.jury.plan import Plan, cyclic_plan, escalation_plan
from judge.jury.records import PanelRecord, panel_identity, panel_record
from judge.rubric import Rubric
from judge.schemas import GradedRecord

if TYPE_CHECKING:
    from judge.client import AsyncHttpClient
    from judge.engine.measure.human_labels import HumanLabels

T = TypeVar("T")


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
    prices: Prices | list[Prices] = None,
    n_boot: int = 1000,
    human_labels: HumanLabels | None = None,
    retry_failed: bool = False,
) -> dict[str, Any]:
    """Grade `input_path` with every juror, then write the panel's records to
    `out_dir/<rubric>.jsonl`; the panel's summary, with `jury` (each juror's summary, the
    panel's outcomes and `agreement`: calibration.agreement.panel). The input (and the
    `human_labels`, against it) is validated before any juror is asked anything; with
    labels, `jury.vs_humans` compares every juror and the panel with people
    (judge.jury.humans). In `mode: cyclic` each juror grades its share of the cases
    (judge.jury.plan) and the agreement is measured on the overlap; in `mode: escalate`
    the first juror grades every case and the others the ones it is unsure of
    (judge.jury.escalate), after it. A pairwise rubric's jurors judge both orders
    (judge.jury.pairwise). `prices` (USD per
    million prompt and completion tokens: one pair for every juror, or one per juror)
    price the jurors that give no `price` of their own; `jury.cost` says what each juror
    and the panel spent.

    A rerun sends nothing for a case a juror has answered: its `ok` and `abstained`
    records are kept, as a single judge's, and so are its `parse_error` records (the
    juror did answer, and a panel's vote must not change with how often it is rerun);
    `retry_failed` asks the parse errors again. `api_error` cases (no answer came) are
    asked again on every rerun."""
    names = [j.name for j in panel.jury.jurors]
    mode = panel.jury.mode
    if mode == "cascade":  # no panel votes there: judge.engine.cascade grades it
        raise UsageError(
            "a jury of mode: cascade grades under a certificate: judge grade --jury JURY.yaml "
            "--certificate CERT.json"
        )
    if mode == "escalate":
        check_escalation(panel.jury.escalation, panel.rubric)
    validated = await asyncio.to_thread(validate_file, input_path, [panel.rubric])
    if human_labels is not None:
        ids = (c.id for c in iter_cases(input_path))
        await asyncio.to_thread(human_labels.check, panel.rubric, ids)
    chosen = selection or Selection()
    indices = chosen.indices(validated.count)
    case_ids = [] if mode == "full" else await asyncio.to_thread(_ids, input_path)
    pairwise = panel.rubric.behaviour.compares_two
    files = [juror_files(out_dir, n, pairwise=pairwise) for n in names]
    if overwrite:
        for path in (p for f in files for p in f.paths):
            path.unlink(missing_ok=True)
    keep = KEEP_STATUSES if retry_failed else (*KEEP_STATUSES, "parse_error")
    for grader, f in zip(panel.graders, files, strict=True):  # all before any is asked
        for path in f.paths:
            await asyncio.to_thread(_check_resumable, grader, path, keep)
    if pairwise:
        await asyncio.to_thread(
            write_swapped, input_path, swapped_input(out_dir), panel.rubric.behaviour
        )
    priced = juror_prices(panel.jury, prices)

    async def order(number: int, share: Selection, source: Path, path: Path) -> dict[str, Any]:
        try:
            return await grade_file(
                panel.graders[number],
                source,
                path,
                selection=share,
                use_cache=use_cache,
                prices=priced[number],
                keep=keep,
            )
        except ApiError as exc:
            raise naming(exc, panel.jury.jurors[number], panel.graders[number]) from exc

    async def one(number: int, share: Selection) -> dict[str, Any]:
        """A juror's grading: of the input, and (pairwise) of the swapped input after."""
        own = files[number]
        summary = await order(number, share, input_path, own.records)
        if own.swapped is None:
            return summary
        swapped = await order(number, share, swapped_input(out_dir), own.swapped)
        return both_orders(summary, swapped)

    plan: Plan | None = None
    if mode == "full":
        summaries = await all_jurors([one(n, chosen) for n in range(len(names))])
    elif mode == "cyclic":
        plan = cyclic_plan(case_ids, indices, len(names), panel.jury.overlap_share)
        summaries = await all_jurors(
            [one(n, Selection(only=plan.share(n))) for n in range(len(names))]
        )
    else:  # escalate: the first juror, then the rest where it is unsure
        first = await one(0, chosen)
        why = await asyncio.to_thread(_escalated, panel, files[0], case_ids, indices)
        plan = escalation_plan(case_ids, indices, len(names), why)
        rest = [one(n, Selection(only=plan.share(n))) for n in range(1, len(names))]
        summaries = [first, *await all_jurors(rest)]
    output = out_dir / f"{panel.rubric.id}.jsonl"
    await asyncio.to_thread(_write_panel, panel, files, output, plan)
    summary = await asyncio.to_thread(_summarise_panel, panel, output, None, n_boot)
    summary["jury"]["jurors"] = {
        name: _juror_summary(s, f) for name, s, f in zip(names, summaries, files, strict=True)
    }
    summary["jury"]["cost"] = panel_cost(names, summaries, priced, summary["cases"])
    summary["estimated_cost_usd"] = summary["jury"]["cost"]["total_usd"]
    if plan is not None:
        summary["jury"]["graded_by"] = {name: len(plan.share(n)) for n, name in enumerate(names)}
    if mode == "escalate":
        assert plan is not None
        reasons = Counter(why.split(":")[0] for why in plan.why.values())
        summary["jury"]["escalated"] = {
            "cases": len(plan.whole),
            "of": len(plan.cases),
            "why": dict(sorted(reasons.items())),
        }
    if human_labels is not None:
        vs = partial(_vs_humans, panel, output, human_labels, summaries, summary, n_boot)
        summary["jury"]["vs_humans"] = await asyncio.to_thread(vs)
    return summary


def _vs_humans(
    panel: Panel,
    output: Path,
    human_labels: HumanLabels,
    summaries: list[dict[str, Any]],
    summary: dict[str, Any],
    n_boot: int,
) -> dict[str, Any]:
    """`jury.vs_humans` (judge.jury.humans): every juror and the panel on every labelled
    case (`full`); on the overlap, where every juror voted (`cyclic`); the escalating
    panel against its first juror alone on every labelled case (`escalate`: does asking
    the others pay?)."""
    names = [j.name for j in panel.jury.jurors]
    mode = panel.jury.mode
    records = [PanelRecord.model_validate(d) for _, d in scan_records(output)]
    if mode == "cyclic":
        records = [r for r in records if len(r.panel["jurors"]) == len(names)]
    result = against_humans(
        records,
        panel.rubric,
        human_labels,
        tokens={n: _per_case(s) for n, s in zip(names, summaries, strict=True)},
        panel_tokens=_per_case(summary),
        n_bootstrap=n_boot,
        jurors=names[:1] if mode == "escalate" else None,
    )
    if mode != "full":
        result["on"] = "overlap" if mode == "cyclic" else "every case, against the first juror"
    return result


def _ids(input_path: Path) -> list[str]:
    return [case.id for case in iter_cases(input_path)]


def _escalated(
    panel: Panel, first: JurorFiles, case_ids: list[str], indices: set[int] | None
) -> dict[str, str]:
    wanted = set(case_ids) if indices is None else {case_ids[i] for i in indices}
    records = (record.model_dump(mode="json") for record, _ in first.stream())
    return escalations(records, wanted, panel.rubric, panel.jury.escalation)


def _per_case(summary: dict[str, Any]) -> float:
    """A juror's tokens per case it graded."""
    tokens = summary["tokens"]["prompt"] + summary["tokens"]["completion"]
    return tokens / summary["cases"] if summary["cases"] else 0.0


def _check_resumable(grader: Grader, path: Path, keep: tuple[str, ...]) -> None:
    """`check_resumable` for a juror's file; where only its kept parse errors stand in
    the way (another juror setting, such as a raised max_tokens), the way out is
    `--retry-failed`, which asks those cases again."""
    check = partial(
        check_resumable,
        path,
        rubric_sha256=grader.rubric.sha256,
        rubric_ref=grader.rubric.ref,
        judge_id=grader.judge_id,
        judge=describe_identity(grader.identity),
        identity=grader.identity,
    )
    try:
        check(keep=keep)
    except OutputConflictError as exc:
        if keep == KEEP_STATUSES:
            raise
        try:
            check(keep=KEEP_STATUSES)
        except OutputConflictError:
            raise exc from None
        message = f"{exc}; or pass --retry-failed to ask its failed cases again"
        raise OutputConflictError(message, rerun="--retry-failed") from None


def naming(exc: ApiError, juror: Juror, grader: Grader) -> ApiError:
    """The same error, its message saying which juror it was: its model, its endpoint (the
    grader's, so a juror with no base_url of its own names the one it used) and its key
    variable; `endpoint` set, so the command line names that endpoint and not its own."""
    named = copy.copy(exc)
    endpoint = grader.identity.get("endpoint") or endpoint_of(juror.base_url)
    if juror.api_key_env:
        key = f"api_key_env ${juror.api_key_env}"
    elif is_openai(endpoint):
        key = "no api_key_env, so the command line's key: $OPENAI_API_KEY"
    else:
        key = "no api_key_env, so no key was sent (name one with api_key_env)"
    named.args = (f"juror {juror.name!r} ({juror.model}, base_url {endpoint}, {key}): {exc}",)
    named.endpoint = endpoint
    return named


async def all_jurors(jobs: list[Coroutine[Any, Any, T]]) -> list[T]:
    """Run the jurors together; the first error (a fatal judge error) cancels the rest."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(job) for job in jobs]
    except* Exception as failures:
        raise failures.exceptions[0] from None
    return [t.result() for t in tasks]


def panel_records(
    panel: Panel, files: list[JurorFiles], plan: Plan | None = None
) -> Iterator[PanelRecord]:
    """The panel's record of each case, from the jurors' finished files (input order):
    every case of the jurors' files, or, with a `plan` (cyclic, escalate), its cases,
    each from the jurors it names. A pairwise juror's vote is its two orders' resolution
    (judge.jury.pairwise)."""
    identity = panel.identity
    if plan is not None:
        readers = [_Reader(f) for f in files]
        for _, case_id, members in plan:
            found = [readers[n].get(case_id) for n in members]
            whole = len(members) == plan.k
            extra = (
                {"overlap": whole}
                if panel.jury.mode == "cyclic"
                else {"escalated": plan.why.get(case_id)}
            )
            yield panel_record(
                panel.rubric,
                panel.jury,
                [r for r, _ in found],
                identity,
                members=members,
                extra=extra,
                notes=[n for _, n in found],
            )
        return
    for row in zip(*(f.stream() for f in files), strict=True):
        ids = {r.id for r, _ in row}
        if len(ids) != 1:
            raise UsageError(f"the jurors' files disagree on the case order: {sorted(ids)}")
        records = [r for r, _ in row]
        notes = [n for _, n in row]
        yield panel_record(panel.rubric, panel.jury, records, identity, notes=notes)


Found = tuple[GradedRecord, dict[str, Any] | None]


@dataclass(frozen=True)
class JurorFiles:
    """A juror's records file, and (pairwise) its file with the answers swapped."""

    records: Path
    swapped: Path | None = None

    @property
    def paths(self) -> list[Path]:
        return [self.records] if self.swapped is None else [self.records, self.swapped]

    def stream(self) -> Iterator[Found]:
        """The juror's records in file order, each with its note (pairwise: the orders)."""
        if self.swapped is not None:
            yield from resolved_stream(self.records, self.swapped)
            return
        for _, data in scan_records(self.records):
            yield GradedRecord.model_validate(data), None


def juror_files(out_dir: Path, name: str, *, pairwise: bool = False) -> JurorFiles:
    swapped = swapped_path(out_dir, name) if pairwise else None
    return JurorFiles(juror_path(out_dir, name), swapped)


class _Reader:
    """A juror's finished files, read forward: its records are in input order, so the
    plan's cases are found in one pass (the records of cases it skips are passed over)."""

    def __init__(self, files: JurorFiles) -> None:
        self.path = files.records
        self._records = files.stream()

    def get(self, case_id: str) -> Found:
        for record, note in self._records:
            if record.id == case_id:
                return record, note
        raise UsageError(f"{self.path}: no record of case {case_id!r}, which it was to grade")


def _write_panel(panel: Panel, files: list[JurorFiles], output: Path, plan: Plan | None) -> None:
    tmp = output.with_name(output.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in panel_records(panel, files, plan):
            handle.write(record.model_dump_json() + "\n")
    os.replace(tmp, output)


def _summarise_panel(
    panel: Panel, output: Path, prices: tuple[float, float] | None, n_boot: int
) -> dict[str, Any]:
    records = [PanelRecord.model_validate(d) for _, d in scan_records(output)]
    summary = summarise(records, panel.rubric, prices)
    names = [j.name for j in panel.jury.jurors]
    whole = [r for r in records if len(r.panel["jurors"]) == len(names)]
    labels = [
        [v["label"] if v["status"] == "ok" else None for v in r.panel["jurors"]] for r in whole
    ]
    scores = [
        [v["score"] if v["status"] == "ok" else None for v in r.panel["jurors"]] for r in whole
    ]
    summary["jury"] = {
        "mode": panel.jury.mode,
        "rule": panel.jury.rule,
        "scores": panel.jury.scores,
        "min_votes": panel.jury.quorum,
        "combines": panel.rubric.behaviour.panel_combines,
        "outcomes": dict(sorted(Counter(r.panel["outcome"] for r in records).items())),
        "votes": dict(sorted(Counter(r.panel["votes"] for r in records).items())),
        "agreement": panel_agreement(labels, scores, names, n_boot=n_boot),
        "records": str(output),
    }
    if panel.jury.mode == "cyclic":  # the agreement's cases are the overlap's
        summary["jury"]["overlap"] = {"cases": len(whole), "of": len(records)}
    return summary


def _juror_summary(summary: dict[str, Any], files: JurorFiles) -> dict[str, Any]:
    keep = (
        "cases",
        "status",
        "scored",
        "mean_score",
        "tokens",
        "estimated_cost_usd",
        "cached",
        "run",
    )
    return {
        "records": str(files.records),
        **({"swapped_records": str(files.swapped)} if files.swapped else {}),
        "judge_models": summary.get("judge_models"),
        **{k: summary.get(k) for k in keep},
        **{k: summary[k] for k in ("requests", "orders") if k in summary},
    }
