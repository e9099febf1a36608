"""Grading with `--engine ray [--ray-address ADDR] [--ray-actors N]`: what it
cannot be combined with, and the call into judge.engines.ray (loaded, with Ray, only when
`--engine ray` is given)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.app.edge import note
from judge.app.selection import selection_from_args
from judge.config import JudgeConfig
from judge.errors import UsageError
from judge.rubric import Rubric

if TYPE_CHECKING:
    from judge.app.requests import GradeRequest
    from judge.engine.measure.human_labels import HumanLabels


def check_engine_options(request: GradeRequest, refs: Sequence[str]) -> None:
    """UsageError (exit 2) before anything is read or sent, for what --engine ray does not
    do: a jury, several rubrics in one pass, the batch forms; and Ray options without it."""
    if request.engine != "ray":
        for flag, value in (
            ("--ray-address", request.ray_address),
            ("--ray-actors", request.ray_actors),
        ):
            if value is not None:
                raise UsageError(f"{flag} needs --engine ray")
        return
    if request.ray_actors is not None and request.ray_actors < 1:
        raise UsageError(f"--ray-actors must be at least 1, got {request.ray_actors}")
    if request.jury is not None:
        raise UsageError("--engine ray grades with one judge; --jury runs locally")
    if len(refs) > 1:
        raise UsageError("--engine ray grades one rubric a run; run it once per rubric")
    batch = [
        flag
        for flag, on in (
            ("--batch-api", request.batch_api),
            ("--export-batch", request.export_batch),
            ("--import-batch", request.import_batch),
        )
        if on
    ]
    if batch:
        raise UsageError(f"--engine ray and {batch[0]} are two ways to scale out: pick one")


def grade_on_ray(
    config: JudgeConfig,
    rubric: Rubric,
    input_path: Path,
    output: Path,
    request: GradeRequest,
    prices: tuple[float, float] | None,
    labels: HumanLabels | None,
) -> dict[str, Any]:
    """The summary of a `--engine ray` run (judge.engines.ray.grade_file)."""
    from judge.engines.ray import DEFAULT_ACTORS, grade_file

    summary = grade_file(
        config,
        rubric,
        input_path,
        output,
        selection=selection_from_args(request),
        overwrite=request.overwrite,
        use_cache=config.use_cache,
        actors=request.ray_actors or DEFAULT_ACTORS,
        address=request.ray_address,
        prices=prices,
        human_labels=labels,
    )
    run = summary["run"]
    note(f"ray: graded {run['graded']}, sent {run['sent']} request(s)")
    return summary
