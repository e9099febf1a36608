"""Submitting a job: validate the body or upload in full, store it, create the job.

An upload is held to exactly what `judge grade` accepts in a file and to the field limits of
/v1/grade (CaseIn); whatever goes wrong while reading it is a JSON error naming the line, not
a dropped connection. The stored input's sha256 goes into the job, and the job's manifest
(job.json) into its folder before the index row, so the index can be rebuilt from folders.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Request
from pydantic import ValidationError

from calibration.io.jsontext import TOO_DEEP, text_too_deep
from judge.engine.atomic import open_private
from judge.engine.inputs import iter_rows, validate_file
from judge.engine.measure.human_labels import (
    HumanLabels,
    human_labels_from_rows,
    human_labels_from_text,
)
from judge.errors import InputError
from judge.rubric import Rubric
from judge.schemas import Case
from judge.service._diskfull import DISK_FULL, is_disk_full
from judge.service._http import ServiceError, field_name, validation_error
from judge.service._models import CaseIn, JobRequest
from judge.service._state import ServiceState, check_cases
from judge.service._store import (
    HUMAN_LABELS,
    INCOMING,
    Job,
    discard_folder,
    new_job_id,
)

log = logging.getLogger(__name__)

JSON_TYPES = ("application/json",)  # a body must say it is JSON (judge.web.guard)
UPLOAD_TYPES = {
    "application/x-ndjson": "cases.jsonl",
    "application/jsonl": "cases.jsonl",
    "application/json-lines": "cases.jsonl",
    "text/csv": "cases.csv",
}
MAX_PROBLEMS = 20
HUMAN_LABELS_FIELD = "human_labels"


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


async def submit_json(state: ServiceState, request: Request, key: str | None) -> Job:
    body = await request.body()
    digest = hashlib.sha256(b"json\0" + body).hexdigest()
    if (job := _replay(state, key, digest)) is not None:
        return job
    if await asyncio.to_thread(text_too_deep, body):  # before any parser sees it
        raise ServiceError(422, "invalid_input", f"the body's JSON is {TOO_DEEP}", field="body")
    try:
        parsed = await asyncio.to_thread(JobRequest.model_validate_json, body)
    except ValidationError as exc:
        raise validation_error([{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]) from None
    limit = state.config.limits.job_cases
    if len(parsed.cases) > limit:
        raise ServiceError(413, "too_many_cases", f"at most {limit} cases per job", field="cases")
    rubric, judge = state.pick(parsed.rubric, parsed.judge)

    cases = await asyncio.to_thread(check_cases, parsed.cases, rubric)
    labels = None
    if parsed.human_labels is not None:
        labels = await asyncio.to_thread(_human_labels, parsed.human_labels, rubric, cases)
    folder = _incoming(state)
    with storing(folder):
        lines = (json.dumps(item.row(), ensure_ascii=False) + "\n" for item in parsed.cases)
        checksum = await asyncio.to_thread(_write_lines, folder / "cases.jsonl", lines)
        if labels is not None:
            with open_private(folder / HUMAN_LABELS) as handle:
                handle.write(labels.as_jsonl().encode("utf-8"))
        stored = Stored(folder, "cases.jsonl", len(parsed.cases), checksum)
        return await _create(state, stored, rubric, judge, key, digest)


async def submit_upload(
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
        content = hashlib.sha256()
        with open_private(folder / name) as handle:
            async for chunk in request.stream():
                hasher.update(chunk)
                content.update(chunk)
                handle.write(chunk)
        digest = hasher.hexdigest()
        if (job := _replay(state, key, digest)) is not None:
            discard_folder(folder)
            return job
        count = await _validate_upload(state, folder / name, rubric)
    except BaseException as exc:
        discard_folder(folder)
        if is_disk_full(exc):
            raise _no_space(exc) from None
        raise
    with storing(folder):
        stored = Stored(folder, name, count, content.hexdigest())
        return await _create(state, stored, rubric, judge, key, digest)


async def _validate_upload(state: ServiceState, path: Path, rubric: Rubric) -> int:
    """Validate an upload as `judge grade` does a file, then hold each case to the field
    limits of /v1/grade (CaseIn); any failure is a JSON error naming the line."""
    try:
        validated = await asyncio.to_thread(validate_file, path, rubric)
        await asyncio.to_thread(_check_field_limits, path)
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
            problems=problems[:MAX_PROBLEMS],
        ) from None
    except RecursionError:
        message = "the upload nests JSON too deeply to read"
        raise ServiceError(422, "invalid_input", message, field="body") from None
    except Exception as exc:  # whatever it was, the client gets a JSON answer
        log.exception("validating an upload failed")
        message = f"the upload could not be validated ({type(exc).__name__})"
        raise ServiceError(500, "internal_error", message) from None
    limit = state.config.limits.job_cases
    if validated.count > limit:
        raise ServiceError(413, "too_many_cases", f"at most {limit} cases per job", field="body")
    return validated.count


def _human_labels(
    given: list[dict[str, Any]] | str, rubric: Rubric, cases: list[Case]
) -> HumanLabels:
    """The request's human labels, checked as `judge grade --human-labels` checks a file
    (a label file, the rubric's labels, ids among the cases); a 422 lists the problems."""
    try:
        if isinstance(given, str):
            labels = human_labels_from_text(given, source=HUMAN_LABELS_FIELD)
        else:
            labels = human_labels_from_rows(given, source=HUMAN_LABELS_FIELD)
        labels.check(rubric, (case.id for case in cases))
    except InputError as exc:
        as_text = isinstance(given, str)
        problems = [_problem(line, cid, msg, as_text) for line, cid, msg in exc.problems]
        raise ServiceError(
            422,
            "invalid_labels",
            problems[0],
            field=HUMAN_LABELS_FIELD,
            problems=problems[:MAX_PROBLEMS],
        ) from None
    return labels


def _problem(line: int | None, case_id: str | None, message: str, as_text: bool) -> str:
    """`human_labels[3] (id 'x'): ...` for a row (0-based, as in the request), `human_labels
    line 4` for a line of a file's text."""
    where = HUMAN_LABELS_FIELD
    if line is not None:
        where += f" line {line}" if as_text else f"[{line - 1}]"
    return where + f" (id {case_id!r})" * bool(case_id) + f": {message}"


def _check_field_limits(path: Path) -> None:
    """InputError listing each row over a /v1/grade field limit (text length, list sizes)."""
    problems: list[tuple[int | None, str | None, str]] = []
    for number, row in iter_rows(path):
        if not isinstance(row, dict):
            continue  # validate_file has already accepted every row
        try:
            CaseIn.model_validate(row)
        except ValidationError as exc:
            case_id = str(row.get("id")) if row.get("id") not in (None, "") else None
            for error in exc.errors()[:4]:
                problems.append((number, case_id, f"{field_name(error['loc'])}: {error['msg']}"))
        if len(problems) >= MAX_PROBLEMS:
            break
    if problems:
        raise InputError(str(path), problems[:MAX_PROBLEMS])


def _incoming(state: ServiceState) -> Path:
    try:
        return Path(tempfile.mkdtemp(prefix=INCOMING, dir=state.store.jobs_dir))
    except OSError as exc:
        if is_disk_full(exc):
            raise _no_space(exc) from None
        raise


def _no_space(exc: BaseException) -> ServiceError:
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return ServiceError(
        507,
        "insufficient_storage",
        f"{DISK_FULL} ({detail}): the job was not stored; free some space and submit again",
    )


@contextmanager
def storing(folder: Path) -> Iterator[None]:
    """Storing a submission in its hidden `folder`: on any failure the folder goes (no
    `.incoming-*` is left), and a full disk is a 507 that says so."""
    try:
        yield
    except BaseException as exc:
        if folder.exists():
            discard_folder(folder)
        if is_disk_full(exc):
            raise _no_space(exc) from None
        raise


def _write_lines(path: Path, lines: Iterator[str]) -> str:
    """Write `lines`; returns the sha256 of the bytes written."""
    digest = hashlib.sha256()
    with open_private(path) as handle:
        for line in lines:
            data = line.encode("utf-8")
            digest.update(data)
            handle.write(data)
    return digest.hexdigest()


@dataclass(frozen=True)
class Stored:
    """A validated input in its (still hidden) folder: file name, case count, sha256."""

    folder: Path
    input_name: str
    total: int
    sha256: str


async def _create(
    state: ServiceState,
    stored: Stored,
    rubric: Rubric,
    judge: str,
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
        input_name=stored.input_name,
        total=stored.total,
        done=0,
        summary=None,
        error=None,
        idempotency_key=key,
        request_sha256=digest,
        created_at=now,
        updated_at=now,
        input_sha256=stored.sha256,
    )
    if state.store.shared:  # a database other replicas poll: the upload's rows go off the
        # loop, and a client gone meanwhile does not undo a job they may already grade
        work = asyncio.to_thread(state.store.admit, job, stored.folder)
        created = await asyncio.shield(work)
    else:
        created = state.store.admit(job, stored.folder)
    if created is None:  # a concurrent retry with the same key won (the folder is gone)
        existing = _replay(state, key, digest) if key else None
        if existing is None:
            raise ServiceError(409, "conflict", "the job could not be created; retry")
        return existing
    state.jobs().start(job.id)
    return job
