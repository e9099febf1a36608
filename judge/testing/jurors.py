"""Simulated jurors for the test server: planted labels, planted errors, planted faults.

A `PlantedJuror` is a responder (`FakeOpenAIServer(responder=...)`) for a labels-style
rubric: it finds the case's id in the request (`case_id`, by default the first `[id]` in
the question), answers the planted true label, or the planted wrong one where its
`errors` say so, and answers text that is not JSON, to the reply and to the repair alike,
where `malformed` says so. Two jurors given the same `errors` make the same mistakes
(correlated errors); disjoint `errors` are independent ones. `plant_panel` draws such a
panel reproducibly from a seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judge.testing.server import ChatRequest, Reply, default_verdict

_BRACKETED = re.compile(r"\[([^\[\]]+)\]")
MALFORMED = '{"label": "compliant", "rationale": "cut'


def bracketed_id(payload: Mapping[str, Any]) -> str | None:
    """The first `[id]` in the case's question."""
    match = _BRACKETED.search(str(payload.get("question") or ""))
    return match.group(1) if match else None


@dataclass
class PlantedJuror:
    """A responder that answers `truth[id]`, or `errors[id]` (a wrong label), or, for ids
    in `malformed`, a reply that is not JSON (so the case is a `parse_error`)."""

    truth: Mapping[str, str]
    errors: Mapping[str, str] = field(default_factory=dict)
    malformed: frozenset[str] = frozenset()
    case_id: Callable[[Mapping[str, Any]], str | None] = bracketed_id

    def __call__(self, chat: ChatRequest) -> Reply | dict[str, Any]:
        verdict = default_verdict(chat)
        key = self.case_id(chat.payload)
        if key is None or key not in self.truth:
            return verdict
        if key in self.malformed:
            return Reply(content=MALFORMED)
        verdict["label"] = self.errors.get(key, self.truth[key])
        verdict["rationale"] = f"simulated verdict on {key}"
        return verdict


def wrong_label(label: str, labels: Sequence[str], rng: random.Random) -> str:
    return rng.choice([x for x in labels if x != label])


def plant_panel(
    truth: Mapping[str, str],
    labels: Sequence[str],
    *,
    error_rates: Sequence[float],
    shared: Sequence[int] = (),
    malformed_rate: Sequence[float] | None = None,
    seed: int = 0,
) -> list[PlantedJuror]:
    """Jurors with planted error rates. Jurors whose index is in `shared` make the same
    mistakes (the first of them draws its errors, the others copy them and, where their rate
    is higher, add their own); the others draw theirs from the cases no other juror errs
    on, so their errors are independent of everyone's. `malformed_rate` per juror: a share
    of the cases answered with text that is not JSON (drawn from cases it gets right)."""
    rng = random.Random(seed)
    ids = sorted(truth)
    taken: set[str] = set()
    errors: list[dict[str, str]] = []
    common: dict[str, str] = {}
    for number, rate in enumerate(error_rates):
        count = round(rate * len(ids))
        mine: dict[str, str] = dict(common) if number in shared and common else {}
        free = [i for i in ids if i not in taken and i not in mine]
        for case in rng.sample(free, max(0, count - len(mine))):
            mine[case] = wrong_label(truth[case], labels, rng)
        if number in shared and not common:
            common = dict(mine)
        taken |= set(mine)
        errors.append(mine)
    rates = malformed_rate or [0.0] * len(error_rates)
    jurors = []
    for mine, rate in zip(errors, rates, strict=True):
        right = [i for i in ids if i not in mine]
        bad = frozenset(rng.sample(right, round(rate * len(ids))))
        jurors.append(PlantedJuror(truth, mine, bad))
    return jurors
