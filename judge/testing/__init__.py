"""Test tools users can run too: an OpenAI-compatible server on loopback with scripted
replies, reproducible faults and request counts (`FakeOpenAIServer`), the Batch API's files
and batches included. `python -m judge.testserver` starts one from the command line.
Importing this package starts nothing."""

from judge.testing.server import (
    FAULTS,
    ChatRequest,
    FakeOpenAIServer,
    FaultPlan,
    RateLimit,
    Reply,
    default_verdict,
    main,
)

__all__ = [
    "FAULTS",
    "ChatRequest",
    "FakeOpenAIServer",
    "FaultPlan",
    "RateLimit",
    "Reply",
    "default_verdict",
    "main",
]
