"""Job routes of the grading service.

POST /v1/jobs takes the grade body as JSON, or the answer set itself as a JSONL (or CSV)
upload with `?rubric=ID[@VERSION]&judge=NAME`, validates it in full like `judge grade`
does a file (service_upload), stores it under the data dir and answers 202 with the job id
at once. GET answers status and, once done, the records; DELETE cancels.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, BinaryIO

from fastapi import APIRouter, Header, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, StreamingResponse

from judge.service._http import ERROR_RESPONSES, ServiceError, json_errors
from judge.service._models import (
    NAME,
    RUBRIC_REF,
    ErrorResponse,
    JobCreated,
    JobState,
    Progress,
)
from judge.service._state import ServiceState
from judge.service._store import Job
from judge.service._upload import JSON_TYPES, UPLOAD_TYPES, submit_json, submit_upload

CHUNK = 1 << 16
JobId = Annotated[str, PathParam(max_length=64)]
_UPLOAD_BODY = {
    "required": True,
    "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/JobRequest"}},
        "application/x-ndjson": {
            "schema": {"type": "string", "description": "one case a line; ?rubric= required"}
        },
    },
}
_ERR = {"model": ErrorResponse}


class JSONLResponse(StreamingResponse):
    media_type = "application/x-ndjson"


def job_routes(state: ServiceState) -> APIRouter:
    router = APIRouter(responses=ERROR_RESPONSES, tags=["jobs"])

    @router.post(
        "/jobs",
        status_code=202,
        response_model=JobCreated,
        openapi_extra={"requestBody": _UPLOAD_BODY},
        responses={
            409: _ERR | {"description": "Idempotency-Key reused with another body"},
            415: _ERR | {"description": "unsupported content type"},
        },
    )
    async def submit(
        request: Request,
        rubric: Annotated[str | None, Query(pattern=RUBRIC_REF)] = None,
        judge: Annotated[str | None, Query(pattern=NAME)] = None,
        idempotency_key: Annotated[str | None, Header(max_length=255)] = None,
    ) -> JSONResponse:
        """Start a background job: the grade body as JSON, or a JSONL upload with ?rubric=.
        With an `Idempotency-Key`, a retried submission returns the same job."""
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind in JSON_TYPES or kind.endswith("+json"):
            if rubric is not None or judge is not None:
                raise ServiceError(
                    422,
                    "invalid_request",
                    "a JSON body names rubric and judge itself",
                    field="rubric" if rubric is not None else "judge",
                )
            job = await submit_json(state, request, idempotency_key)
        elif kind in UPLOAD_TYPES:
            job = await submit_upload(state, request, kind, rubric, judge, idempotency_key)
        else:
            raise ServiceError(
                415,
                "unsupported_media_type",
                f"send application/json or {', '.join(UPLOAD_TYPES)}, not {kind!r}",
            )
        return JSONResponse({"id": job.id, "status": job.status}, status_code=202)

    @router.get("/jobs/{job_id}", response_model=JobState, responses={404: _ERR})
    async def status(job_id: JobId) -> JobState:
        """Status, progress and (once done) the summary."""
        return _state(state, find_job(state, job_id))

    @router.get(
        "/jobs/{job_id}/records",
        response_class=JSONLResponse,
        responses={
            200: {
                "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
                "description": "one record per case, input order",
            },
            **json_errors(_404="no such job", _409="the job has not finished"),
        },
    )
    async def records(job_id: JobId) -> JSONLResponse:
        """The job's records as JSONL, one per case in input order, once it is done."""
        job = find_job(state, job_id)
        if job.status != "done":
            raise ServiceError(409, "job_not_done", f"job {job.id} is {job.status}, not done")
        try:  # opened now, so that a lost file is a JSON error, not a cut-off stream
            handle = state.store.records_path(job).open("rb")
        except OSError:
            raise ServiceError(
                500,
                "records_missing",
                f"job {job.id} is done but its records file is missing from the data dir",
            ) from None
        return JSONLResponse(_chunks(handle))

    @router.delete("/jobs/{job_id}", response_model=JobState, responses={404: _ERR})
    async def cancel(job_id: JobId) -> JobState:
        """Cancel a queued or running job (a finished job is left as it is)."""
        job = find_job(state, job_id)
        if job.status in ("queued", "running"):
            await state.jobs().cancel(job.id)
        return _state(state, find_job(state, job_id))

    return router


def find_job(state: ServiceState, job_id: str) -> Job:
    job = state.store.get(job_id)
    if job is None:
        raise ServiceError(404, "not_found", f"no job {job_id!r}")
    return job


def _state(state: ServiceState, job: Job) -> JobState:
    job = state.jobs().current(job)  # an end state a full disk kept out of the store
    done = state.jobs().progress(job) if job.status == "running" else job.done
    return JobState(
        id=job.id,
        status=job.status,  # type: ignore[arg-type]
        rubric=job.rubric,
        judge=job.judge,
        progress=Progress(done=done, total=job.total),
        summary=job.summary,
        error=job.error,
        created_at=job.created_at,
        updated_at=job.updated_at,
    )


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    with handle:
        while chunk := handle.read(CHUNK):
            yield chunk
