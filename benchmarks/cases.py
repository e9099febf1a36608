"""Synthetic answer sets for the benchmarks, written on the fly (never committed)."""

from __future__ import annotations

import json
from pathlib import Path

TOPICS = [
    ("return headphones", "Opened headphones can be returned within 15 days of delivery."),
    ("change my address", "Addresses can be changed until the order status is Shipped."),
    ("cancel my plan", "You can cancel the plan any time from the Billing page."),
    ("get a refund", "Refunds are paid to the original card within 5 business days."),
    ("reset my password", "Use the Forgot password link; the reset email expires after 2 hours."),
]
FILLER = (
    "Our support team answers within one business day. Orders over 50 dollars ship free. "
    "Gift cards cannot be exchanged for cash."
)


def case(i: int) -> dict[str, object]:
    """Case `i`: a distinct question, two contexts, an answer that is faithful or not."""
    topic, fact = TOPICS[i % len(TOPICS)]
    extra = f" We also add a free gift worth {i % 90 + 10} dollars." if i % 3 == 0 else ""
    return {
        "id": f"bench-{i:06d}",
        "question": f"How do I {topic}? (ticket {i})",
        "contexts": [fact, FILLER],
        "answer": fact + extra,
        "slices": ["gift" if extra else "plain"],
    }


def write_cases(path: Path, count: int) -> Path:
    """`count` cases as JSONL at `path`, streamed (memory does not grow with count)."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            handle.write(json.dumps(case(i)) + "\n")
    return path
