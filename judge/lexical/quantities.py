"""Numbers as numbers, whatever their form, with the unit and the qualifier around them.

A claim's figure must be the context's figure for the same thing: "two business days" is
2 business days whether written "2", "two" or "a couple of"; "a fortnight" is 14 days;
"once" is 1 time; "10%" is "ten percent"; "1st" is "first"; "half" is 0.5. Each figure in a
text becomes a `Quantity`: its value, its unit (the noun after it, singular and with a few
synonyms merged: weeks become days, "working days" are "business days") and its qualifier
(the bound before it):

    cap    up to, at most, no more than, a maximum of, not exceeding
    floor  at least, no less than, a minimum of, or more
    above  more than, over, above, exceeding      below  less than, under, fewer than, below
    only   only, just, exactly                     window within, in, inside
    none   anything else

A figure in digits is one the context must give, as before; a spelt count ("the two films",
"both", "three subjects") is often the writer's own reckoning, so it counts against a claim
only where the evidence states another value for the same kind of thing (`same_thing`).

A claim's quantity is stated by the context when the context holds one with the same value
(in the base unit: "one hour" is 60 minutes) and a qualifier that agrees
(`qualifiers_agree`): the same class, or `none`/`only` against `window` ("within 30 days"
and "you have 30 days" say one thing, reference 000), while a bound against a plain figure
does not ("up to 30 days" is overstated as "30 days"). A number word counts only where it
quantifies a noun ("two days", not "one of them" or "First, log in"), so pronoun and adverb
uses are not figures the context must give.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from judge.lexical.fold import digits, fold

__all__ = ["NUMBER_WORDS", "Quantity", "qualifiers_agree", "quantities", "same_thing", "stated"]

_UNITS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "zero": 0, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "dozen": 12,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_ORDINALS = {
    "first": 1, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "fifteenth": 15,
    "twentieth": 20, "thirtieth": 30,
}  # fmt: skip
_FRACTIONS = {"half": 0.5, "halves": 0.5, "quarter": 0.25, "quarters": 0.25, "thirds": 1 / 3}
# words that are a figure and its unit at once
_WORD_AMOUNTS = {
    "once": (1.0, "time"),
    "twice": (2.0, "time"),
    "fortnight": (14.0, "day"),
    "fortnights": (28.0, "day"),
    "couple": (2.0, None),
}
_UNIT_SCALE = {"week": ("day", 7.0), "hour": ("minute", 60.0)}
_UNIT_SYNONYMS = {
    "percent": "%", "per cent": "%", "pct": "%", "dollar": "$", "usd": "$", "buck": "$",
    "euro": "€", "eur": "€", "pound": "£", "gbp": "£", "working day": "business day",
    "workday": "business day", "weekday": "business day", "calendar day": "day",
    "times": "time", "hr": "hour", "min": "minute", "yr": "year", "mo": "month",
}  # fmt: skip
_CURRENCY = {"$": "$", "€": "€", "£": "£"}
_TWO_WORD_UNITS = {"business day", "working day", "calendar day", "per cent"}
# what may follow a number word without making it a figure ("one of", "first, ...")
_NOT_A_NOUN_TEXT = (
    "of the a an and or to in on for with at by from who that which is are was were be it "
    "this these those you your we our they their he she his her its as if but so than "
    "then more less can will would should may might must do does did has have had not no "
)
_NOT_A_NOUN = frozenset(_NOT_A_NOUN_TEXT.split())
_QUALIFIERS: list[tuple[str, str]] = [
    ("no more than", "cap"), ("not more than", "cap"), ("up to", "cap"), ("at most", "cap"),
    ("a maximum of", "cap"), ("maximum of", "cap"), ("maximum", "cap"), ("max", "cap"),
    ("not exceeding", "cap"), ("no later than", "cap"),
    ("no less than", "floor"), ("not less than", "floor"), ("at least", "floor"),
    ("a minimum of", "floor"), ("minimum of", "floor"), ("minimum", "floor"),
    ("more than", "above"), ("over", "above"), ("above", "above"), ("exceeding", "above"),
    ("less than", "below"), ("fewer than", "below"), ("under", "below"), ("below", "below"),
    ("only", "only"), ("just", "only"), ("exactly", "only"),
    ("within", "window"), ("inside", "window"), ("in", "window"),
]  # fmt: skip
_PREPOSITIONS = frozenset({"over", "under", "above", "below"})
_TOKEN = re.compile(
    r"\d+/\d+|\d+(?:[.,]\d+)*(?:st|nd|rd|th)?|[$€£%\-\u2013,;:()]|[a-z]+(?:-[a-z]+)*"
)
_DIGITS = re.compile(r"(\d+(?:[.,]\d+)*)(st|nd|rd|th)?$")
_CONNECTORS = frozenset({"-", "to", "and", "or", "\u2013"})


class Quantity(NamedTuple):
    """One figure of a text: its value, unit (None when no noun follows), qualifier and
    whether it was spelt out ("two", "once", "a fortnight") rather than written in digits."""

    value: float
    unit: str | None
    qualifier: str
    spelt: bool = False


def _unit_of(tokens: list[str], i: int) -> tuple[str | None, float]:
    """The unit noun at tokens[i] (singular, synonyms merged) and its scale to the base."""
    if i >= len(tokens):
        return None, 1.0
    word = tokens[i]
    if word in _CURRENCY or word == "%":
        return word, 1.0
    if not word.isalpha() or word in _NOT_A_NOUN or _number_word(tokens, i) is not None:
        return None, 1.0
    pair = f"{word} {tokens[i + 1]}" if i + 1 < len(tokens) else ""
    word = _singular(pair) if _singular(pair) in _TWO_WORD_UNITS else _singular(word)
    word = _UNIT_SYNONYMS.get(word, word)
    base, scale = _UNIT_SCALE.get(word, (word, 1.0))
    return base, scale


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _number_word(tokens: list[str], i: int) -> tuple[float, int] | None:
    """(value, tokens used) of a spelt number starting at tokens[i] ("twenty-one", "two
    hundred", "a dozen", "a third"), or None."""
    word = tokens[i]
    if word not in _UNITS and word not in ("a", "an") and "-" not in word:
        return None  # the common case, checked first: most words are no number
    if word in ("a", "an") and i + 1 < len(tokens):
        nxt = tokens[i + 1]
        if nxt in ("dozen", "hundred", "thousand", "million", "half", "quarter", "third"):
            value = {"half": 0.5, "quarter": 0.25, "third": 1 / 3}.get(nxt, _UNITS.get(nxt, 0))
            return float(value or _SCALES[nxt]), 2
        return None
    parts = word.split("-")
    if all(p in _UNITS for p in parts) and parts:
        value, used = _compound(tokens, i)
        if i + used < len(tokens) and tokens[i + used] in ("half", "halves", "quarter"):
            value *= _FRACTIONS[tokens[i + used]]  # "one half", "three quarters"
            used += 1
        return value, used
    return None


def _spelt(token: str) -> bool:
    return all(p in _UNITS for p in token.split("-"))


def _compound(tokens: list[str], i: int) -> tuple[float, int]:
    """(value, tokens used) of the number words from tokens[i], read by text2num
    (`judge.lexical.fold.digits`): "one hundred and twenty" is 120, "two thousand five
    hundred" 2500. The run is the number words there, with the "and" between them."""
    end = i
    while end < len(tokens) and (
        _spelt(tokens[end])
        or tokens[end] in _SCALES
        or (tokens[end] == "and" and end + 1 < len(tokens) and _spelt(tokens[end + 1]))
    ):
        end += 1
    run = tokens[i:end]
    read = digits(" ".join(run)).split()
    if read and _DIGITS.match(read[0]):
        used = len(run) - (len(read) - 1)  # the words after the number were not part of it
        return float(read[0].replace(",", "")), max(1, used)
    parts = tokens[i].split("-")  # a lone small number text2num leaves as a word: "two"
    return float(sum(_UNITS[p] for p in parts)), 1


def _qualifier(tokens: list[str], start: int) -> str:
    """The qualifier class of the words just before tokens[start] ("none" when there is none);
    the second figure of a range ("5-7", "five to seven") has the range's. "over", "under",
    "above" and "below" bound only a figure in digits ("over $75", "under 18"): before a
    spelt count they are prepositions ("34 episodes over two seasons")."""
    if start >= 2 and tokens[start - 1] in _CONNECTORS and _is_figure(tokens, start - 2):
        return _qualifier(tokens, start - 2)
    before = " ".join(tokens[max(0, start - 3) : start])
    spelt = not (_DIGITS.match(tokens[start]) or tokens[start] in _CURRENCY)
    for phrase, name in _QUALIFIERS:
        if before == phrase or before.endswith(" " + phrase):
            if spelt and phrase in _PREPOSITIONS:
                return "none"
            return name
    after = " ".join(tokens[start : start + 6])
    if " or more" in after or " or longer" in after:
        return "floor"
    return "none"


def _is_figure(tokens: list[str], i: int) -> bool:
    return bool(_DIGITS.match(tokens[i])) or _number_word(tokens, i) is not None


def quantities(text: str) -> list[Quantity]:
    """The figures of `text`, in order (see the module docstring)."""
    tokens = _TOKEN.findall(fold(text).lower().replace("\u2019", "'"))
    found: list[Quantity] = []
    i = 0
    while i < len(tokens):
        start, value, used, unit_known = i, None, 1, False
        unit: str | None = None
        token = tokens[i]
        currency = _CURRENCY.get(token)
        if currency and i + 1 < len(tokens) and _DIGITS.match(tokens[i + 1]):
            i += 1
            token = tokens[i]
        digits = _DIGITS.match(token)
        if "/" in token:
            num, den = token.split("/")
            value = int(num) / int(den) if int(den) else None
        elif digits:
            value = float(digits[1].replace(",", ""))
            if digits[2]:
                unit_known = True  # "1st": an ordinal, whatever follows
        elif token == "half" and tokens[i + 1 : i + 2] in (["a"], ["an"]):
            value, used = 0.5, 2  # "half an hour"
        elif token in _WORD_AMOUNTS:
            value, unit = _WORD_AMOUNTS[token]
            unit_known = unit is not None
            if token == "couple" and i + 1 < len(tokens) and tokens[i + 1] == "of":
                used = 2
        elif token in _ORDINALS or token == "second":
            value = float(_ORDINALS.get(token, 2))  # a figure only before a noun: not "a second"
        elif (written := _number_word(tokens, i)) is not None:
            value, used = written
        if value is None:
            i += 1
            continue
        j = i + used
        while j < len(tokens) and tokens[j] in _CONNECTORS and j + 1 < len(tokens):
            if _is_figure(tokens, j + 1):
                j += 2  # a range, "5-7 days", "five to seven days": both take the unit
            else:
                break
        if not unit_known or unit is None:
            noun, scale = _unit_of(tokens, j)
            if noun is None and tokens[j : j + 1] == ["of"]:
                noun, scale = _unit_of(tokens, j + 1)  # "a couple of days"
            if currency:
                noun, scale = currency, 1.0
            elif noun is None and token.isalpha() and not unit_known:
                i += used  # a number word that quantifies nothing: "one of", "first,"
                continue
            if unit is None:
                unit = noun
                value *= scale
        spelt = not (digits or "/" in token)
        found.append(Quantity(round(value, 6), unit, _qualifier(tokens, start), spelt))
        i += used
    return found


_AGREE = {("none", "window"), ("window", "none"), ("only", "window"), ("window", "only")}
_AGREE |= {("none", "only"), ("only", "none")}


def qualifiers_agree(claim: str, context: str) -> bool:
    """Whether a claim's qualifier says what the context's does (module docstring)."""
    return claim == context or (claim, context) in _AGREE


def stated(claim: Quantity, context: list[Quantity]) -> bool:
    """Whether the context states the claim's quantity: the value (in the base unit) and the
    qualifier agree. The unit noun itself is the content words' business: "more than one
    package" is stated by "more than one charge" as far as figures go."""
    return any(
        abs(claim.value - q.value) < 1e-9 and qualifiers_agree(claim.qualifier, q.qualifier)
        for q in context
    )


_FAMILY = {
    **dict.fromkeys(("second", "minute", "day", "business day", "month", "year"), "duration"),
    **dict.fromkeys(("$", "€", "£", "cent"), "money"),
}


def same_thing(claim: Quantity, context: list[Quantity]) -> bool:
    """Whether the context states a value for the same kind of thing as the claim's quantity
    (the same unit, or units of one family: durations, money): then a figure or bound the
    context does not give contradicts it."""
    if claim.unit is None:
        return False
    family = _FAMILY.get(claim.unit, claim.unit)
    return any(q.unit is not None and _FAMILY.get(q.unit, q.unit) == family for q in context)


# spelt numbers as the digits a content word would be ("ten" and "10" are one word)
NUMBER_WORDS = {w: f"{v:g}" for w, v in {**_UNITS, **_ORDINALS}.items()}
NUMBER_WORDS |= {"percent": "", "pct": ""}  # "10%" has no word for its unit either
