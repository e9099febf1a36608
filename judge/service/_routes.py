"""Job routes of the grading service.

POST /v1/jobs takes the grade body as JSON, or the answer set itself as a JSONL (or CSV)
upload with `?rubric=ID[@VERSION]&judge=NAME`, validates it in full like `judge grade`
does a file (service_upload), stores it under the data dir and answers 202 with the job id
at once. GET /v1/jobs lists jobs (newest first, by status, a page at a time); GET of one
job answers its status and, once done, the records; DELETE cancels a queued or running job
(a finished job has nothing to cancel: 409, and it is left as it is).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, StreamingResponse

from judge.service._http import ERROR_RESPONSES, ServiceError, json_errors
from judge.service._models import (
    NAME,
    RUBRIC_REF,
    ErrorResponse,
    JobCreated,
    JobList,
    JobState,
    JobStatusName,
    Progress,
)
from judge.service._state import ServiceState
from judge.service._store import Job
from judge.service._upload import JSON_TYPES, UPLOAD_TYPES, submit_json, submit_upload

PAGE, MAX_PAGE = 50, 500
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

    @router.get("/jobs", response_model=JobList)
    async def listing(
        status: JobStatusName | None = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = PAGE,
        before: Annotated[str | None, Query(max_length=64)] = None,
    ) -> JobList:
        """Jobs newest first, `limit` a page (of one `status` if given); pass the answer's
        `next` as `before` for the next page."""
        after = find_job(state, before, field="before") if before is not None else None
        jobs = state.store.listing(status=status, limit=limit + 1, before=after)
        page = [_state(state, job) for job in jobs[:limit]]
        return JobList(jobs=page, next=page[-1].id if len(jobs) > limit else None)

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
            chunks = state.store.open_records(job)
        except OSError:
            raise ServiceError(
                500,
                "records_missing",
                f"job {job.id} is done but its records file is missing from the data dir",
            ) from None
        return JSONLResponse(chunks)

    @router.delete(
        "/jobs/{job_id}",
        response_model=JobState,
        responses={404: _ERR, 409: _ERR | {"description": "the job has already finished"}},
    )
    async def cancel(job_id: JobId) -> JobState:
        """Cancel a queued or running job: it ends `cancelled`, its finished records kept.
        A job that has already finished (done, failed, cancelled) is 409, left as it is."""
        job = find_job(state, job_id)
        if job.status not in ("queued", "running"):
            raise ServiceError(
                409,
                "job_finished",
                f"job {job.id} is {job.status}: only a queued or running job can be cancelled",
            )
        await state.jobs().cancel(job.id)
        return _state(state, find_job(state, job_id))

    return router


def find_job(state: ServiceState, job_id: str, *, field: str | None = None) -> Job:
    """The job, or 404 (422 naming `field` when the id came in a query parameter)."""
    job = state.store.get(job_id)
    if job is None:
        if field is not None:
            raise ServiceError(422, "invalid_request", f"no job {job_id!r}", field=field)
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
