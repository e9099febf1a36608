"""One canonical form of text for every rule of the rules judge, from maintained sources.

Letters (`fold`): NFKC (full-width, mathematical bold and italic, circled and other
compatibility letters become plain ones), zero-width and soft-hyphen characters removed,
then every remaining letter that Unicode's confusables data (TR39, as the installed
`confusable_homoglyphs` package ships it) says looks like an ASCII letter or digit read as
that one: Cyrillic "Ѕуѕtеm", Greek "Νοte", Cherokee, Latin small capitals ("ꜱᴄᴏʀᴇʀ"), ...
A letter the confusables data links only to another look-alike (small capital A links to a
Cherokee letter) is followed one more step; the Unicode name of a Latin small capital
("LATIN LETTER SMALL CAPITAL N") gives its letter where the data gives none. A letter is
only ever read as a letter and a digit as a digit, and ASCII is never changed (the
confusables data also links "l", "I" and "1").

Numbers (`digits`): number words read as digits by `text2num` ("one hundred and twenty
dollars" is "120 dollars", "twenty-one" is "21"); it leaves "one" and "two" standing alone
as words, which `judge.lexical.quantities` reads itself. The rules fold both sides, claims
and contexts alike, so a figure matches whichever way each side wrote it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from importlib import resources

from text_to_num import alpha2digit

__all__ = ["digits", "fold", "fold_char"]

# Zero-width and invisible formatting characters an attacker puts inside a word.
INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"
)
_SMALL_CAPITAL = re.compile(r"^LATIN (?:LETTER SMALL CAPITAL|SMALL CAPITAL LETTER) ([A-Z])$")
# any English number word text2num reads; a text with none is returned as it is, unparsed
_NUMBER_WORD = re.compile(
    r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
    r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty"
    r"|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|first|second|third"
    r"|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|twentieth|thirtieth)",
    re.IGNORECASE,
)


@cache
def _confusables() -> dict[str, list[str]]:
    """Unicode's confusables, as `confusable_homoglyphs` ships them: character -> the
    characters it can be mistaken for."""
    data = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text()
    table = json.loads(data)
    return {char: [h["c"] for h in entry] for char, entry in table.items()}


def _same_kind(char: str, target: str) -> bool:
    return (char.isalpha() and target.isalpha()) or (char.isdigit() and target.isdigit())


@cache
def fold_char(char: str) -> str:
    """The ASCII letter or digit a non-ASCII character is a look-alike of (module
    docstring), else the character itself."""
    if char.isascii() or not char.isalnum():
        return char
    if char.isdecimal():  # a digit of any script: Arabic-Indic, Devanagari, ...
        return str(unicodedata.decimal(char))
    table = _confusables()
    seen, frontier = {char}, [char]
    for _ in range(2):  # the character's look-alikes, then theirs
        step = []
        for current in frontier:
            for other in table.get(current, ()):
                if len(other) == 1 and other.isascii() and other.isalnum():
                    if _same_kind(char, other):
                        return other
                elif other not in seen:
                    seen.add(other)
                    step.append(other)
        frontier = step
    named = _SMALL_CAPITAL.match(unicodedata.name(char, ""))
    return named[1].lower() if named else char


def fold(text: str) -> str:
    """`text` with its letters in one canonical form (module docstring). ASCII text is
    returned as it is."""
    if text.isascii():
        return text
    text = INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    if text.isascii():
        return text
    return "".join(fold_char(c) for c in text)


def digits(text: str) -> str:
    """`text` with its number words as digits (text2num's `alpha2digit`, English)."""
    if not _NUMBER_WORD.search(text):
        return text
    return str(alpha2digit(text, "en"))
