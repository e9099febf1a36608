"""Word-overlap building blocks of the rules judge, shared by the kinds' rules verdicts.

Known limits of lexical overlap: it misses paraphrases and subtle contradictions (a
negation, a swapped subject). Numbers are read as numbers whatever their form, with their
unit and qualifier (`judge.lexical.quantities`), so that "40 days", "nine business days"
or "30 days" for "up to 30 days" is not supported by a context that says otherwise, and is
`contradicted` when the evidence states another value for the same thing. Only material
sentences are claims (`judge.lexical.material`): greetings, thanks, offers of help,
restated questions and a bare "Yes." are not.

Text addressed to the grader never counts (`judge.lexical.screen`): a context paragraph
that speaks to the grader is not evidence; in an answer sentence the addressed span goes
and the rest is still a claim, so a grading word cannot hide a claim; an addressed answer
sentence is not relevant text. An answer cannot raise its own score. The work is near-linear
in the case's size (`judge.lexical.index`).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal, NamedTuple

from judge.lexical.citations import strip_markers
from judge.lexical.fold import digits, fold
from judge.lexical.index import SENTENCE_END, Budget, BudgetExceeded, ContextIndex
from judge.lexical.material import (
    is_courtesy,
    is_restated_question,
    is_restatement,
    is_yes_no,
    strip_restatement,
    strip_yes_no,
)
from judge.lexical.quantities import NUMBER_WORDS, quantities, same_thing, stated
from judge.lexical.screen import addressed_flags, normalise, strip_addressed

__all__ = [
    "Budget",
    "BudgetExceeded",
    "ClaimCheck",
    "ContextIndex",
    "answer_sentences",
    "check_claim",
    "content_words",
    "declines",
    "evidence_index",
    "evidence_text",
    "exact_match",
    "judge_claim",
    "normalise_answer",
    "split_claims",
    "strip_markers",
    "term_coverage",
    "token_f1",
    "token_overlap",
]

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
# an answer's sentence also ends after a quoted question: 'You asked: "Can I?" No.'
_CLAIM_END = re.compile(r"(?:(?<=[.!?])|(?<=\?[\"\u201d\u2019']))\s+")
# "Verified: <an earlier claim>" repeats that claim: the label does not make it a new one.
_LABEL = re.compile(r"^[\w ]{1,30}:\s*")
_PARAGRAPH = re.compile(r"(\n\s*\n)")
_CLAUSE_BREAK = re.compile(r";\s+|,\s+(?=(?:and|but|while|whereas|although|so)\s)")
_ABSTAIN = re.compile(
    r"\b(i (do not|don't|cannot|can't) (know|say|tell|find|answer)|i'?m not sure|i am not sure"
    r"|(cannot|can't|could not|couldn't|unable to) (find|answer|determine|tell|locate)"
    r"|(do not|don't|did not|didn't) have (any |enough )?(information|details|data)"
    r"|(no|not enough) information|(is|are) not (mentioned|stated|specified|covered|provided)"
    r"|(does|do) not (say|mention|specify|state|cover)|doesn't (say|mention|specify|state|cover))\b"
)

ClaimLabel = Literal["supported", "contradicted", "not_enough_information"]


class ClaimCheck(NamedTuple):
    """One claim checked against the evidence: its verdict and the best evidence sentence."""

    claim: str
    verdict: ClaimLabel
    evidence: str


def content_words(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens of the folded text (`judge.lexical.fold`: full-width,
    styled and look-alike letters read as plain ones), stop words removed."""
    return [w for w in _WORD.findall(fold(text).lower()) if w not in STOPWORDS]


def claim_words(text: str) -> list[str]:
    """Content words with spelt numbers as digits, claims and contexts alike ("one hundred
    and twenty" is "120" by text2num, `judge.lexical.fold.digits`; "ten" is "10"; "percent"
    goes, as "%" is no word): the words a claim and its evidence are compared on."""
    return [d for w in content_words(digits(fold(text))) if (d := NUMBER_WORDS.get(w, w))]


def token_overlap(prediction: str, reference: str) -> tuple[int, int, Counter[str]]:
    """(prediction's content words, reference's content words, the words they share as a
    multiset: a word twice in each is shared twice)."""
    pred, ref = Counter(content_words(prediction)), Counter(content_words(reference))
    return sum(pred.values()), sum(ref.values()), pred & ref


def token_f1(prediction: str, reference: str) -> float:
    """Harmonic mean of content-word precision and recall (multiset overlap); 0 when none.

    precision = shared / prediction's words, recall = shared / reference's words. The
    reference document's worked examples give 0.4706 and 0.5833 (tests/unit/test_rules.py)."""
    predicted, wanted, shared = token_overlap(prediction, reference)
    overlap = sum(shared.values())
    if not overlap:
        return 0.0
    precision, recall = overlap / predicted, overlap / wanted
    return 2 * precision * recall / (precision + recall)


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = re.compile(r"[^\w\s]")


