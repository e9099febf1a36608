"""Shared test helpers: canned cases and OpenAI-shaped replies for respx."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel

from judge.kinds import Scored, kind_for_schema

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"

TRIAL_CONTEXT = (
    "The free trial lasts 14 days from the day you sign up. "
    "You can cancel any time before day 14 and pay nothing."
)
TRIAL_ANSWER = "The free trial lasts 14 days from sign-up. You can cancel any time. The moon is made of cheese."


def case(id: str = "c1", **fields: Any) -> dict[str, Any]:
    base = {"id": id, "question": "How long is the free trial?", "contexts": [TRIAL_CONTEXT]}
    base["answer"] = TRIAL_ANSWER
    base.update(fields)
    return base


def pair(id: str = "p1", **fields: Any) -> dict[str, Any]:
    base = {
        "id": id,
        "question": "How long is the free trial?",
        "contexts": [TRIAL_CONTEXT],
        "answer_a": "The free trial lasts 14 days.",
        "answer_b": "The trial lasts 40 days and includes a free gift.",
    }
    base.update(fields)
    return base


FAITHFUL_VERDICT = {
    "claims": [
        {"claim": "The trial lasts 14 days.", "verdict": "supported", "evidence": "lasts 14 days"},
        {"claim": "Cancel any time.", "verdict": "supported", "evidence": "cancel any time"},
    ]
}
RELEVANCE_VERDICT = {"rationale": "Answers it directly.", "abstained": False, "score": 5}
PAIRWISE_VERDICT = {"rationale": "A matches the context.", "winner": "A"}


def chat_reply(
    content: str | dict[str, Any] | None,
    *,
    finish_reason: str = "stop",
    model: str = "gpt-4o-2024-08-06",
    fingerprint: str | None = "fp_test123",
    refusal: str | None = None,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
) -> httpx.Response:
    """An OpenAI chat.completion response."""
    text = json.dumps(content) if isinstance(content, dict) else content
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "system_fingerprint": fingerprint,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": refusal},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return httpx.Response(200, json=body)


def api_error(
    status: int, message: str = "error", headers: dict[str, str] | None = None
) -> httpx.Response:
    body = {"error": {"message": message, "type": "test_error", "code": None}}
    return httpx.Response(status, json=body, headers=headers or {})


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def score_verdict(verdict: BaseModel) -> tuple[str, float | None, str | None]:
    """(status, score, label) of a built-in kind's verdict, as its kind reads it."""
    kind = kind_for_schema(type(verdict).__name__)
    assert kind is not None, type(verdict).__name__
    scored: Scored = kind.score(None, verdict)  # type: ignore[arg-type]
    return scored.status, scored.score, scored.label
