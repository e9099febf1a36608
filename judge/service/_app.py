"""The grading service (`judge serve`): an HTTP API over the same engine as the CLI.

    app = create_app(load_service_config(Path("service.yaml"), os.environ))
    uvicorn.run(app, host="127.0.0.1", port=8080)

Routes (OpenAPI at /docs): GET /healthz; GET /v1/judges; GET /v1/rubrics and
/v1/rubrics/{id}/{version}; POST /v1/grade; POST/GET/DELETE /v1/jobs (service_routes_jobs);
POST /v1/calibrate; the viewer's page over the jobs at / (judge.view.jobs). Grading goes
through `Grader` exactly as `judge grade` does, so records match the CLI's; jobs live in
folders indexed by SQLite (service_store) and resume after a restart (service_jobs), or,
with `database: postgresql://...`, in PostgreSQL, where any number of servers share them
chunk by chunk (service_stores, service_replicas).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Path
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi_offline import FastAPIOffline

from judge.config import Redactor
from judge.engine.cache import VerdictCache
from judge.engine.outcome import Backend
from judge.engine.pricing import prices_for
from judge.engine.summary import summarise
from judge.errors import ApiError, RubricError
from judge.rubric import Rubric
from judge.schemas import RUBRIC_ID, Case, GradedRecord
from judge.service._analysis import analysis_routes
from judge.service._http import (
    ERROR_RESPONSES,
    BearerAuth,
    BodyLimit,
    CatchAll,
    ServiceError,
    check_token,
    install_error_handlers,
)
from judge.service._jobs import JobRunner, JobStore
from judge.service._judges import JudgePool
from judge.service._metrics import metrics_routes
from judge.service._models import (
    GradeRequest,
    GradeResponse,
    Health,
    JobRequest,
    JudgeOut,
    RubricDetail,
    RubricOut,
)
from judge.service._routes import job_routes
from judge.service._state import ServiceState, check_cases, grade_limit
from judge.service._upload import UPLOAD_TYPES
from judge.service.config import ServiceConfig
from judge.service.stores import Runner, Store, open_store
from judge.view.jobs import job_routes as viewer_routes
from judge.web import RequestGuard
from judge.web.guard import JSON_TYPE

__all__ = ["create_app"]


def create_app(config: ServiceConfig, *, backends: Mapping[str, Backend] | None = None) -> FastAPI:
    """The FastAPI app for `config`; the job store opens now (rebuilding what its index
    lost), jobs resume on startup. `backends` replaces judges by name (tests)."""
    store = open_store(config)
    try:
        pool = JudgePool(config, backends=backends, cache=_shared_cache(store, config))
        pool.open_cache()  # a cache folder that cannot be used is refused now, in one line
    except BaseException:
        store.close()
        raise
    state = ServiceState(config=config, pool=pool, store=store, redact=Redactor(config.secrets()))

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        runner = _runner(state)
        state.runner = runner
        runner.resume()
        try:
            yield
        finally:
            await runner.stop()
            await state.pool.aclose()
            state.store.close()

    # /docs and /redoc from assets shipped in the fastapi-offline wheel (Swagger UI, ReDoc,
    # pinned by its version): no CDN, so the pages work offline and load nothing unpinned
    app = FastAPIOffline(
        title="LLM judge grading service",
        version="1",
        lifespan=lifespan,
        responses={500: ERROR_RESPONSES[500]},
        redirect_slashes=False,  # a redirect would echo the client's Host header back
    )
    app.state.service = state
    _document_choices(app, state)
    install_error_handlers(app)
    app.add_middleware(BodyLimit, limit_for=_limit_for(config))
    if config.token is not None:  # outside the body limit: no token, no reading
        app.add_middleware(BearerAuth, token=config.token.get_secret_value())
    # before the token and the body: a cross-site page or a rebound Host gets nothing
    app.add_middleware(RequestGuard, allowed_hosts=config.allowed_hosts, body_types=_body_types)
    app.add_middleware(CatchAll)
    app.include_router(_meta_routes(state))
    secured = [Depends(_auth(config))] if config.token is not None else []
    app.include_router(metrics_routes(state), dependencies=secured)
    for router in (_v1_routes(state), job_routes(state), analysis_routes(state)):
        app.include_router(router, prefix="/v1", dependencies=secured)
    # the viewer's page at / over the jobs (judge.view.jobs): behind the token, if any
    token = config.token.get_secret_value() if config.token is not None else None
    app.router.routes += viewer_routes(
        store, pool.library, token=token, allowed_hosts=config.allowed_hosts
    )
    return app


def _shared_cache(store: Store, config: ServiceConfig) -> VerdictCache | None:
    """The verdict cache in the job database, when replicas share one (PostgreSQL)."""
    if not store.shared or not config.replicas.shared_cache:
        return None
    from judge.service.stores.postgres import PostgresStore

    assert isinstance(store, PostgresStore)
    return store.verdict_cache()


def _runner(state: ServiceState) -> Runner:
    """The runner for the state's store: jobs in this process (SQLite), or chunks shared
    with the other replicas on the database (PostgreSQL)."""
    config = state.config
    if isinstance(state.store, JobStore):
        return JobRunner(
            state.store, state.pool, running_jobs=config.limits.running_jobs, redact=state.redact
        )
    from judge.service._replicas import ChunkRunner
    from judge.service.stores.postgres import PostgresStore

    assert isinstance(state.store, PostgresStore)
    return ChunkRunner(
        state.store,
        state.pool,
        workers=config.limits.running_jobs,
        settings=config.replicas,
        redact=state.redact,
    )


def _document_choices(app: FastAPI, state: ServiceState) -> None:
    """Name the rubrics and judges this server offers as enums in its OpenAPI schema, so
    clients (and fuzzers) see the valid choices; requests are still validated in full."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = generate()
        refs = sorted(
            {r.id for r in state.pool.library.rubrics()}
            | {r.ref for r in state.pool.library.rubrics()}
        )
        judges: list[str | None] = [*state.pool.names(), None]
        components = schema["components"]["schemas"]
        job = JobRequest.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(job.pop("$defs", {}))
        components["JobRequest"] = job  # named only by /v1/jobs' openapi_extra
        for model in ("GradeRequest", "ProbeRequest", "JobRequest"):
            properties = schema["components"]["schemas"].get(model, {}).get("properties", {})
            if "rubric" in properties:
                properties["rubric"]["enum"] = refs
                properties["judge"]["enum"] = judges
        for parameter in schema["paths"]["/v1/jobs"]["post"].get("parameters", []):
            if parameter["name"] == "rubric":
                parameter["schema"]["enum"] = [*refs, None]
            elif parameter["name"] == "judge":
                parameter["schema"]["enum"] = judges
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _body_types(path: str) -> tuple[str, ...]:
    """JSON everywhere; /v1/jobs also takes its uploads (JSONL, CSV)."""
    if path.rstrip("/") == "/v1/jobs":
        return (JSON_TYPE, *UPLOAD_TYPES)
    return (JSON_TYPE,)


