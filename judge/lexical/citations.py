"""Citation markers in an answer: which sentence cites which context, for which words.

An answer cites context n (1-based: `[1]` is the first context) with a marker `[n]`;
`[1][3]`, `[1, 3]` and `[1; 3]` cite several. How markers are read, rule by rule:

- Sentences end at `.`, `!` or `?` followed by white space. A marker written after the
  full stop ("... sign-up. [1] Next ...", "... sign-up.[1]") belongs to the sentence it
  follows.
- A sentence with one run of markers (wherever it stands: "According to [1], ...") cites
  them for the whole sentence. With runs at several places ("A [1] and B [2].") each run
  cites the words since the previous run; words after the last run join the last run.
- A context cited twice in one run counts once; the numbers are kept as written, so a
  citation of a context that does not exist (`[0]`, `[7]` of three) is still a citation,
  and an unsupported one.
- A sentence's text is the sentence with its markers removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.lexical.index import SENTENCE_END

_MARKER = re.compile(r"\[\s*(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\s*\]")
_AFTER_STOP = re.compile(r"([.!?])((?:\s*\[\s*\d{1,4}(?:\s*[,;]\s*\d{1,4})*\s*\])+)(?=\s|$)")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")
_WORD = re.compile(r"[A-Za-z0-9]")


@dataclass(frozen=True)
class Citation:
    """One cited context (its number as written) and the words it vouches for."""

    context: int
    span: str


@dataclass(frozen=True)
class CitedSentence:
    text: str
    citations: tuple[Citation, ...]


def cited_sentences(answer: str) -> list[CitedSentence]:
    """The answer's sentences with their citations (the module docstring's rules)."""
    moved = _AFTER_STOP.sub(lambda m: f"{m[2]}{m[1]}", answer.strip())
    out = []
    for sentence in SENTENCE_END.split(moved):
        text = strip_markers(sentence)
        if _WORD.search(text):
            out.append(CitedSentence(text, _citations(sentence, text)))
    return out


def strip_markers(text: str) -> str:
    """`text` without its citation markers."""
    return _clean(_MARKER.sub(" ", text)) if "[" in text else text


def _citations(sentence: str, text: str) -> tuple[Citation, ...]:
    runs: list[tuple[str, list[int]]] = []
    start = 0
    for marker in _MARKER.finditer(sentence):
        before = sentence[start : marker.start()]
        numbers = [int(n) for n in re.split(r"[,;\s]+", marker[1].strip()) if n]
        if runs and not _WORD.search(before):
            runs[-1][1].extend(numbers)  # "[1][2]": one run
        else:
            runs.append((before, numbers))
        start = marker.end()
    if len(runs) == 1:
        runs = [(text, runs[0][1])]
    elif runs and _WORD.search(sentence[start:]):
        runs[-1] = (runs[-1][0] + sentence[start:], runs[-1][1])
    return tuple(
        Citation(number, _clean(span))
        for span, numbers in runs
        for number in dict.fromkeys(numbers)
    )


def _clean(text: str) -> str:
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(text.split())).strip()
