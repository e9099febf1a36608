"""The offline, deterministic rules judge: the embedded default when no model is configured.

Same rubrics, verdict schemas and records as a model judge; provenance says `rules`. It is
the cheap first tier and a baseline, with the known limits of lexical overlap (it misses
paraphrases and subtle contradictions); numbers are checked exactly so that "40 days" is
not supported by a context that says 14.

Text addressed to the grader never counts (judge.rules_screen): a context paragraph that
speaks to the grader is not evidence, and an answer sentence that does is neither a claim
nor relevant text, so an answer cannot raise its own score. The work is near-linear in the
case's size (judge.rules_index); a case over OFFLOAD_CHARS runs in a worker thread, so a
server's event loop keeps answering, and stops at its time budget (an `api_error` record).
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from typing import Literal

from judge.outcome import Outcome
from judge.rubric import Rubric
from judge.rules_index import SENTENCE_END, Budget, BudgetExceeded, ContextIndex, numbers
from judge.rules_screen import addressed_flags, is_addressed, normalise
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
# Below this many characters of text a case takes well under a millisecond: a thread would
# cost more than it saves. Above it the case runs off the event loop.
OFFLOAD_CHARS = 20_000

_WORD = re.compile(r"[a-z0-9]+")
# "Verified: <an earlier claim>" repeats that claim: the label does not make it a new one.
_LABEL = re.compile(r"^[\w ]{1,30}:\s*")
_PARAGRAPH = re.compile(r"(\n\s*\n)")
_CLAUSE_BREAK = re.compile(r";\s+|,\s+(?=(?:and|but|while|whereas|although|so)\s)")
_ABSTAIN = re.compile(
    r"\b(i (do not|don't|cannot|can't) (know|say|tell|find|answer)|i'?m not sure|i am not sure"
    r"|(cannot|can't|unable to) (find|answer|determine|tell)"
    r"|(no|not enough) information|(is|are) not (mentioned|stated|specified|covered|provided)"
    r"|(does|do) not (say|mention|specify|state|cover)|doesn't (say|mention|specify|state|cover))\b"
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


def answer_sentences(answer: str) -> list[str]:
    """The answer's sentences, stripped, without those addressed to the grader, a quotation
    that runs over sentence ends screened whole (dropping text only lowers relevance)."""
    sentences = [s.strip() for s in SENTENCE_END.split(answer.strip())]
    flags = addressed_flags(sentences)
    return [s for s, addressed in zip(sentences, flags, strict=True) if s and not addressed]


def split_claims(answer: str) -> list[str]:
    """Sentences, with long ones split again at clause boundaries; abstentions, sentences
    addressed to the grader and repeats of an earlier claim (an echo, also behind a short
    label such as "Verified:") dropped, so that an answer cannot raise its own score.
    Sentences are screened one by one here: a dropped claim raises faithfulness, so a
    quotation must not carry the claims around an instruction away with it."""
    claims: list[str] = []
    seen: set[str] = set()
    for sentence in (s.strip() for s in SENTENCE_END.split(answer.strip())):
        if not sentence or is_addressed(sentence) or _ABSTAIN.search(sentence.lower()):
            continue
        parts = [sentence]
        if len(sentence.split()) > LONG_CLAIM_WORDS:
            parts = [p.strip() for p in _CLAUSE_BREAK.split(sentence) if p.strip()]
        for part in parts:
            if (key := _LABEL.sub("", normalise(part))) not in seen:
                seen.add(key)
                claims.append(part)
    return claims


def judge_claim(claim: str, context: str, threshold: float = SUPPORT_THRESHOLD) -> ClaimVerdict:
    """Supported when enough content words appear in the context and every number does."""
    return _judge(claim, ContextIndex.build(context, content_words), threshold)


def _judge(claim: str, index: ContextIndex, threshold: float = SUPPORT_THRESHOLD) -> ClaimVerdict:
    words = frozenset(content_words(claim))
    coverage = len(words & index.words) / len(words) if words else 1.0
    missing_numbers = numbers(claim) - index.numbers
    verdict: ClaimLabel
    if coverage >= threshold and not missing_numbers:
        verdict = "supported"
    elif coverage >= threshold:
        verdict = "contradicted"  # same subject, a figure the context does not give
    else:
        verdict = "not_enough_information"
    return ClaimVerdict(claim=claim, verdict=verdict, evidence=index.evidence(words))


def evidence_text(contexts: list[str]) -> str:
    """The contexts' sentences, one a line, without any paragraph that speaks to the grader:
    the rest of such a paragraph (an echoed answer, a fake verdict) is the same author's."""
    return "\n".join(s for c in contexts for s in SENTENCE_END.split(_unaddressed(c)))


