"""Pydantic models of the public contract: cases, verdicts and graded records (DESIGN.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# The shapes of names, one definition each (rubric files, the CLI and the service agree).
RUBRIC_ID = r"^[a-z][a-z0-9_-]{0,63}$"
RUBRIC_REF = r"^[a-z][a-z0-9_-]{0,63}(@v?[0-9]{1,6})?$"
NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"  # a judge's, a label's
FIELD_NAME = r"^[A-Za-z0-9_.-]{1,64}$"  # a field of a label file

Status = Literal["ok", "parse_error", "api_error", "abstained"]

# Other tools' field names for the same things (Ragas first, then common variants).
CASE_ALIASES: dict[str, str] = {
    "user_input": "question",
    "query": "question",
    "retrieved_contexts": "contexts",
    "context": "contexts",
    "response": "answer",
    "ground_truth": "reference",
    "slice": "slices",
    "response_a": "answer_a",
    "response_b": "answer_b",
}


def fold_aliases(data: dict[Any, Any]) -> dict[Any, Any]:
    """A case row with other tools' field names (CASE_ALIASES) turned into ours; where both
    are given, ours wins. The one place aliases are read (files and the service alike)."""
    out: dict[Any, Any] = {}
    for key, value in data.items():
        name = CASE_ALIASES.get(key, key) if isinstance(key, str) else key
        if name in out and name != key:
            continue  # the canonical name wins over an alias
        out[name] = value
    return out


class Case(BaseModel):
    """One thing to grade: a RAG answer, or a pair of answers for pairwise rubrics."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    id: str = Field(min_length=1, max_length=512)
    question: str | None = None
    contexts: list[str] = Field(default_factory=list)
    answer: str | None = None
    answer_a: str | None = None
    answer_b: str | None = None
    reference: str | None = None
    slices: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _accept_aliases(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = fold_aliases(data)
        if isinstance(out.get("id"), int) and not isinstance(out.get("id"), bool):
            out["id"] = str(out["id"])
        for name in ("contexts", "slices"):
            if isinstance(out.get(name), str):
                out[name] = [out[name]]
            elif out.get(name) is None:
                out.pop(name, None)
        return out


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class JudgeInfo(BaseModel):
    """Provenance: which judge produced the verdict, with which settings."""

    model: str
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    output_mode: str
    system_fingerprint: str | None = None


class GradedRecord(BaseModel):
    """One output line per input case (DESIGN.md "Graded records")."""

    id: str
    rubric: str
    rubric_version: int
    rubric_sha256: str
    judge: JudgeInfo
    judge_id: str | None = None  # judge.engine.identity.judge_id: who judged, for resume checks
    status: Status
    verdict: dict[str, Any] | None = None
    score: float | None = None
    label: str | None = None
    error: str | None = None
    raw: str | None = None
    cached: bool = False
    usage: Usage = Field(default_factory=Usage)
    latency_ms: float = 0.0
    slices: list[str] = Field(default_factory=list)