def _limit_for(config: ServiceConfig) -> Callable[[str], int]:
    limits = config.limits

    def limit(path: str) -> int:
        if path.rstrip("/") == "/v1/jobs":
            return limits.job_body_bytes
        if path.rstrip("/") == "/v1/grade":
            return limits.grade_body_bytes
        return limits.other_body_bytes

    return limit


_BEARER = HTTPBearer(auto_error=False, description="the service token")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)]


def _auth(config: ServiceConfig) -> Callable[..., Any]:
    expected = config.token.get_secret_value() if config.token is not None else None

    async def authenticate(credentials: Credentials) -> None:
        check_token(expected, credentials)

    return authenticate


def _meta_routes(state: ServiceState) -> APIRouter:
    router = APIRouter(responses=ERROR_RESPONSES)

    @router.get("/healthz", response_model=Health, tags=["service"])
    async def healthz() -> Health:
        """Liveness: the service answers, and which judges it offers."""
        return Health(
            status="ok", judges=state.pool.names(), default_judge=state.config.default_name()
        )

    return router


RubricId = Annotated[str, Path(pattern=RUBRIC_ID)]
Version = Annotated[int, Path(ge=1, le=999_999)]


def _v1_routes(state: ServiceState) -> APIRouter:
    router = APIRouter(responses=ERROR_RESPONSES)

    @router.get("/judges", response_model=list[JudgeOut], tags=["service"])
    async def judges() -> list[JudgeOut]:
        """The judges this server offers, by name (endpoints and keys stay on the server)."""
        default = state.config.default_name()
        return [_judge_out(state.config, name, default) for name in state.pool.names()]

    @router.get("/rubrics", response_model=list[RubricOut], tags=["rubrics"])
    async def rubrics() -> list[RubricOut]:
        """Every rubric version, with the sha256 of its file."""
        found = await asyncio.to_thread(state.pool.library.rubrics)
        return [RubricOut.model_validate(_rubric_fields(r)) for r in found]

    @router.get(
        "/rubrics/{rubric_id}/{version}",
        response_model=RubricDetail,
        tags=["rubrics"],
        responses={404: {"model": ERROR_RESPONSES[422]["model"], "description": "no such rubric"}},
    )
    async def rubric(rubric_id: RubricId, version: Version) -> RubricDetail:
        """One rubric version: its instructions and the verdict's JSON schema."""
        try:
            found = state.pool.library.load(f"{rubric_id}@{version}")
        except RubricError as exc:
            raise ServiceError(404, "not_found", str(exc)) from None
        return RubricDetail(**_rubric_fields(found), json_schema=found.json_schema())

    @router.post(
        "/grade",
        response_model=GradeResponse,
        tags=["grading"],
        responses={
            502: {"model": ERROR_RESPONSES[500]["model"], "description": "the judge failed"},
            504: {"model": ERROR_RESPONSES[500]["model"], "description": "timed out"},
        },
    )
    async def grade(body: GradeRequest) -> Response:
        """Grade one case or a small list; records in input order, as `judge grade` writes."""
        grade_limit(state, body.cases)
        rubric, judge = state.pick(body.rubric, body.judge)
        cases = check_cases(body.cases, rubric)
        records = await _grade(state, judge, rubric, cases)
        prices = prices_for(state.config.judge_config(judge))
        return _json_response(records, summarise(records, rubric, prices))

    return router