def _unaddressed(context: str) -> str:
    parts = _PARAGRAPH.split(context)  # paragraph, separator, paragraph, ...
    kept = []
    for i in range(0, len(parts), 2):
        if not any(addressed_flags(SENTENCE_END.split(parts[i]))):
            kept.append(parts[i] + (parts[i + 1] if i + 1 < len(parts) else ""))
    return "".join(kept)


def evidence_index(contexts: list[str]) -> ContextIndex:
    """The contexts' evidence, read once for every claim of the case."""
    return ContextIndex.build(evidence_text(contexts), content_words)


def faithfulness_verdict(
    answer: str, contexts: list[str], *, budget: Budget | None = None
) -> FaithfulnessVerdict:
    return _faithfulness(answer, evidence_index(contexts), budget)


def _faithfulness(answer: str, index: ContextIndex, budget: Budget | None) -> FaithfulnessVerdict:
    claims = []
    for claim in split_claims(answer):
        if budget is not None:
            budget.check()
        claims.append(_judge(claim, index))
    return FaithfulnessVerdict(claims=claims)


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
    said = {_stem(w) for w in content_words("\n".join(answer_sentences(answer)))}
    coverage = len(terms & said) / len(terms) if terms else 1.0
    score = 5 if coverage >= 0.75 else 4 if coverage >= 0.5 else 3 if coverage >= 0.3 else 2
    if coverage == 0:
        score = 1
    rationale = f"The answer uses {len(terms & said)} of {len(terms)} question terms."
    return RelevanceVerdict(rationale=rationale, abstained=False, score=score)  # type: ignore[arg-type]


def _quality(
    question: str, answer: str, index: ContextIndex | None, budget: Budget | None
) -> float:
    relevance = relevance_verdict(question, answer)
    rel = 0.0 if relevance.abstained else (relevance.score - 1) / 4
    if index is None:
        return rel
    _, faith, _ = score_verdict(_faithfulness(answer, index, budget))
    return 0.5 * rel + 0.5 * (faith if faith is not None else 0.5)


def pairwise_verdict(
    question: str,
    answer_a: str,
    answer_b: str,
    contexts: list[str],
    *,
    budget: Budget | None = None,
) -> PairwiseVerdict:
    """The answer with the higher rules quality wins; within TIE_MARGIN it is a tie."""
    index = evidence_index(contexts) if contexts else None
    qa = _quality(question, answer_a, index, budget)
    qb = _quality(question, answer_b, index, budget)
    if abs(qa - qb) <= TIE_MARGIN:
        return PairwiseVerdict(rationale=f"Quality {qa:.2f} vs {qb:.2f}: too close.", winner="tie")
    winner: Literal["A", "B"] = "A" if qa > qb else "B"
    return PairwiseVerdict(rationale=f"Quality A {qa:.2f} vs B {qb:.2f}.", winner=winner)


class RulesJudge:
    """Backend that grades with the rules above; never touches the network.

    `time_budget_s` bounds one case (None: no bound); a case over it, or one whose caller
    stopped waiting, ends as an `api_error` record and its worker thread stops."""

    name = "rules"

    def __init__(self, *, time_budget_s: float | None = None) -> None:
        self.time_budget_s = time_budget_s

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        budget = Budget(self.time_budget_s)
        if case_size(case) < OFFLOAD_CHARS:
            return self._outcome(rubric, case, budget)
        try:
            return await asyncio.to_thread(self._outcome, rubric, case, budget)
        finally:
            budget.cancel()  # if we were cancelled, the thread stops at its next check

    def _outcome(self, rubric: Rubric, case: Case, budget: Budget) -> Outcome:
        try:
            return self.evaluate_sync(rubric, case, budget=budget)
        except BudgetExceeded as exc:
            return Outcome(status="api_error", judge=RULES_INFO, error=str(exc))

    def evaluate_sync(self, rubric: Rubric, case: Case, *, budget: Budget | None = None) -> Outcome:
        question = case.question or ""
        verdict: FaithfulnessVerdict | RelevanceVerdict | PairwiseVerdict
        if rubric.kind == "faithfulness":
            verdict = faithfulness_verdict(case.answer or "", case.contexts, budget=budget)
        elif rubric.kind == "relevance":
            verdict = relevance_verdict(question, case.answer or "")
        else:
            verdict = pairwise_verdict(
                question, case.answer_a or "", case.answer_b or "", case.contexts, budget=budget
            )
        status, _, _ = score_verdict(verdict)
        return Outcome(status=status, judge=RULES_INFO, verdict=verdict)

    def cache_identity(self) -> None:
        return None  # cheaper to recompute than to look up

    async def aclose(self) -> None:
        return None


def case_size(case: Case) -> int:
    """Characters of text the rules judge reads for `case`."""
    texts = (case.question, case.answer, case.answer_a, case.answer_b, *case.contexts)
    return sum(len(t) for t in texts if t)
