"""The stand-in judge model every generating script here answers with (no network, no key):
a claim is one sentence of the answer, supported when its numbers all appear in the
contexts and at least 60% of its content words do. Deterministic; deliberately simple, so
its verdicts disagree with the human labels on some cases. Pure standard library: it runs
in each tool's own scratch environment."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
STOP_WORDS = (
    "a an and are as at be by can do for from has have i if in is it its of on or our that "
    "the their them then there they this to was we were will with you your yes no not"
)
STOP = frozenset(STOP_WORDS.split())


def cases() -> list[dict]:
    """The cases of examples/cases.jsonl whose human label is faithful or unfaithful, in file
    order (the abstained ones are left out: no tool has a third verdict)."""
    with (REPO / "examples" / "human_labels.csv").open(newline="") as handle:
        labels = {r["id"]: r["label"] for r in csv.DictReader(handle)}
    lines = (REPO / "examples" / "cases.jsonl").read_text().splitlines()
    every = [json.loads(line) for line in lines if line.strip()]
    return [c for c in every if labels.get(c["id"]) in ("faithful", "unfaithful")]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9$%]+", text.lower()) if w not in STOP}


def supported(claim: str, contexts: list[str]) -> bool:
    context = _words(" ".join(contexts))
    words = _words(claim)
    numbers = {w for w in words if any(ch.isdigit() for ch in w)}
    if not numbers <= context:
        return False
    return not words or len(words & context) / len(words) >= 0.6


def verdicts(case: dict) -> list[bool]:
    """One verdict a claim (a sentence of the answer)."""
    return [supported(s, case["contexts"]) for s in sentences(case["answer"])]


def _flat(text: str) -> str:
    return " " + " ".join(re.findall(r"[a-z0-9]+", text.lower())) + " "


def case_in(text: str, every: list[dict]) -> dict:
    """The case all of whose answer's sentences appear in `text` (a tool's prompt; compared
    word by word, so quoting and escaping do not matter), the longest answer when several
    do; failing that, the case all of whose contexts appear (a prompt about the contexts
    only: any such case has the same contexts)."""
    flat = _flat(text)
    found = [c for c in every if all(_flat(s) in flat for s in sentences(c["answer"]))]
    if not found:
        found = [c for c in every if all(_flat(s) in flat for s in c["contexts"])]
    if not found:
        raise LookupError(f"no case matches the prompt: {text[:200]!r}")
    return max(found, key=lambda c: len(c["answer"]))
