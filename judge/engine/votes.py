"""Several replies per case (`--samples K`): the majority label is the verdict, and the
share of replies agreeing with it is the record's confidence (`confidence_source:
votes`).

Each sample is the same request with the seed moved on by its number (seed, seed + 1,
...), at the configured temperature. At temperature 0 a server that honours the seed may
still answer every sample alike: the replies then agree and the confidence is 1, which
says that the judge does not vary, not that it is right; sample at a temperature above 0
for a confidence that means something. The samples' tokens are summed (they are all
billed); the case's latency is the slowest sample's (they are sent together).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from judge.engine.model import LLMJudge
from judge.engine.outcome import Outcome
from judge.rubric import Rubric
from judge.schemas import Case, Usage

ABSTAINED = "(abstained)"  # the vote of a reply that abstains


class SampledJudge:
    """A model judge asked `samples` times a case (module docstring). Its cache identity
    adds the number of samples: K replies make another verdict than one."""

    def __init__(self, judge: LLMJudge, samples: int) -> None:
        self.judge = judge
        self.samples = samples
        self.name = judge.name
        self.config = judge.config
        self.client = judge.client

    def cache_identity(self) -> dict[str, Any]:
        return {**self.judge.cache_identity(), "samples": self.samples}

    def request_summary(self) -> dict[str, Any]:
        return self.judge.request_summary()

    async def aclose(self) -> None:
        await self.judge.aclose()

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        asked = [self.judge.evaluate(rubric, case, sample=i) for i in range(self.samples)]
        answers = await asyncio.gather(*asked, return_exceptions=True)
        for answer in answers:  # a fatal error (bad key) stops the run, as one reply's would
            if isinstance(answer, BaseException):
                raise answer
        return majority(rubric, [a for a in answers if isinstance(a, Outcome)])


def majority(rubric: Rubric, outcomes: list[Outcome]) -> Outcome:
    """The outcome whose label most replies gave (the first such reply's verdict), with
    confidence = replies agreeing / replies that gave a verdict; a tie goes to the label
    given first. With no verdict at all, the first failure. Usage summed over them all."""
    usage = sum((o.usage for o in outcomes), Usage())
    latency = max(o.latency_ms for o in outcomes)
    votes: list[tuple[str, Outcome]] = []
    for outcome in outcomes:
        if outcome.status in ("ok", "abstained") and outcome.verdict is not None:
            label = rubric.behaviour.score(rubric, outcome.verdict).label
            votes.append((label if outcome.status == "ok" and label else ABSTAINED, outcome))
    if not votes:
        chosen = outcomes[0]
    else:
        counts = Counter(label for label, _ in votes)
        top = max(counts.values())
        winner = next(label for label, _ in votes if counts[label] == top)
        chosen = next(outcome for label, outcome in votes if label == winner)
        chosen.confidence, chosen.confidence_source = None, None
        if winner != ABSTAINED:
            chosen.confidence = round(top / len(votes), 6)
            chosen.confidence_source = "votes"
    chosen.usage, chosen.latency_ms = usage, latency
    return chosen
