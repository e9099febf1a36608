"""`GET /metrics`: Prometheus's text format of what this server graded (every judge's
grader counts its records: judge.engine.metrics), with the queue depth, the jobs waiting,
read from the job store when scraped. Behind the bearer token when the service has one."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
from fastapi.responses import Response

from judge.engine.metrics import CONTENT_TYPE_LATEST
from judge.service._state import ServiceState

QUEUE_COUNTED = 100_000  # a scrape counts at most this many queued jobs


def metrics_routes(state: ServiceState) -> APIRouter:
    router = APIRouter()

    @router.get("/metrics", tags=["service"], response_class=Response)
    async def metrics() -> Response:
        """Cases graded by rubric and status, judge latency, tokens and cost, queue depth,
        pass rate by rubric (Prometheus text format)."""
        queued = await asyncio.to_thread(
            state.store.listing, status="queued", limit=QUEUE_COUNTED, before=None
        )
        state.pool.metrics.queue.set(len(queued))
        return Response(state.pool.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

    return router
