"""A model judge: render the rubric, ask the endpoint, parse, repair once, score."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judge.client import ChatClient, Completion
from judge.config import JudgeConfig, endpoint_of
from judge.engine.confidence import logprob_confidence
from judge.engine.outcome import Outcome
from judge.engine.parse import ParseError, kept_raw, parse_verdict
from judge.errors import ApiError
from judge.rubric import Rubric
from judge.schemas import Case, JudgeInfo, Usage

if TYPE_CHECKING:
    from judge.client import AsyncHttpClient

REPAIR_PROMPT = (
    "Your reply was not a valid verdict: {reason}. Reply again with only the corrected JSON object."
)


class LLMJudge:
    """Backend for any OpenAI-compatible endpoint, pinned to one model and its settings."""

    def __init__(self, config: JudgeConfig, *, http_client: AsyncHttpClient | None = None):
        self.config = config
        self.client = ChatClient(config, http_client=http_client)
        self.name = config.model or ""
        self._prepared: dict[int, PreparedRubric] = {}  # by id(); each holds its rubric
        self._identity: dict[str, Any] | None = None

    def cache_identity(self) -> dict[str, Any]:
        if self._identity is None:  # the config is frozen: the same for every case
            self._identity = model_identity(self.config)
        return dict(self._identity)

    async def aclose(self) -> None:
        await self.client.aclose()

    def request_summary(self) -> dict[str, Any]:
        """Requests sent and refused, the most in flight (`ChatClient.request_summary`)."""
        return self.client.request_summary()

    def prepared(self, rubric: Rubric) -> PreparedRubric:
        """What is the same for every case of `rubric`, built on its first case."""
        ready = self._prepared.get(id(rubric))
        if ready is None or ready.rubric is not rubric:
            ready = self._prepared[id(rubric)] = PreparedRubric(rubric)
        return ready

    async def evaluate(self, rubric: Rubric, case: Case, *, sample: int = 0) -> Outcome:
        """One case. Transient API failures become `api_error`; fatal ones propagate.
        `sample` > 0: another sample of the same request (judge.engine.votes)."""
        ready = self.prepared(rubric)
        schema = ready.schema

        def render(mode: str) -> list[dict[str, str]]:
            return ready.render(case, mode)

        usage, latency = Usage(), 0.0
        extra: list[dict[str, str]] = []
        for attempt in range(2):  # the reply, then at most one repair
            try:
                reply = await self.client.complete(
                    render, schema_name=ready.schema_name, schema=schema, extra=extra, sample=sample
                )
            except ApiError as exc:
                if exc.fatal:
                    raise
                info = judge_info(self.config, None, self.client.output_mode)
                return Outcome("api_error", info, error=str(exc), usage=usage, latency_ms=latency)
            usage, latency = usage + reply.usage, latency + reply.latency_ms
            outcome, reason = read_reply(
                rubric, reply, self.config, case=case, allow_repair=attempt == 0
            )
            if outcome is not None:
                outcome.usage, outcome.latency_ms = usage, latency
                if attempt == 1 and outcome.status == "parse_error":
                    outcome.error = f"after one repair: {outcome.error}"
                return outcome
            extra = [
                {"role": "assistant", "content": reply.text},
                {"role": "user", "content": REPAIR_PROMPT.format(reason=reason)},
            ]
        raise AssertionError("unreachable")


class PreparedRubric:
    """A rubric's fixed request parts, built once rather than per case: the verdict's JSON
    schema (pydantic's `model_json_schema` is the costliest step of a request), its name
    and the system message of each output mode. `render` equals `Rubric.render`."""

    def __init__(self, rubric: Rubric) -> None:
        self.rubric = rubric
        self.schema = rubric.json_schema()
        self.schema_name = rubric.schema_name
        self._systems: dict[str, str] = {}

    def render(self, case: Case, mode: str) -> list[dict[str, str]]:
        system = self._systems.get(mode)
        if system is None:
            system = self._systems[mode] = self.rubric.system_text(mode)
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": self.rubric.user_text(case)},
        ]


def model_identity(cfg: JudgeConfig) -> dict[str, Any]:
    """What decides a model judge's verdicts besides the case (judge.engine.identity)."""
    return {
        "model": cfg.model,
        "endpoint": endpoint_of(cfg.base_url),
        "temperature": cfg.temperature,
        "top_p": cfg.top_p,
        "seed": cfg.seed,
        "max_tokens": cfg.max_tokens,
        "output_mode": cfg.output_mode,
    }


def read_reply(
    rubric: Rubric,
    reply: Completion,
    config: JudgeConfig,
    *,
    case: Case | None = None,
    allow_repair: bool = False,
) -> tuple[Outcome | None, str | None]:
    """Turn one reply into an outcome. When the verdict does not validate (against the
    schema, then against the `case` when given: `Kind.verdict_problem`) and a repair is
    allowed, return (None, reason) so the caller can send the reason back; otherwise it is a
    `parse_error` with the raw text kept. Shared by the online and batch paths."""
    info = judge_info(config, reply, reply.output_mode)
    usage, latency = reply.usage, reply.latency_ms
    problem = _unusable(reply, config.max_tokens)
    if problem:
        raw = kept_raw(reply.text or reply.refusal)
        return Outcome("parse_error", info, error=problem, raw=raw, usage=usage), None
    try:
        verdict = parse_verdict(reply.text, rubric.verdict_model())
        misfit = rubric.behaviour.verdict_problem(rubric, case, verdict) if case else None
        if misfit:
            raise ParseError(f"the verdict does not fit the case: {misfit}")
    except ParseError as exc:
        if allow_repair:
            return None, str(exc)
        raw = kept_raw(reply.text)
        return Outcome("parse_error", info, error=str(exc), raw=raw, usage=usage), None
    scored = rubric.behaviour.score(rubric, verdict)
    outcome = Outcome(scored.status, info, verdict=verdict, usage=usage, latency_ms=latency)
    set_confidence(outcome, rubric, reply, scored.label)
    return outcome, None


def set_confidence(outcome: Outcome, rubric: Rubric, reply: Completion, label: str | None) -> None:
    """The verdict's confidence in its label: from the reply's log-probabilities where the
    server gave them (judge.engine.confidence), else the one the judge states where the
    rubric asks for it (`Kind.verbal_confidence`); none for a verdict without a label."""
    if label is None or outcome.verdict is None:
        return
    value, source = None, "logprobs"
    if reply.tokens:
        value = logprob_confidence(rubric, outcome.verdict, label, reply.text, reply.tokens)
    if value is None:
        value, source = rubric.behaviour.verbal_confidence(rubric, outcome.verdict), "verbal"
    if value is not None:
        outcome.confidence, outcome.confidence_source = value, source


def judge_info(config: JudgeConfig, reply: Completion | None, mode: str) -> JudgeInfo:
    """Provenance: the model the server says it ran (else the configured one), settings."""
    return JudgeInfo(
        model=(reply.model if reply and reply.model else config.model) or "",
        temperature=config.temperature,
        seed=config.seed,
        max_tokens=config.max_tokens,
        output_mode=mode,
        system_fingerprint=reply.system_fingerprint if reply else None,
    )


def _unusable(reply: Completion, max_tokens: int) -> str | None:
    """Replies that no repair can fix: a refusal, or a verdict cut off at max_tokens (whose
    advice works: a rerun with a larger --max-tokens asks the failed cases again,
    judge.engine.records.check_resumable)."""
    if reply.refusal:
        return f"the judge refused: {reply.refusal}"
    if reply.finish_reason == "length":
        return (
            f"truncated: the reply hit max_tokens {max_tokens} (finish_reason=length); "
            "rerun with a larger --max-tokens"
        )
    if reply.finish_reason == "content_filter":
        return "the reply was cut by the provider's content filter"
    return None
