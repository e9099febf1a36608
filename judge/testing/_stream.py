"""The test server's streamed replies (`"stream": true`): a chat.completion sent as
chat.completion.chunk server-sent events, as OpenAI, vLLM and llama.cpp send it.

The reply's delay is spread over its chunks, so a slow reply is a server that is making
progress (a chunk every `delay / pieces` seconds), the way a CPU model writes its tokens;
`stall` is silence after the first chunk, a server that stopped making progress.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.responses import StreamingResponse

__all__ = ["PIECES", "streamed_completion"]

PIECES = 8  # content chunks of a streamed reply


def streamed_completion(
    completion: dict[str, Any],
    *,
    delay: float,
    stall: float,
    sleep: Callable[[float], Awaitable[None]],
    include_usage: bool,
    headers: dict[str, str],
) -> StreamingResponse:
    """`completion` (a chat.completion body) as an event stream."""
    choice = completion["choices"][0]
    content = choice["message"].get("content") or ""
    refusal = choice["message"].get("refusal")
    size = -(-len(content) // PIECES) or 1
    pieces = [content[i : i + size] for i in range(0, len(content), size)] or [""]
    head = {k: completion[k] for k in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"

    def event(
        delta: dict[str, Any], finish: str | None = None, logprobs: Any = None, **extra: Any
    ) -> bytes:
        choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
        if logprobs:
            choice["logprobs"] = logprobs
        choices = [choice]
        return b"data: " + json.dumps({**head, "choices": choices, **extra}).encode() + b"\n\n"

    async def events() -> AsyncIterator[bytes]:
        yield event({"role": "assistant", "content": ""})
        await sleep(stall)
        logprobs = choice.get("logprobs")  # all on the first piece: the joined list counts
        for number, piece in enumerate(pieces):
            await sleep(delay / len(pieces))
            yield event({"content": piece}, logprobs=logprobs if number == 0 else None)
        if refusal:
            yield event({"refusal": refusal})
        yield event({}, choice["finish_reason"])
        if include_usage:
            usage = {**head, "choices": [], "usage": completion["usage"]}
            yield b"data: " + json.dumps(usage).encode() + b"\n\n"
        yield b"data: [DONE]\n\n"

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={"cache-control": "no-cache", **headers}
    )
