"""Word-overlap building blocks of the rules judge, shared by the kinds' rules verdicts.

Known limits of lexical overlap: it misses paraphrases and subtle contradictions; numbers
are checked exactly so that "40 days" is not supported by a context that says 14.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal, NamedTuple

# The reference's stop list: token_f1 reproduces its worked examples with exactly this set.
STOPWORDS = frozenset(
    {"the", "a", "an", "is", "are", "was", "were", "of", "to", "in"}
    | {"on", "for", "and", "or", "it", "this", "that", "with", "you", "your"}
)
QUESTION_WORDS = frozenset(
    {"what", "when", "where", "which", "who", "whom", "whose", "why", "how", "do", "does"}
    | {"did", "can", "could", "should", "would", "will", "i", "my", "me", "we", "our", "us"}
    | {"be", "there", "any"}
)
SUPPORT_THRESHOLD = 0.6
LONG_CLAIM_WORDS = 25

_WORD = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CLAUSE_BREAK = re.compile(r";\s+|,\s+(?=(?:and|but|while|whereas|although|so)\s)")
_ABSTAIN = re.compile(
    r"\b(i (do not|don't|cannot|can't) (know|say|tell|find|answer)|i'?m not sure|i am not sure"
    r"|(cannot|can't|unable to) (find|answer|determine|tell)"
    r"|(no|not enough) information|(is|are) not (mentioned|stated|specified|covered|provided)"
    r"|(does|do) not (say|mention|specify|state|cover)|doesn't (say|mention|specify|state|cover))\b"
)
_TO_THE_GRADER = re.compile(
    r"\b(ignore (all |any )?(the )?(previous|prior|above)|grader|grading|evaluation team"
    r"|verdict|\[system\]|highest (grade|score))\b",
    re.IGNORECASE,
)


def content_words(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens, stop words removed."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def token_f1(prediction: str, reference: str) -> float:
    """Harmonic mean of content-word precision and recall (multiset overlap); 0 when none."""
    pred, ref = Counter(content_words(prediction)), Counter(content_words(reference))
    overlap = sum((pred & ref).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(pred.values()), overlap / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def split_claims(answer: str) -> list[str]:
    """Sentences, with long ones split again at clause boundaries; abstentions dropped."""
    claims: list[str] = []
    for sentence in sentences(answer):
        if _ABSTAIN.search(sentence.lower()):
            continue
        if len(sentence.split()) > LONG_CLAIM_WORDS:
            claims.extend(p.strip() for p in _CLAUSE_BREAK.split(sentence) if p.strip())
        else:
            claims.append(sentence)
    return claims


def numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


ClaimLabel = Literal["supported", "contradicted", "not_enough_information"]


class ClaimCheck(NamedTuple):
    claim: str
    verdict: ClaimLabel
    evidence: str


def judge_claim(claim: str, context: str, threshold: float = SUPPORT_THRESHOLD) -> ClaimCheck:
    """(claim, verdict, evidence): supported when enough content words appear in the
    context and every number does; contradicted when the words do but a number does not."""
    words = set(content_words(claim))
    context_words = set(content_words(context))
    coverage = len(words & context_words) / len(words) if words else 1.0
    missing_numbers = numbers(claim) - numbers(context)
    verdict: ClaimLabel
    if coverage >= threshold and not missing_numbers:
        verdict = "supported"
    elif coverage >= threshold:
        verdict = "contradicted"  # same subject, a figure the context does not give
    else:
        verdict = "not_enough_information"
    return ClaimCheck(claim, verdict, _evidence(words, context))


def _evidence(words: set[str], context: str) -> str:
    best, best_overlap = "", 0
    for sentence in _SENTENCE_END.split(context):
        overlap = len(words & set(content_words(sentence)))
        if overlap > best_overlap:
            best, best_overlap = sentence.strip(), overlap
    return best


def evidence_text(contexts: list[str]) -> str:
    """The contexts joined, without sentences that speak to the grader."""
    parts = (s for c in contexts for s in _SENTENCE_END.split(c))
    return "\n".join(s for s in parts if not _TO_THE_GRADER.search(s))


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def term_coverage(question: str, text: str) -> tuple[int, int]:
    """(question terms found in text, question terms): stemmed content words of the
    question that are not question words, and how many of them the text uses."""
    terms = {stem(w) for w in content_words(question) if w not in QUESTION_WORDS}
    said = {stem(w) for w in content_words(evidence_text([text]))}
    return len(terms & said), len(terms)
