"""Simulated jurors for the test server: planted labels, planted errors, planted faults.

A `PlantedJuror` is a responder (`FakeOpenAIServer(responder=...)`) for a labels-style
rubric: it finds the case's id in the request (`case_id`, by default the first `[id]` in
the question), answers the planted true label, or the planted wrong one where its
`errors` say so, and answers text that is not JSON, to the reply and to the repair alike,
where `malformed` says so. Two jurors given the same `errors` make the same mistakes
(correlated errors); disjoint `errors` are independent ones. `plant_panel` draws such a
panel reproducibly from a seed; `planted_truth` and `write_cases` make the cases of the
`policy` labels rubric (examples/rubrics) they grade, as the tests, the benchmark
(benchmarks/jury.py) and the README's example (examples/jury/) use them.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.testing.server import ChatRequest, Reply, default_verdict

_BRACKETED = re.compile(r"\[([^\[\]]+)\]")
MALFORMED = '{"label": "compliant", "rationale": "cut'
POLICY_LABELS = ("compliant", "minor_issue", "violation")  # examples/rubrics/policy


def planted_truth(
    n: int, *, seed: int = 7, id_format: str = "case-{:04d}", labels: Sequence[str] = POLICY_LABELS
) -> dict[str, str]:
    """`n` case ids (`id_format` of 0..n-1) with a true label each, drawn from a seed."""
    rng = random.Random(seed)
    return {id_format.format(i): rng.choice(labels) for i in range(n)}


def write_cases(path: Path, truth: Mapping[str, str]) -> Path:
    """A JSONL file of `policy` cases, one a planted id, each naming its id in `[id]`."""
    with path.open("w", encoding="utf-8") as handle:
        for case_id in truth:
            case = {
                "id": case_id,
                "question": f"[{case_id}] Can I get a refund after 40 days?",
                "contexts": ["Refunds are accepted within 30 days of delivery."],
                "answer": f"({case_id}) Refunds run for 30 days from delivery.",
            }
            handle.write(json.dumps(case) + "\n")
    return path


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
