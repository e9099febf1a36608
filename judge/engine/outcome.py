"""What a judge backend returns for one case, before the grader turns it into a record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from judge.rubric import Rubric
from judge.schemas import Case, JudgeInfo, Status, Usage


@dataclass
class Outcome:
    status: Status
    judge: JudgeInfo
    verdict: BaseModel | None = None
    error: str | None = None
    raw: str | None = None
    usage: Usage = field(default_factory=Usage)
    latency_ms: float = 0.0
    confidence: float | None = None  # 0..1: how sure the judge is of this verdict
    confidence_source: str | None = None


class Backend(Protocol):
    """A judge: the offline rules judge or a model behind an OpenAI-compatible endpoint."""

    name: str

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome: ...

    def cache_identity(self) -> dict[str, Any] | None:
        """Settings that change the verdict (part of the cache key); None = do not cache."""
        ...

    async def aclose(self) -> None: ...
