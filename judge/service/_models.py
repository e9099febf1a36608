"""Request and response models of the grading service: they are its OpenAPI schema.

Cases accept the same fields and aliases as the CLI's input files; text fields carry length
limits so an oversized field is a 422 naming it. Requests forbid unknown fields, so a client
cannot slip in an endpoint URL or a key.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StringConstraints, model_validator

from calibration.inference.intervals import DEFAULT_RESAMPLES
from judge.schemas import FIELD_NAME, MAX_IDS, NAME, RUBRIC_REF, GradedRecord, fold_aliases
from judge.transcript import MAX_CALLS, MAX_MESSAGES, ExpectedCall, Message

MAX_TEXT = 100_000
MAX_CONTEXTS = 100
MAX_SLICES = 32
MAX_LABELS_TEXT = 64 * 1024 * 1024
MAX_LABEL_ROWS = 200_000

Text = Annotated[str, StringConstraints(max_length=MAX_TEXT)]
Short = Annotated[str, StringConstraints(max_length=256)]
JobStatusName = Literal["queued", "running", "done", "failed", "cancelled"]


class CaseIn(BaseModel):
    """One case to grade (DESIGN.md "Input cases"); Ragas names are accepted as aliases."""

    model_config = ConfigDict(extra="forbid")

    id: Annotated[str, StringConstraints(min_length=1, max_length=512)] | StrictInt
    question: Text | None = None
    contexts: Annotated[list[Text], Field(max_length=MAX_CONTEXTS)] | Text | None = None
    answer: Text | None = None
    answer_a: Text | None = None
    answer_b: Text | None = None
    reference: Text | None = None
    slices: Annotated[list[Short], Field(max_length=MAX_SLICES)] | Short | None = None
    metadata: dict[str, Any] | None = None
    # retrieval fields: checked further by `Case` (judge.schemas), as in a file
    retrieved_ids: Annotated[list[Short | StrictInt], Field(max_length=MAX_IDS)] | None = None
    relevant_ids: Annotated[list[Short | StrictInt], Field(max_length=MAX_IDS)] | None = None
    relevance: Annotated[dict[Short, float], Field(max_length=MAX_IDS)] | None = None
    # a conversation (judge.transcript): the order of its messages is checked by `Case`
    messages: Annotated[list[Message], Field(max_length=MAX_MESSAGES)] | None = None
    messages_a: Annotated[list[Message], Field(max_length=MAX_MESSAGES)] | None = None
    messages_b: Annotated[list[Message], Field(max_length=MAX_MESSAGES)] | None = None
    expected_tool_calls: Annotated[list[ExpectedCall], Field(max_length=MAX_CALLS)] | None = None
    tools: Annotated[list[dict[str, Any]], Field(max_length=MAX_CALLS)] | None = None
    goal: Text | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_aliases(cls, data: Any) -> Any:
        return fold_aliases(data) if isinstance(data, dict) else data

    def row(self) -> dict[str, Any]:
        """The case as an input-file row (what `judge grade` would read)."""
        return self.model_dump(exclude_none=True)


EXAMPLE_CASE: dict[str, Any] = {
    "id": "refund-014",
    "question": "How long is the free trial?",
    "contexts": ["The free trial lasts 14 days from the day you sign up."],
    "answer": "The free trial lasts 14 days.",
    "slices": ["billing"],
}
EXAMPLE_PAIR: dict[str, Any] = {
    "id": "pair-001",
    "question": "How long is the free trial?",
    "contexts": ["The free trial lasts 14 days from the day you sign up."],
    "answer_a": "The free trial lasts 14 days.",
    "answer_b": "The trial lasts 40 days.",
}


class GradeRequest(BaseModel):
    """Grade cases with one rubric and one of the server's judges."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"rubric": "faithfulness@1", "cases": [EXAMPLE_CASE]},
                {"rubric": "pairwise", "cases": [EXAMPLE_PAIR]},
            ]
        },
    )

    rubric: str = Field(
        pattern=RUBRIC_REF, description="ID or ID@VERSION", examples=["faithfulness@1"]
    )
    judge: str | None = Field(
        default=None, pattern=NAME, description="a judge the server names; default if none"
    )
    cases: list[CaseIn] = Field(min_length=1)


class JobRequest(GradeRequest):
    """A background job: the grade body, plus human labels of some of its cases."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "rubric": "faithfulness@1",
                    "cases": [EXAMPLE_CASE],
                    "human_labels": [{"id": "refund-014", "label": "faithful"}],
                }
            ]
        },
    )

    human_labels: (
        Annotated[list[dict[str, Any]], Field(max_length=MAX_LABEL_ROWS)]
        | Annotated[str, StringConstraints(max_length=MAX_LABELS_TEXT)]
        | None
    ) = Field(
        default=None,
        description="human labels of some of the cases, as rows ({id, label} and, if any, "
        "score, annotator, inclusion_probability) or as a label file's text (CSV with a "
        "header, or JSONL; e.g. `judge label export`'s CSV): the summary adds judge-only, "
        "human-only and PPI++ estimates with 95% intervals and the corrected pass rate",
    )


class GradeResponse(BaseModel):
    records: list[GradedRecord]
    summary: dict[str, Any]


class Progress(BaseModel):
    done: int
    total: int


class JobCreated(BaseModel):
    id: str
    status: JobStatusName


class JobState(BaseModel):
    id: str
    status: JobStatusName
    rubric: str
    judge: str
    progress: Progress
    summary: dict[str, Any] | None = None
    error: str | None = None
    created_at: float
    updated_at: float


class JobList(BaseModel):
    """One page of jobs, newest first; `next` is the `before=` of the next page (null: last)."""

    jobs: list[JobState]
    next: str | None = None


class ErrorDetail(BaseModel):
    type: str
    message: str
    field: str | None = None
    problems: list[str] | None = None


class ErrorResponse(BaseModel):
    error: ErrorDetail


class Health(BaseModel):
    status: Literal["ok"]
    judges: list[str]
    default_judge: str


class JudgeOut(BaseModel):
    name: str
    model: str
    offline: bool
    temperature: float
    seed: int | None
    max_tokens: int
    output_mode: str
    default: bool


class RubricOut(BaseModel):
    id: str
    version: int
    kind: str
    title: str
    inputs: list[str]
    output_schema: str
    sha256: str


class RubricDetail(RubricOut):
    system: str
    json_schema: dict[str, Any]


LabelRow = dict[str, Any]


class CalibrateRequest(BaseModel):
    """Agreement of judge labels with human labels (rows with `id` and the label field);
    `judge_job` takes the judge's labels from a finished job's records instead."""

    model_config = ConfigDict(extra="forbid")

    judge_labels: list[LabelRow] | None = Field(default=None, max_length=200_000)
    judge_job: str | None = Field(default=None, max_length=64)
    human_labels: list[LabelRow] = Field(min_length=1, max_length=200_000)
    judge_field: str = Field(default="label", pattern=FIELD_NAME)
    human_field: str = Field(default="label", pattern=FIELD_NAME)
    weights: Literal["linear", "quadratic"] | None = None
    group_field: str | None = Field(default=None, pattern=FIELD_NAME)
    slice_field: str | None = Field(default=None, pattern=FIELD_NAME)
    n_bootstrap: int = Field(default=DEFAULT_RESAMPLES, ge=0, le=10_000)
    seed: int = Field(default=0, ge=0, le=2**31)