async def _grade(
    state: ServiceState, judge: str, rubric: Rubric, cases: list[Case]
) -> list[GradedRecord]:
    grader = state.pool.grader(judge, rubric)
    timeout = state.config.limits.request_timeout_s
    try:
        work = grader.grade_many(cases, use_cache=state.config.use_cache)
        records = await asyncio.wait_for(work, timeout)
    except TimeoutError:
        raise ServiceError(504, "timeout", f"grading took over {timeout:g} s") from None
    except ApiError as exc:
        message = state.redact(f"the judge endpoint failed: {exc}")
        raise ServiceError(502, "judge_error", message) from None
    for record in records:
        if record.error:
            record.error = state.redact(record.error)
    return records


def _json_response(records: list[GradedRecord], summary: dict[str, Any]) -> Response:
    # Serialised once, by the models themselves: no second validation pass on the way out.
    items = ",".join(record.model_dump_json() for record in records)
    text = f'{{"records":[{items}],"summary":{json.dumps(summary, allow_nan=False)}}}'
    return Response(text, media_type="application/json")


def _rubric_fields(rubric: Rubric) -> dict[str, Any]:
    """A rubric as the API shows it: the schema name its kind sends, the kind's own keys."""
    fields = rubric.model_dump(mode="json")
    return {**fields, "output_schema": rubric.schema_name}


def _judge_out(config: ServiceConfig, name: str, default: str) -> JudgeOut:
    spec = config.spec(name)
    jury = spec.jury is not None
    return JudgeOut(
        name=name,
        model="jury" if jury else spec.model or "rules",
        offline=spec.model is None and not jury,
        temperature=spec.temperature,
        seed=spec.seed,
        max_tokens=spec.max_tokens,
        output_mode="panel" if jury else spec.output_mode if spec.model else "rules",
        default=name == default,
    )
