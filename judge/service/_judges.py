"""The judges a running service offers: one backend per name, shared by requests and jobs.

Each judge has one concurrency budget for the whole server (its `concurrency`), so many
small requests and a large job together never put more calls in flight than configured.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from judge.api import make_backend
from judge.config import JudgeConfig, default_cache_dir
from judge.engine.cache import VerdictCache
from judge.engine.cascade import settle_one
from judge.engine.certificate import check_binding
from judge.engine.grader import Grader
from judge.engine.identity import identity_of
from judge.engine.metrics import GradingMetrics, ObservedGrader
from judge.engine.outcome import Backend, Outcome
from judge.engine.rules import RulesJudge
from judge.rubric import Rubric, RubricLibrary
from judge.schemas import Case, GradedRecord
from judge.service.config import ServiceConfig

if TYPE_CHECKING:
    from judge.traces.otel import EvaluationExporter


class _Throttled:
    """A backend whose calls share one semaphore, whichever grader makes them."""

    def __init__(self, backend: Backend, limit: int) -> None:
        self._backend = backend
        self._slots = asyncio.Semaphore(limit)
        self.name = backend.name

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        async with self._slots:
            return await self._backend.evaluate(rubric, case)

    def cache_identity(self) -> dict[str, Any] | None:
        return self._backend.cache_identity()

    async def aclose(self) -> None:
        await self._backend.aclose()


class JudgePool:
    """Backends by judge name (made on first use), the shared verdict cache, rubrics."""

    def __init__(
        self,
        config: ServiceConfig,
        *,
        backends: Mapping[str, Backend] | None = None,
        cache: VerdictCache | None = None,  # instead of the folder's (replicas share one)
    ) -> None:
        self.config = config
        self.library = RubricLibrary(config.rubrics_dirs)
        self._made = dict(backends or {})
        self._backends: dict[str, Backend] = {}
        self._rubrics: dict[str, Rubric] = {}
        self._cache: VerdictCache | None = None
        self._shared_cache = cache
        self.metrics = GradingMetrics()  # what every grader counts, served at /metrics
        self.exporter = _exporter(config.otel_endpoint)

    def names(self) -> list[str]:
        return self.config.judge_names()

    def resolve(self, name: str | None) -> str | None:
        """The judge's name, the default for None, or None when the server has no such judge."""
        name = name or self.config.default_name()
        return name if name in self.names() else None

    def rubric(self, ref: str) -> Rubric:
        """Load (once) `ID` or `ID@VERSION`; raises RubricError."""
        if ref not in self._rubrics:
            self._rubrics[ref] = self.library.load(ref)
        return self._rubrics[ref]

    def grader(self, name: str, rubric: Rubric) -> Grader:
        if name in self.config.juries:
            return self._panel(name, rubric)
        config = self.config.judge_config(name)
        if name not in self._backends:
            self._backends[name] = _Throttled(self._make(name, config), config.max_in_flight)
        return ObservedGrader(
            self._backends[name],
            rubric,
            cache=self._cache_for(name),
            concurrency=config.max_in_flight,
            metrics=self.metrics,
            on_record=self._send if self.exporter is not None else None,
            settle=self._settle(name, rubric),
        )

    def check_certificate(self, name: str, rubric: Rubric) -> None:
        """UsageError when judge `name` has a certificate made for another rubric or judge."""
        self._settle(name, rubric)

    def _settle(self, name: str, rubric: Rubric) -> Callable[[GradedRecord], GradedRecord] | None:
        """Judge `name`'s certificate applied to each record, bound to this rubric and to
        the judge's identity (UsageError otherwise); None for a judge without one."""
        certificate = self.config.certificates.get(name)
        if certificate is None:
            return None
        config = self.config.judge_config(name)
        if name not in self._backends:
            self._backends[name] = _Throttled(self._make(name, config), config.max_in_flight)
        identity = identity_of(self._backends[name])
        check_binding(certificate, rubric, [identity], where=f"judge {name!r}: its certificate")
        return settle_one(certificate)

    def _send(self, record: GradedRecord, case: Case) -> None:
        assert self.exporter is not None
        self.exporter.send(record, case.metadata)  # queued: a thread sends it

    def _panel(self, name: str, rubric: Rubric) -> Grader:
        """A jury's grader (judge.jury.serve): each juror's backend made once and throttled
        by its own concurrency, as every judge's, its verdicts in the shared cache."""
        from judge.jury.serve import PanelCaseGrader  # only a configured jury loads it

        jury = self.config.juries[name]
        graders = []
        for juror, config in zip(jury.jurors, self.config.juror_configs[name], strict=True):
            key = f"{name}/{juror.name}"
            if key not in self._backends:
                made = self._made.get(key) or make_backend(config)
                self._backends[key] = _Throttled(made, config.max_in_flight)
            cache = self._cache_of(config)
            graders.append(
                Grader(self._backends[key], rubric, cache=cache, concurrency=config.max_in_flight)
            )
        return PanelCaseGrader(jury, rubric, graders)

    def _make(self, name: str, config: JudgeConfig) -> Backend:
        """The backend for judge `name`. The rules judge gets the request timeout as its
        budget per case: a case over it ends as an `api_error` record (in a job), and a
        /v1/grade request over it gets 504 first."""
        if name in self._made:
            return self._made[name]
        if config.offline:
            return RulesJudge(time_budget_s=self.config.limits.request_timeout_s)
        return make_backend(config)

    def open_cache(self) -> None:
        """Open the verdict cache now if any judge uses it: a folder that cannot be used is
        a UsageError at start (one line, exit 2), not a 500 on every request. Once open, a
        failing cache is a miss with one warning in the log (VerdictCache)."""
        for name in self.names():
            self._cache_for(name)

    def _cache_for(self, name: str) -> VerdictCache | None:
        if name in self.config.juries:  # its jurors' verdicts are cached, not the panel's
            caches = [self._cache_of(c) for c in self.config.juror_configs[name]]
            return next((c for c in caches if c is not None), None)
        return self._cache_of(self.config.judge_config(name))

    def _cache_of(self, config: JudgeConfig) -> VerdictCache | None:
        if config.offline or not config.use_cache:
            return None
        if self._cache is None:
            shared = self._shared_cache  # (an empty cache is falsy: its __len__ is 0)
            folder = self.config.cache_dir or default_cache_dir()
            self._cache = shared if shared is not None else VerdictCache(folder)
        return self._cache

    async def aclose(self) -> None:
        if self.exporter is not None:  # what is queued is sent before the server ends
            await asyncio.to_thread(self.exporter.close)
            self.exporter = None
        for backend in self._backends.values():
            await backend.aclose()
        self._backends.clear()
        if self._cache is not None:
            self._cache.close()
            self._cache = None


def _exporter(endpoint: str | None) -> EvaluationExporter | None:
    """The OpenTelemetry events of `otel_endpoint`, sent every second from a thread."""
    if endpoint is None:
        return None
    from judge.traces.otel import EvaluationExporter

    return EvaluationExporter(endpoint, background=1.0)
