"""What makes the rules judge near-linear in the size of a case, and lets it be stopped.

`ContextIndex` reads a case's evidence once: its content words, its numbers (as
`judge.lexical.quantities.Quantity`, by value), its sentences and, per word, the sentences
that hold it. A claim is then checked against two sets, and its
evidence sentence (the one sharing the most content words with the claim, the first on a tie)
is found by counting over the claim words' postings instead of re-reading every sentence.
Work per case: one pass over the text, plus, per claim, the summed postings of its words.
Before the index, every claim re-tokenised the whole context twice (answer sentences x
context sentences): a 110 KB case took seconds (benchmarks/rules_large.md has the figures).

`Budget` lets a caller stop a case that runs in a worker thread: the judge calls `check()`
between claims and stops with `BudgetExceeded` once the deadline has passed or the caller
has cancelled (a thread cannot be killed; it can be asked).
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain

from judge.lexical.quantities import Quantity, quantities

SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


class BudgetExceeded(Exception):
    """The rules judge ran past its time budget, or its caller stopped waiting."""


class Budget:
    """A deadline (None: none) and a cancel flag, checked by the judge between steps."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = seconds
        self._deadline = time.monotonic() + seconds if seconds is not None else None
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    def check(self) -> None:
        if self._cancelled.is_set():
            raise BudgetExceeded("stopped: the caller no longer waits for this case")
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise BudgetExceeded(f"the rules judge ran over its {self.seconds:g} s budget")


def numbers(text: str) -> set[str]:
    """The figures in `text`, thousands separators dropped ("1,200" -> "1200")."""
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


@dataclass
class ContextIndex:
    """A case's evidence, read once (see the module docstring)."""

    sentences: list[str]
    words: frozenset[str]
    numbers: set[str]
    postings: dict[str, list[int]]
    quantities: dict[float, list[Quantity]] = field(default_factory=dict)
    _evidence: dict[frozenset[str], str] = field(default_factory=dict)

    @classmethod
    def build(cls, context: str, tokenise: Callable[[str], Iterable[str]]) -> ContextIndex:
        """Index `context`; `tokenise` gives a sentence's content words."""
        sentences = SENTENCE_END.split(context)
        postings: dict[str, list[int]] = {}
        for index, sentence in enumerate(sentences):
            for word in set(tokenise(sentence)):
                postings.setdefault(word, []).append(index)
        by_value: dict[float, list[Quantity]] = {}
        for quantity in chain.from_iterable(quantities(s) for s in sentences):
            by_value.setdefault(quantity.value, []).append(quantity)
        return cls(sentences, frozenset(postings), numbers(context), postings, by_value)

    def evidence(self, words: frozenset[str]) -> str:
        """The sentence sharing the most of `words` (the first on a tie); "" when none does."""
        if words not in self._evidence:
            counts = Counter(chain.from_iterable(self.postings.get(w, ()) for w in words))
            if counts:
                best = max(counts.values())
                first = min(i for i, n in counts.items() if n == best)
                self._evidence[words] = self.sentences[first].strip()
            else:
                self._evidence[words] = ""
        return self._evidence[words]
