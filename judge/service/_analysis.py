"""Analysis routes of the grading service: bias probes and calibration against humans.

Both reuse the engine as the CLI does (`judge probe`, `judge calibrate`) and share the
request timeout.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from calibration.errors import CalibrationInputError
from calibration.io.jsonout import to_strict_json
from calibration.report.result import calibrate as calibrate_labels
from judge.errors import ApiError, UsageError
from judge.probes import ProbeOptions, run_probe
from judge.service._http import ERROR_RESPONSES, ServiceError
from judge.service._models import EXAMPLE_PAIR, CalibrateRequest, ErrorResponse, GradeRequest
from judge.service._state import ServiceState, check_cases, grade_limit

ProbeKind = Literal["position", "verbosity", "repeat", "injection"]
_ERR = {"model": ErrorResponse}
_TIMEOUTS: dict[int | str, dict[str, Any]] = {
    502: _ERR | {"description": "the judge failed"},
    504: _ERR | {"description": "timed out"},
}


class ProbeRequest(GradeRequest):
    """The grade body, plus how many times the repeat probe asks again."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"rubric": "pairwise@1", "cases": [EXAMPLE_PAIR]}]},
    )

    repeats: int = Field(default=5, ge=2, le=20)


class ProbeResponse(BaseModel):
    report: dict[str, Any]
    records: list[dict[str, Any]] | None = None


def analysis_routes(state: ServiceState) -> APIRouter:
    router = APIRouter(responses=ERROR_RESPONSES)
    _add_probe_route(router, state)

    @router.post(
        "/calibrate",
        response_model=dict[str, Any],
        responses=_TIMEOUTS | {409: _ERR | {"description": "judge_job has not finished"}},
        tags=["calibration"],
    )
    async def calibrate(body: CalibrateRequest) -> dict[str, Any]:
        """Agreement of judge labels (or a done job's records) with human labels: kappa,
        confusion matrix, intervals and readiness, as `judge calibrate` reports them."""
        timeout = state.config.limits.request_timeout_s
        with tempfile.TemporaryDirectory(dir=state.store.data_dir) as tmp:
            judge_path = _judge_labels(state, body, Path(tmp))
            human_path = Path(tmp) / "human.jsonl"
            _write_rows(human_path, body.human_labels)
            try:
                work = asyncio.to_thread(_calibrate, body, judge_path, human_path)
                return await asyncio.wait_for(work, timeout)
            except CalibrationInputError as exc:
                raise ServiceError(422, "invalid_labels", exc.reason) from None
            except TimeoutError:
                raise ServiceError(504, "timeout", f"over {timeout:g} s") from None

    return router


def _add_probe_route(router: APIRouter, state: ServiceState) -> None:
    @router.post(
        "/probes/{kind}", response_model=ProbeResponse, responses=_TIMEOUTS, tags=["probes"]
    )
    async def probe(kind: ProbeKind, body: ProbeRequest) -> ProbeResponse:
        """Run a bias probe (position needs a pairwise rubric) over a small list of cases."""
        grade_limit(state, body.cases)
        rubric, judge = state.pick(body.rubric, body.judge)
        cases = check_cases(body.cases, rubric)
        grader = state.pool.grader(judge, rubric)
        timeout = state.config.limits.request_timeout_s
        options = ProbeOptions(repeats=body.repeats, judge_model=state.config.spec(judge).model)
        try:
            result = await asyncio.wait_for(run_probe(kind, grader, cases, options), timeout)
        except UsageError as exc:
            raise ServiceError(422, "invalid_request", str(exc), field="rubric") from None
        except TimeoutError:
            raise ServiceError(504, "timeout", f"over {timeout:g} s") from None
        except ApiError as exc:
            raise ServiceError(502, "judge_error", state.redact(str(exc))) from None
        records = None
        if result.records is not None:
            records = [r.model_dump(mode="json") for r in result.records]
        return ProbeResponse(report=to_strict_json(result.report), records=records)


def _judge_labels(state: ServiceState, body: CalibrateRequest, tmp: Path) -> Path:
    if (body.judge_job is None) == (body.judge_labels is None):
        raise ServiceError(
            422,
            "invalid_request",
            "give judge_labels or judge_job (one of them)",
            field="judge_labels",
        )
    if body.judge_job is not None:
        job = state.store.get(body.judge_job)
        if job is None:
            raise ServiceError(
                422, "invalid_request", f"no job {body.judge_job!r}", field="judge_job"
            )
        if job.status != "done":
            raise ServiceError(409, "job_not_done", f"job {job.id} is {job.status}, not done")
        return state.store.records_file(job, tmp)
    path = tmp / "judge.jsonl"
    _write_rows(path, body.judge_labels or [])
    return path


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    lines: Iterator[str] = (json.dumps(r, default=str) + "\n" for r in rows)
    with path.open("w", encoding="utf-8") as handle:
        handle.writelines(lines)


def _calibrate(body: CalibrateRequest, judge_path: Path, human_path: Path) -> dict[str, Any]:

    result = calibrate_labels(
        judge_path,
        human_path,
        judge_field=body.judge_field,
        human_field=body.human_field,
        weights=body.weights,
        group_field=body.group_field,
        slice_field=body.slice_field,
        n_bootstrap=body.n_bootstrap,
        seed=body.seed,
    )
    return to_strict_json(_drop_paths(result))


def _drop_paths(result: dict[str, Any]) -> dict[str, Any]:
    """Server-side file names (temporary files, the data dir) are not the client's business."""
    settings = {
        k: v for k, v in result.get("settings", {}).items() if k not in ("judge_file", "human_file")
    }
    return {**result, "settings": settings}