def normalise_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, punctuation and the articles a, an, the
    removed, white space collapsed."""
    text = _ARTICLES.sub(" ", _PUNCTUATION.sub("", text.lower()))
    return " ".join(text.split())


def exact_match(prediction: str, reference: str) -> bool:
    """Whether the two answers are the same text once normalised (`normalise_answer`)."""
    return normalise_answer(prediction) == normalise_answer(reference)


def answer_sentences(answer: str, question: str = "") -> list[str]:
    """The answer's sentences, stripped, without those addressed to the grader (a quotation
    that runs over sentence ends screened whole: dropping text only lowers relevance),
    without restatements of `question` (its own words are not an answer to it) and without
    courtesy ("happy to help with anything else" answers nothing)."""
    sentences = [s.strip() for s in SENTENCE_END.split(strip_restatement(answer.strip()))]
    flags = addressed_flags(sentences)
    kept = (
        strip_restatement(s) for s, addressed in zip(sentences, flags, strict=True) if not addressed
    )
    return [s for s in kept if s and not is_restatement(s, question) and not is_courtesy(s)]


def declines(answer: str) -> bool:
    """Whether the answer only declines: no sentence but abstentions ("I don't know"),
    courtesy and text addressed to the grader. A question is not declining (it can be the
    answer asked for)."""
    for sentence in SENTENCE_END.split(answer.strip()):
        rest = strip_addressed(sentence.strip())
        folded = fold(rest).lower()
        if not rest or not _WORD.search(folded) or _ABSTAIN.search(folded):
            continue
        if not is_courtesy(rest):
            return False
    return True


def split_claims(answer: str, question: str = "") -> list[str]:
    """The answer's material claims: sentences, long ones split again at clause boundaries.

    Left out: the span of a sentence addressed to the grader (the rest of the sentence
    stays a claim), abstentions, courtesy (greetings, thanks, offers of help), restated
    questions, bare yes/no answers (the next sentence carries their content; an answer that
    is only "Yes." is judged against `question`) and repeats of an earlier claim (an echo,
    also behind a short label such as "Verified:"). Sentences are screened one by one here:
    a dropped claim raises faithfulness, so a quotation must not carry the claims around an
    instruction away with it."""
    claims: list[str] = []
    seen: set[str] = set()
    bare_answer = ""
    for raw in (s.strip() for s in _CLAIM_END.split(strip_restatement(answer.strip()))):
        sentence = strip_addressed(raw)
        if not sentence or _ABSTAIN.search(fold(sentence).lower()):
            continue
        body = _LABEL.sub("", sentence)  # "To recap: no." is a bare "no"
        if is_yes_no(body):
            bare_answer = bare_answer or body
            continue
        if is_courtesy(body) or is_restated_question(sentence):
            continue
        parts = [sentence]
        if len(sentence.split()) > LONG_CLAIM_WORDS:
            parts = [p.strip() for p in _CLAUSE_BREAK.split(sentence) if p.strip()]
        for part in parts:
            if (key := _LABEL.sub("", normalise(part))) not in seen:
                seen.add(key)
                claims.append(part)
    if not claims and bare_answer and question.strip():
        claims.append(f"{bare_answer.rstrip('.!')}: {question.strip()}")
    return claims


def judge_claim(claim: str, context: str, threshold: float = SUPPORT_THRESHOLD) -> ClaimCheck:
    """Supported when enough content words appear in the context and every number does."""
    return check_claim(claim, ContextIndex.build(context, claim_words), threshold)


def check_claim(
    claim: str, index: ContextIndex, threshold: float = SUPPORT_THRESHOLD
) -> ClaimCheck:
    """One claim against an evidence index: supported when enough of its content words are
    there and the context states each of its figures (value and qualifier agree; a spelt
    count only where the evidence gives another value for the same thing); contradicted
    when the words are there but a figure is not, and the evidence states another value or
    bound for the same thing (or the figure has no unit to tell)."""
    # "[2]" is a citation, not a figure the context must give; "Yes," is no content word
    text = strip_yes_no(strip_markers(claim))
    words = frozenset(claim_words(text))
    coverage = len(words & index.words) / len(words) if words else 1.0
    evidence = index.evidence(words)
    missing = [q for q in quantities(text) if not stated(q, index.quantities.get(q.value, []))]
    if missing:
        given = quantities(evidence)
        # a spelt count the evidence says nothing about is left to the content words
        missing = [q for q in missing if not q.spelt or same_thing(q, given)]
    verdict: ClaimLabel
    if coverage >= threshold and not missing:
        verdict = "supported"
    elif coverage >= threshold and any(q.unit is None or same_thing(q, given) for q in missing):
        verdict = "contradicted"  # same subject, another figure or bound for the same thing
    else:
        verdict = "not_enough_information"
    return ClaimCheck(claim, verdict, evidence)


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
    return ContextIndex.build(evidence_text(contexts), claim_words)


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def term_coverage(question: str, text: str) -> tuple[int, int]:
    """(question terms the text uses, question terms): stemmed content words of the question
    that are not question words; text addressed to the grader does not count."""
    terms = {stem(w) for w in content_words(question) if w not in QUESTION_WORDS}
    said = {stem(w) for w in content_words("\n".join(answer_sentences(text, question)))}
    return len(terms & said), len(terms)
