"""What a streamed reply costs the client (issue 37 point 2):
`python -m benchmarks.streaming [--requests 600] [--concurrency 64]`.

The same requests through `ChatClient` to the test server in its own process (latency
0.05 s), plain replies against streamed ones (`"stream": true`: the test server sends a
role chunk, 8 content chunks, a finish chunk and a usage chunk). Client CPU per request =
this process's CPU time over the run / N. Why it matters: streaming is what keeps a slow
server from being abandoned (`--timeout` bounds the silence between chunks), but it is
not the default: the client streams only after a first timeout (judge.client._chat).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from benchmarks.server import ServerProcess
from judge.client import ChatClient
from judge.config import JudgeConfig

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"rationale": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["rationale", "score"],
    "additionalProperties": False,
}


async def run(url: str, stream: bool, n: int, concurrency: int) -> tuple[float, float]:
    """(client CPU ms a request, wall seconds)."""
    config = JudgeConfig(model="judge-test-2024-01-01", base_url=url, concurrency=concurrency)
    client = ChatClient(config, stream=stream)
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> str:
        message = [{"role": "user", "content": f'{{"question": "q{i}", "answer": "a{i}"}}'}]
        async with gate:
            done = await client.complete(lambda mode: message, schema_name="s", schema=SCHEMA)
        return done.text

    cpu, wall = time.process_time(), time.perf_counter()
    texts = await asyncio.gather(*(one(i) for i in range(n)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await client.aclose()
    assert all(texts)
    return cpu / n * 1000, wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args(argv)
    with ServerProcess(latency=0.05) as server:
        for stream in (False, True, False, True):
            cpu, wall = asyncio.run(run(server.base_url, stream, args.requests, args.concurrency))
            print(f"{'streamed' if stream else 'plain   '}: client CPU {cpu:.3f} ms a request")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
