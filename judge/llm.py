"""A model judge: render the rubric, ask the endpoint, parse, repair once, score."""

from __future__ import annotations

from typing import Any

import httpx

from judge.client import ChatClient, Completion
from judge.config import JudgeConfig
from judge.errors import ApiError
from judge.outcome import Outcome
from judge.parse import ParseError, parse_verdict
from judge.rubric import Rubric
from judge.schemas import Case, JudgeInfo, Usage
from judge.scoring import score_verdict

REPAIR_PROMPT = (
    "Your reply was not a valid verdict: {reason}. Reply again with only the corrected JSON object."
)


class LLMJudge:
    """Backend for any OpenAI-compatible endpoint, pinned to one model and its settings."""

    def __init__(self, config: JudgeConfig, *, http_client: httpx.AsyncClient | None = None):
        self.config = config
        self.client = ChatClient(config, http_client=http_client)
        self.name = config.model or ""

    def cache_identity(self) -> dict[str, Any]:
        cfg = self.config
        return {
            "model": cfg.model,
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "seed": cfg.seed,
            "max_tokens": cfg.max_tokens,
            "output_mode": cfg.output_mode,
        }

    async def aclose(self) -> None:
        await self.client.aclose()

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        """One case. Transient API failures become `api_error`; fatal ones propagate."""
        schema = rubric.json_schema()

        def render(mode: str) -> list[dict[str, str]]:
            return rubric.render(case, output_mode=mode)

        usage, latency = Usage(), 0.0
        extra: list[dict[str, str]] = []
        info = self._info(None)
        for attempt in range(2):  # the reply, then at most one repair
            try:
                reply = await self.client.complete(
                    render, schema_name=rubric.output_schema, schema=schema, extra=extra
                )
            except ApiError as exc:
                if exc.fatal:
                    raise
                return Outcome("api_error", info, error=str(exc), usage=usage, latency_ms=latency)
            usage, latency, info = (
                usage + reply.usage,
                latency + reply.latency_ms,
                self._info(reply),
            )
            problem = _unusable(reply)
            if problem:
                return Outcome(
                    "parse_error",
                    info,
                    error=problem,
                    raw=reply.text or reply.refusal,
                    usage=usage,
                    latency_ms=latency,
                )
            try:
                verdict = parse_verdict(reply.text, rubric.verdict_model())
            except ParseError as exc:
                if attempt == 1:
                    return Outcome(
                        "parse_error",
                        info,
                        error=f"after one repair: {exc}",
                        raw=reply.text,
                        usage=usage,
                        latency_ms=latency,
                    )
                extra = [
                    {"role": "assistant", "content": reply.text},
                    {"role": "user", "content": REPAIR_PROMPT.format(reason=exc)},
                ]
                continue
            status, _, _ = score_verdict(verdict)
            return Outcome(status, info, verdict=verdict, usage=usage, latency_ms=latency)
        raise AssertionError("unreachable")

    def _info(self, reply: Completion | None) -> JudgeInfo:
        cfg = self.config
        return JudgeInfo(
            model=(reply.model if reply and reply.model else cfg.model) or "",
            temperature=cfg.temperature,
            seed=cfg.seed,
            max_tokens=cfg.max_tokens,
            output_mode=reply.output_mode if reply else self.client.output_mode,
            system_fingerprint=reply.system_fingerprint if reply else None,
        )


def _unusable(reply: Completion) -> str | None:
    """Replies that no repair can fix: a refusal, or a verdict cut off at max_tokens."""
    if reply.refusal:
        return f"the judge refused: {reply.refusal}"
    if reply.finish_reason == "length":
        return "truncated: the reply hit max_tokens (finish_reason=length); raise --max-tokens"
    if reply.finish_reason == "content_filter":
        return "the reply was cut by the provider's content filter"
    return None
