"""Which answer sentences are material claims, and which only frame the answer.

The faithfulness rubric says "skip greetings": a sentence that asserts nothing about the
world cannot be supported or contradicted, and counting it as a claim marks a polite answer
unfaithful. Not claims:

- courtesy: a sentence every content word of which belongs to the vocabulary of greeting,
  thanking and offering help (COURTESY_WORDS, beside function words and pronouns): "Thank
  you for your question, I am happy to help with this.", "Hi there!", "Let me know if there
  is anything else I can do." A sentence with one other content word ("Thanks: the trial
  lasts 14 days") is a claim;
- a restated question: a sentence that ends in a question mark (a question asserts
  nothing), or one framed as what the reader asked ("You asked: ...", "Your question is
  whether ..."). For relevance only a framed restatement or the question itself again is
  one (`is_restatement`): a question can be the answer ("Make this sentence a question");
- a bare yes or no ("Yes.", "No!", "Sure."): it says nothing on its own. Followed by a
  sentence, that sentence carries its content and is the claim; an answer that is nothing
  but a yes or no is judged against the question it answers ("Yes: can I ...").

A leading "Yes," or "No," of a sentence is left out of the words a claim is checked on: the
context never says "yes".
"""

from __future__ import annotations

import re

from judge.lexical.fold import fold

__all__ = [
    "YES_NO",
    "is_courtesy",
    "is_restated_question",
    "is_restatement",
    "is_yes_no",
    "strip_restatement",
    "strip_yes_no",
]

_COURTESY_WORDS_TEXT = (
    "hi hello hey dear greetings good morning afternoon evening thank thanks thankyou "
    "cheers welcome glad happy pleased delighted help helps helped helping assist "
    "assistance hope hoping question questions asking ask reaching reach out contact "
    "contacting please let know feel free anything else further more other additional "
    "great excellent good sure certainly course absolutely apologies sorry inconvenience "
    "regards best wishes day nice wonderful there all again much very really kind kindly "
    "care luck enjoy answer clarify clarification concern concerns query queries info "
    "information provide providing explain explaining here note always anytime time ever "
)
COURTESY_WORDS = frozenset(_COURTESY_WORDS_TEXT.split())
# function words and pronouns: they carry no claim on their own
_FUNCTION_TEXT = (
    "i i'm im i'd i'll i've me my mine we we're we'd we'll our us you you're your yours "
    "it it's its this that these those the a an and or but so if is are am was were be "
    "been being do does did doing can could will would shall should may might must have "
    "has had to of in on for with at by from about as any some what which who how when "
    "where why just also too not no yes there here than then up now today "
)
_FUNCTION = frozenset(_FUNCTION_TEXT.split())
_YES_NO_TEXT = (
    "yes no yeah yep nope nah sure correct right indeed absolutely certainly definitely "
    "unfortunately "
)
YES_NO = frozenset(_YES_NO_TEXT.split())
_WORD = re.compile(r"[a-z']+|\d+")
_ASKED = re.compile(
    r"^\s*(?:you(?:'ve| have)? asked|you(?:'re| are) asking|you want(?:ed)? to know"
    r"|your question (?:is|was)|regarding your question|as for your question"
    r"|to answer your question)\b"
)
_LEADING_YES_NO = re.compile(
    r"^\s*(?:yes|no|yeah|yep|nope|sure|correct|indeed|absolutely|certainly)\b\s*[,;:\u2014\-]\s*",
    re.IGNORECASE,
)


def _words(sentence: str) -> list[str]:
    return _WORD.findall(fold(sentence).lower().replace("\u2019", "'"))


def is_courtesy(sentence: str) -> bool:
    """Whether every content word of the sentence is one of greeting, thanks or help (a bare
    yes or no is an answer, not courtesy: `is_yes_no`)."""
    words = [w for w in _words(sentence) if w not in _FUNCTION]
    if not _words(sentence) or is_yes_no(sentence):
        return False
    return all(w in COURTESY_WORDS for w in words)


def is_restated_question(sentence: str) -> bool:
    """A question (it ends in "?", closing quotes aside) or what the reader asked."""
    text = sentence.strip().rstrip("\"'\u201d\u2019)] ")
    return text.endswith("?") or bool(_ASKED.match(fold(sentence).lower()))


def is_restatement(sentence: str, question: str) -> bool:
    """What the reader asked, said back: framed so ("You asked: ...") or the question
    itself again. Any other question stays text for relevance: a question can be the
    answer ("Make this sentence a question")."""
    if _ASKED.match(fold(sentence).lower()):
        return True
    return is_restated_question(sentence) and _words(sentence) == _words(question)


_QUOTED_ASK = re.compile(
    r"^\s*(?:you(?:'ve| have)? asked|you(?:'re| are) asking|you want(?:ed)? to know"
    r"|your question (?:is|was))\s*:?\s*[\"\u201c][^\"\u201d]*[\"\u201d]\s*",
    re.IGNORECASE,
)


def strip_restatement(sentence: str) -> str:
    """The sentence without a leading quoted restatement ('You asked: "...?" The trial
    lasts 14 days.' is 'The trial lasts 14 days.')."""
    return _QUOTED_ASK.sub("", sentence, count=1)


def is_yes_no(sentence: str) -> bool:
    """A bare yes or no: one or two answer words and nothing else ("Yes.", "No, sorry.")."""
    words = _words(sentence)
    return (
        bool(words)
        and len(words) <= 3
        and words[0] in YES_NO
        and all(w in YES_NO or w in COURTESY_WORDS or w in _FUNCTION for w in words)
    )


def strip_yes_no(sentence: str) -> str:
    """The sentence without a leading "Yes," / "No," (the words its claim is checked on)."""
    return _LEADING_YES_NO.sub("", sentence, count=1)
