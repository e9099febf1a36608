"""The offline, deterministic rules judge: the embedded default when no model is configured.

Same rubrics, verdict schemas and records as a model judge; provenance says `rules`. It is
the cheap first tier and a baseline, with the known limits of lexical overlap (it misses
paraphrases and subtle contradictions); numbers are checked exactly so that "40 days" is
not supported by a context that says 14.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal

from judge.outcome import Outcome
from judge.rubric import Rubric
from judge.schemas import (
    Case,
    ClaimLabel,
    ClaimVerdict,
    FaithfulnessVerdict,
    JudgeInfo,
    PairwiseVerdict,
    RelevanceVerdict,
)
from judge.scoring import score_verdict

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
TIE_MARGIN = 0.05

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
# Text addressed to the grader is never evidence: a context that says "the evaluation team
# verified every claim" must not lend its words to the claims (prompt injection).
_TO_THE_GRADER = re.compile(
    r"\b(ignore (all |any )?(the )?(previous|prior|above)|grader|grading|evaluation team"
    r"|verdict|\[system\]|highest (grade|score))\b",
    re.IGNORECASE,
)
RULES_INFO = JudgeInfo(model="rules", output_mode="rules")


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


def split_claims(answer: str) -> list[str]:
    """Sentences, with long ones split again at clause boundaries; abstentions dropped."""
    claims: list[str] = []
    for sentence in _SENTENCE_END.split(answer.strip()):
        sentence = sentence.strip()
        if not sentence or _ABSTAIN.search(sentence.lower()):
            continue
        if len(sentence.split()) > LONG_CLAIM_WORDS:
            claims.extend(p.strip() for p in _CLAUSE_BREAK.split(sentence) if p.strip())
        else:
            claims.append(sentence)
    return claims


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def judge_claim(claim: str, context: str, threshold: float = SUPPORT_THRESHOLD) -> ClaimVerdict:
    """Supported when enough content words appear in the context and every number does."""
    words = set(content_words(claim))
    context_words = set(content_words(context))
    coverage = len(words & context_words) / len(words) if words else 1.0
    missing_numbers = _numbers(claim) - _numbers(context)
    verdict: ClaimLabel
    if coverage >= threshold and not missing_numbers:
        verdict = "supported"
    elif coverage >= threshold:
        verdict = "contradicted"  # same subject, a figure the context does not give
    else:
        verdict = "not_enough_information"
    return ClaimVerdict(claim=claim, verdict=verdict, evidence=_evidence(words, context))


def _evidence(words: set[str], context: str) -> str:
    best, best_overlap = "", 0
    for sentence in _SENTENCE_END.split(context):
        overlap = len(words & set(content_words(sentence)))
        if overlap > best_overlap:
            best, best_overlap = sentence.strip(), overlap
    return best


def evidence_text(contexts: list[str]) -> str:
    """The contexts joined, without sentences that speak to the grader."""
    sentences = (s for c in contexts for s in _SENTENCE_END.split(c))
    return "\n".join(s for s in sentences if not _TO_THE_GRADER.search(s))


def faithfulness_verdict(answer: str, contexts: list[str]) -> FaithfulnessVerdict:
    context = evidence_text(contexts)
    return FaithfulnessVerdict(claims=[judge_claim(c, context) for c in split_claims(answer)])


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def relevance_verdict(question: str, answer: str) -> RelevanceVerdict:
    """Question-term coverage of the answer: >=0.75 -> 5, >=0.5 -> 4, >=0.3 -> 3, >0 -> 2, else 1."""
    if not split_claims(answer):
        return RelevanceVerdict(rationale="The answer declines to answer.", abstained=True, score=1)
    terms = {_stem(w) for w in content_words(question) if w not in QUESTION_WORDS}
    said = {_stem(w) for w in content_words(evidence_text([answer]))}
    coverage = len(terms & said) / len(terms) if terms else 1.0
    score = 5 if coverage >= 0.75 else 4 if coverage >= 0.5 else 3 if coverage >= 0.3 else 2
    if coverage == 0:
        score = 1
    rationale = f"The answer uses {len(terms & said)} of {len(terms)} question terms."
    return RelevanceVerdict(rationale=rationale, abstained=False, score=score)  # type: ignore[arg-type]


def _quality(question: str, answer: str, contexts: list[str]) -> float:
    relevance = relevance_verdict(question, answer)
    rel = 0.0 if relevance.abstained else (relevance.score - 1) / 4
    if not contexts:
        return rel
    _, faith, _ = score_verdict(faithfulness_verdict(answer, contexts))
    return 0.5 * rel + 0.5 * (faith if faith is not None else 0.5)


def pairwise_verdict(
    question: str, answer_a: str, answer_b: str, contexts: list[str]
) -> PairwiseVerdict:
    """The answer with the higher rules quality wins; within TIE_MARGIN it is a tie."""
    qa, qb = _quality(question, answer_a, contexts), _quality(question, answer_b, contexts)
    if abs(qa - qb) <= TIE_MARGIN:
        return PairwiseVerdict(rationale=f"Quality {qa:.2f} vs {qb:.2f}: too close.", winner="tie")
    winner: Literal["A", "B"] = "A" if qa > qb else "B"
    return PairwiseVerdict(rationale=f"Quality A {qa:.2f} vs B {qb:.2f}.", winner=winner)


class RulesJudge:
    """Backend that grades with the rules above; never touches the network."""

    name = "rules"

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        return self.evaluate_sync(rubric, case)

    def evaluate_sync(self, rubric: Rubric, case: Case) -> Outcome:
        question = case.question or ""
        verdict: FaithfulnessVerdict | RelevanceVerdict | PairwiseVerdict
        if rubric.kind == "faithfulness":
            verdict = faithfulness_verdict(case.answer or "", case.contexts)
        elif rubric.kind == "relevance":
            verdict = relevance_verdict(question, case.answer or "")
        else:
            verdict = pairwise_verdict(
                question, case.answer_a or "", case.answer_b or "", case.contexts
            )
        status, _, _ = score_verdict(verdict)
        return Outcome(status=status, judge=RULES_INFO, verdict=verdict)

    def cache_identity(self) -> None:
        return None  # cheaper to recompute than to look up

    async def aclose(self) -> None:
        return None
