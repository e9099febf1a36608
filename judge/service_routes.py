"""Job routes of the grading service.

POST /v1/jobs takes the grade body as JSON, or the answer set itself as a JSONL (or CSV)
upload with `?rubric=ID[@VERSION]&judge=NAME`, validates it in full like `judge grade`
does a file, stores it under the data dir and answers 202 with the job id at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError

from judge.errors import InputError
from judge.inputs import validate_file
from judge.rubric import Rubric
from judge.service_http import ERROR_RESPONSES, ServiceError, json_errors, validation_error
from judge.service_jobs import Job, discard_folder, new_job_id
from judge.service_models import (
    JUDGE_NAME,
    RUBRIC_REF,
    ErrorResponse,
    GradeRequest,
    JobCreated,
    JobState,
    Progress,
)

if TYPE_CHECKING:
    from judge.service import ServiceState

JSON_TYPES = ("application/json", "")
UPLOAD_TYPES = {
    "application/x-ndjson": "cases.jsonl",
    "application/jsonl": "cases.jsonl",
    "application/json-lines": "cases.jsonl",
    "text/csv": "cases.csv",
}
CHUNK = 1 << 16
JobId = Annotated[str, PathParam(max_length=64)]
_UPLOAD_BODY = {
    "required": True,
    "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/GradeRequest"}},
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
        judge: Annotated[str | None, Query(pattern=JUDGE_NAME)] = None,
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
            job = await _submit_json(state, request, idempotency_key)
        elif kind in UPLOAD_TYPES:
            job = await _submit_upload(state, request, kind, rubric, judge, idempotency_key)
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
        return JSONLResponse(_chunks(state.store.records_path(job)))

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


def _chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            yield chunk


def _replay(state: ServiceState, key: str | None, digest: str) -> Job | None:
    """The job an earlier submission with this key made, if any (409 if the body differs)."""
    if key is None:
        return None
    job = state.store.by_key(key)
    if job is not None and job.request_sha256 != digest:
        raise ServiceError(
            409,
            "idempotency_conflict",
            "this Idempotency-Key was used with a different request",
            field="Idempotency-Key",
        )
    return job


async def _submit_json(state: ServiceState, request: Request, key: str | None) -> Job:
    body = await request.body()
    digest = hashlib.sha256(b"json\0" + body).hexdigest()
    if (job := _replay(state, key, digest)) is not None:
        return job
    try:
        parsed = await asyncio.to_thread(GradeRequest.model_validate_json, body)
    except ValidationError as exc:
        raise validation_error([{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]) from None
    limit = state.config.limits.job_cases
    if len(parsed.cases) > limit:
        raise ServiceError(413, "too_many_cases", f"at most {limit} cases per job", field="cases")
    rubric, judge = state.pick(parsed.rubric, parsed.judge)
    from judge.service import check_cases

    await asyncio.to_thread(check_cases, parsed.cases, rubric)
    folder = _incoming(state)
    lines = (json.dumps(item.row(), ensure_ascii=False) + "\n" for item in parsed.cases)
    await asyncio.to_thread(_write_lines, folder / "cases.jsonl", lines)
    return _create(state, folder, "cases.jsonl", rubric, judge, len(parsed.cases), key, digest)


async def _submit_upload(
    state: ServiceState,
    request: Request,
    kind: str,
    rubric_ref: str | None,
    judge_name: str | None,
    key: str | None,
) -> Job:
    if rubric_ref is None:
        raise ServiceError(422, "invalid_request", "an upload needs ?rubric=ID", field="rubric")
    rubric, judge = state.pick(rubric_ref, judge_name)
    folder = _incoming(state)
    name = UPLOAD_TYPES[kind]
    try:
        hasher = hashlib.sha256(f"{kind}\0{rubric.ref}\0{judge}\0".encode())
        with (folder / name).open("wb") as handle:
            async for chunk in request.stream():
                hasher.update(chunk)
                handle.write(chunk)
        digest = hasher.hexdigest()
        if (job := _replay(state, key, digest)) is not None:
            discard_folder(folder)
            return job
        count = await _validate_upload(state, folder / name, rubric)
    except BaseException:
        discard_folder(folder)
        raise
    return _create(state, folder, name, rubric, judge, count, key, digest)


async def _validate_upload(state: ServiceState, path: Path, rubric: Rubric) -> int:
    try:
        validated = await asyncio.to_thread(validate_file, path, rubric)
    except InputError as exc:
        problems = [
            f"line {line}" * (line is not None) + f" (id {cid!r})" * bool(cid) + f": {msg}"
            for line, cid, msg in exc.problems
        ]
        raise ServiceError(
            422,
            "invalid_input",
            problems[0].lstrip(": "),
            field="body",
            problems=problems[:20],
        ) from None
    limit = state.config.limits.job_cases
    if validated.count > limit:
        raise ServiceError(413, "too_many_cases", f"at most {limit} cases per job", field="body")
    return validated.count


def _incoming(state: ServiceState) -> Path:
    return Path(tempfile.mkdtemp(prefix=".incoming-", dir=state.store.jobs_dir))


def _write_lines(path: Path, lines: Iterator[str]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        handle.writelines(lines)


def _create(
    state: ServiceState,
    folder: Path,
    input_name: str,
    rubric: Rubric,
    judge: str,
    total: int,
    key: str | None,
    digest: str,
) -> Job:
    now = time.time()
    job = Job(
        id=new_job_id(),
        status="queued",
        rubric=rubric.ref,
        rubric_sha256=rubric.sha256,
        judge=judge,
        input_name=input_name,
        total=total,
        done=0,
        summary=None,
        error=None,
        idempotency_key=key,
        request_sha256=digest,
        created_at=now,
        updated_at=now,
    )
    folder.rename(state.store.folder(job.id))
    if state.store.create(job) is None:  # a concurrent retry with the same key won
        discard_folder(state.store.folder(job.id))
        existing = _replay(state, key, digest) if key else None
        if existing is None:
            raise ServiceError(409, "conflict", "the job could not be created; retry")
        return existing
    state.jobs().start(job.id)
    return job
