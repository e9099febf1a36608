"""Pydantic models of the public contract: cases, verdicts and graded records (DESIGN.md)."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from judge.transcript import (
    MAX_CALLS,
    MAX_MESSAGES,
    ExpectedCall,
    Message,
    check_sequence,
    read_function_calls,
)

# The shapes of names, one definition each (rubric files, the CLI and the service agree).
RUBRIC_ID = r"^[a-z][a-z0-9_-]{0,63}$"
RUBRIC_REF = r"^[a-z][a-z0-9_-]{0,63}(@v?[0-9]{1,6})?$"
NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"  # a judge's, a label's
FIELD_NAME = r"^[A-Za-z0-9_.-]{1,64}$"  # a field of a label file

Status = Literal["ok", "parse_error", "api_error", "abstained", "escalated"]

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
    "retrieved_context_ids": "retrieved_ids",
    "reference_context_ids": "relevant_ids",
}
MAX_IDS = 10_000  # ids a case may list (a ranking, or a set of relevant documents)


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
    """One thing to grade: a RAG answer, a pair of answers for pairwise rubrics, or a
    conversation (`messages`, with the agent's tool calls and results)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    id: str = Field(min_length=1, max_length=512)
    question: str | None = None
    contexts: list[str] = Field(default_factory=list)
    answer: str | None = None
    answer_a: str | None = None
    answer_b: str | None = None
    reference: str | None = None
    # RAG retrieval labels (DESIGN.md "RAG evaluation"): the ranked ids of what the
    # retriever returned (parallel to `contexts` when both are given), and the relevant ids
    # as a set or graded relevance {"doc-id": grade}; None when the case does not say.
    retrieved_ids: list[str] | None = Field(default=None, max_length=MAX_IDS)
    relevant_ids: list[str] | None = Field(default=None, max_length=MAX_IDS)
    relevance: dict[str, float] | None = Field(default=None, max_length=MAX_IDS)
    # A conversation (judge.transcript): OpenAI chat messages, the calls the agent was
    # expected to make, the tools it had (OpenAI function schemas) and what the user wanted.
    messages: list[Message] | None = Field(default=None, max_length=MAX_MESSAGES)
    # Two conversations compared (a pairwise kind over transcripts; A is shown first).
    messages_a: list[Message] | None = Field(default=None, max_length=MAX_MESSAGES)
    messages_b: list[Message] | None = Field(default=None, max_length=MAX_MESSAGES)
    expected_tool_calls: list[ExpectedCall] | None = Field(default=None, max_length=MAX_CALLS)
    tools: list[dict[str, Any]] | None = Field(default=None, max_length=MAX_CALLS)
    goal: str | None = None
    # When the case happened (its trace's start, the request's time): ISO 8601, kept in
    # the record as `case_time`; `judge drift --by` windows by it before the grading time.
    time: str | None = None
    slices: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("time", mode="before")
    @classmethod
    def _iso_time(cls, value: Any) -> Any:
        """An ISO 8601 date or time (a datetime from Parquet or a DataFrame is written as
        one); anything else is refused with the value in the message."""
        if isinstance(value, datetime | date):
            return value.isoformat()
        if value is None:
            return None
        if not isinstance(value, str) or parse_iso_time(value) is None:
            raise ValueError(
                f"not an ISO 8601 date or time (like 2026-03-02 or 2026-03-02 14:05:00+00:00): "
                f"{value!r}"
            )
        return value.strip()

    @field_validator("messages", "messages_a", "messages_b", mode="before")
    @classmethod
    def _older_call_shape(cls, value: Any) -> Any:
        return read_function_calls(value)  # `function_call`: the one call it is

    @field_validator("retrieved_ids", "relevant_ids", mode="before")
    @classmethod
    def _id_list(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [_id_text(v) for v in value]
        return value

    @field_validator("retrieved_ids", "relevant_ids")
    @classmethod
    def _ids_not_empty(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and any(not v.strip() for v in value):
            raise ValueError("ids must be non-empty strings")
        return value

    @field_validator("relevance", mode="before")
    @classmethod
    def _grades(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for doc, grade in value.items():
                if not str(doc).strip():
                    raise ValueError("ids must be non-empty strings")
                if isinstance(grade, bool) or not isinstance(grade, int | float):
                    raise ValueError(f"grade of {doc!r} must be a number, got {grade!r}")
                if not math.isfinite(grade) or grade < 0:
                    raise ValueError(f"grade of {doc!r} must be a finite number >= 0")
        return value

    @model_validator(mode="after")
    def _labels_agree(self) -> Case:
        """`relevant_ids` and `relevance` together: a listed id may not be graded 0."""
        if self.relevant_ids and self.relevance:
            zero = [d for d in self.relevant_ids if self.relevance.get(d, 1) == 0]
            if zero:
                raise ValueError(
                    f"relevant_ids lists {zero[:3]} but relevance grades them 0: say it once"
                )
        return self

    @model_validator(mode="after")
    def _conversation(self) -> Case:
        """The messages in an order a conversation can have (a tool result after its call)."""
        for name in ("messages", "messages_a", "messages_b"):
            messages = getattr(self, name)
            problem = None if messages is None else check_sequence(messages)
            if problem:
                raise ValueError(f"{name}: {problem}")
        return self

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


def parse_iso_time(text: str) -> datetime | None:
    """An ISO 8601 date or time as an aware UTC datetime (no offset: read as UTC); None
    when `text` is not one."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def utc_now() -> str:
    """Now, in UTC, as ISO 8601 to the millisecond (`2026-03-02T14:05:00.123Z`): a
    record's `graded_at`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _id_text(value: Any) -> Any:
    """Whole-number ids (17) are read as text ("17"); anything else is validated as is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


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


def _is_none(value: Any) -> bool:
    return value is None


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
    # the key its case was joined to a reference by (`--references --join-on`); written
    # only when there is one, so records of cases never joined read as before
    reference_key: str | None = Field(default=None, exclude_if=lambda v: v is None)
    error: str | None = None
    raw: str | None = None
    cached: bool = False
    usage: Usage = Field(default_factory=Usage)
    latency_ms: float = 0.0
    slices: list[str] = Field(default_factory=list)
    # Fields a record has only when they apply: left out while None, so a record made
    # without a confidence or a certificate is byte for byte what it was before they
    # existed. How sure the judge was of this verdict (0..1) and where that came from
    # (`logprobs`, `votes`, `verbal`); None when the judge gave none.
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, exclude_if=_is_none)
    confidence_source: str | None = Field(default=None, exclude_if=_is_none)
    # Under a certificate (judge.engine.certificate): the cascade rung that decided the
    # case, {"rung": 1-based position, "model": its judge's model}, and the certificate's
    # hash. An `escalated` record has `certificate` and no `decided_by`.
    decided_by: dict[str, Any] | None = Field(default=None, exclude_if=_is_none)
    certificate: str | None = Field(default=None, exclude_if=_is_none)
    # When this record was made (UTC, ISO 8601; a cache hit is stamped afresh), and the
    # case's own `time` when it had one. Neither enters the cache key: they change no verdict.
    graded_at: str | None = None
    case_time: str | None = None
    # sha256 of what the judge was shown of the case (judge.engine.cache.inputs_sha256): a
    # rerun keeps this record only while its case hashes the same; None: written before it
    inputs_sha256: str | None = None
