"""Test kinds that read a case's signal from its metadata, so a pass's retrieval and
generation scores are known by construction (hand counts of the two-by-two), and a rubric
folder holding them. They declare `signal` and `needs_judge` like any kind; nothing in
the engine knows their names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from judge.cli import main
from judge.kinds import _REGISTRY as KIND_REGISTRY
from judge.kinds import Abstain, Kind, Scored, VerdictModel
from judge.lexical import Budget
from judge.rubric import Rubric
from judge.schemas import Case


class RecordedScore(VerdictModel):
    score: float


class RecordedKind(Kind):
    """Score = `case.metadata[key]`; abstains without it. No judge, no request."""

    verdict_name = "RecordedScore"
    needs_judge = False
    key: ClassVar[str]

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return RecordedScore

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        assert isinstance(verdict, RecordedScore)
        return Scored("ok", verdict.score, None)

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: Budget | None = None
    ) -> BaseModel | Abstain:
        value = case.metadata.get(self.key)
        return Abstain(f"no {self.key}") if value is None else RecordedScore(score=value)


class RecordedRetrieval(RecordedKind):
    name = "test_recorded_retrieval"
    signal = "retrieval"
    key = "recall"
    signal_threshold = 0.5


class RecordedGeneration(RecordedKind):
    name = "test_recorded_generation"
    signal = "generation"
    key = "grounded"
    signal_threshold = 0.8


KINDS: tuple[Kind, ...] = (RecordedRetrieval(), RecordedGeneration())


@pytest.fixture
def recorded_kinds() -> Iterator[None]:
    """The recorded kinds in the registry for one test."""
    for kind in KINDS:
        KIND_REGISTRY[kind.name] = kind
    try:
        yield
    finally:
        for kind in KINDS:
            KIND_REGISTRY.pop(kind.name, None)


def write_rubrics(folder: Path, rubrics: dict[str, str]) -> Path:
    """A locked user rubric folder with one rubric (id -> kind) each."""
    for rubric_id, kind in rubrics.items():
        path = folder / rubric_id / "v1.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"id: {rubric_id}\nversion: 1\nkind: {kind}\ntitle: {rubric_id}\n"
            "inputs: [question]\nsystem: |\n  Recorded in the case's metadata.\n",
            "utf-8",
        )
    assert main(["rubrics", "lock", "--rubrics-dir", str(folder)], env={}) == 0
    return folder


def with_metadata(cases: list[dict[str, Any]], **columns: list[Any]) -> list[dict[str, Any]]:
    """Each case with metadata[key] = columns[key][i] (None leaves it out)."""
    out = []
    for i, case in enumerate(cases):
        meta = {k: v[i] for k, v in columns.items() if v[i] is not None}
        out.append({**case, "metadata": {**case.get("metadata", {}), **meta}})
    return out
