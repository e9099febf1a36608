"""A verdict's confidence from the judge's own token probabilities (`logprobs`).

The judge writes its verdict as JSON; where the endpoint returns log-probabilities with
their top alternatives (OpenAI's `choices[0].logprobs.content[*]`: token, logprob,
top_logprobs), the probability of each choice it wrote can be read at the tokens where it
wrote it. The kind says where its label comes from (`Kind.label_sites`: a path in the
verdict and the values allowed there) and how the sites combine
(`Kind.label_confidence`); this module finds each site's tokens and turns them into a
distribution over the allowed values.

At a site, the value's JSON text (`"supported"`, `4`, `true`) is walked token by token
along what was written. At each token, the candidates (its top alternatives, and the
token itself) are matched against the allowed values still possible after the text
written so far: a candidate fits a value when the text so far plus the candidate is a
start of that value's JSON, or runs past its end into what may follow it (a number must
then end there: `1,` fits 1, `10` does not). Candidates that fit no allowed value (other
text, a different layout) are left out: the distribution is normalised over the allowed
values. With T the mass of the fitting candidates and W that of those that fit what was
written, the written value keeps W / T of its probability, and each other candidate's
share goes to the values it fits (split evenly when it fits several). A label written in
one token is the usual case: the distribution is the softmax of the top alternatives at
that token, restricted to the allowed labels. A label written in several tokens is
decided at the token where the labels part (`not_enough_information` vs `supported`:
its first), and a value that is the start of another (`1` and `10`) at the token after
it. Nothing is read when the tokens do not spell the reply, the verdict's JSON cannot be
found in it, or a value is written in some other form: the record has no confidence.

Probabilities are read in bytes (the `bytes` OpenAI gives with each token, else the
token's UTF-8), so a character split over two tokens keeps its place.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from judge.client import TokenLogprob
from judge.kinds import LabelSite

if TYPE_CHECKING:
    from judge.rubric import Rubric

Path = tuple[str | int, ...]
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")
_WHITESPACE = " \t\r\n"
_NUMBER_GOES_ON = frozenset(b"0123456789.eE+-")
_MAX_STARTS = 16  # places a JSON object may start in a reply with prose around it


def logprob_confidence(
    rubric: Rubric,
    verdict: BaseModel,
    label: str | None,
    text: str,
    tokens: Sequence[TokenLogprob],
) -> float | None:
    """The confidence in `label` from the tokens of the reply `text` (module docstring),
    on 0..1 and rounded to 6 decimals; None when the kind has no site for it or the
    tokens cannot be read there."""
    behaviour = rubric.behaviour
    sites = behaviour.label_sites(rubric, verdict)
    if label is None or not sites or not tokens:
        return None
    raw = text.encode("utf-8")
    if b"".join(t.text for t in tokens) != raw:
        return None
    spans = value_spans(text, [site.path for site in sites])
    if spans is None:
        return None
    starts = _token_starts(tokens)
    dists = []
    for site in sites:
        start, end = spans[site.path]
        dist = site_distribution(site, raw, tokens, starts, _byte(text, start), _byte(text, end))
        if dist is None:
            return None
        dists.append(dist)
    value = behaviour.label_confidence(rubric, label, sites, dists)
    return None if value is None else round(min(1.0, max(0.0, value)), 6)


def site_distribution(
    site: LabelSite,
    raw: bytes,
    tokens: Sequence[TokenLogprob],
    starts: Sequence[int],
    start: int,
    end: int,
) -> dict[Any, float] | None:
    """The distribution over `site.allowed` read at the tokens of the value written at
    bytes [start, end) of `raw` (module docstring); None when the written text is not the
    written value's JSON."""
    encoded = {value: json.dumps(value).encode() for value in site.allowed}
    written = encoded.get(site.written)
    if written is None or raw[start:end] != written:
        return None
    number = not written.startswith(b'"')
    stop = end + 1 if number else end  # a number is decided by what ends it
    dist: dict[Any, float] = defaultdict(float)
    remaining, consumed = 1.0, b""
    index = _token_at(starts, start)
    while index < len(tokens) and starts[index] < stop:
        live = [v for v, e in encoded.items() if _fits(consumed, e, number=number)]
        if live == [site.written]:
            break  # no other value is possible any more: the rest is decided
        token = tokens[index]
        lead = raw[starts[index] : max(starts[index], start)]  # before the value begins
        matched = _matches(token, lead, consumed, {v: encoded[v] for v in live}, number)
        total = sum(p for p, _ in matched)
        if total <= 0:
            return None
        for p, values in matched:
            if site.written not in values:
                for value in values:
                    dist[value] += remaining * p / total / len(values)
        remaining *= sum(p for p, values in matched if site.written in values) / total
        consumed += token.text[len(lead) :]
        index += 1
    dist[site.written] += remaining
    return dict(dist)


def _matches(
    token: TokenLogprob, lead: bytes, consumed: bytes, live: dict[Any, bytes], number: bool
) -> list[tuple[float, list[Any]]]:
    """Each candidate at this token (the alternatives and the token itself) with its
    probability and the live values it fits; candidates that fit none are left out."""
    candidates = dict(token.top)
    candidates.setdefault(token.text, token.logprob)
    out = []
    for text, logprob in candidates.items():
        if not text.startswith(lead):
            continue
        so_far = consumed + text[len(lead) :]
        values = [v for v, e in live.items() if _fits(so_far, e, number=number)]
        if values:
            out.append((math.exp(logprob), values))
    return out


def _fits(so_far: bytes, encoded: bytes, *, number: bool) -> bool:
    """Whether text written so far can be (the start of) `encoded` followed by the rest of
    the JSON: a prefix of it, or it whole followed by a character that ends a number."""
    if encoded.startswith(so_far):
        return True
    if not so_far.startswith(encoded):
        return False
    after = so_far[len(encoded) : len(encoded) + 1]
    return not number or not after or after[0] not in _NUMBER_GOES_ON


def _token_starts(tokens: Sequence[TokenLogprob]) -> list[int]:
    starts, at = [], 0
    for token in tokens:
        starts.append(at)
        at += len(token.text)
    return starts


def _token_at(starts: Sequence[int], offset: int) -> int:
    """The index of the token holding byte `offset` (the last token starting at or before it)."""
    low, high = 0, len(starts)
    while high - low > 1:
        middle = (low + high) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle
    return low


def _byte(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def value_spans(text: str, paths: Sequence[Path]) -> dict[Path, tuple[int, int]] | None:
    """The character span of the JSON value at each path of the first JSON object in
    `text` (a code fence or prose around it allowed) that has every one of `paths`; None
    when there is none."""
    for count, start in enumerate(m.start() for m in re.finditer(r"\{", text)):
        if count >= _MAX_STARTS:
            break
        scanner = _Scanner(text)
        try:
            scanner.value(start, ())
        except (ValueError, IndexError, RecursionError):
            continue
        if all(path in scanner.spans for path in paths):
            return {path: scanner.spans[path] for path in paths}
    return None


class _Scanner:
    """A JSON reader that records where each scalar value is (its path and span)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: dict[Path, tuple[int, int]] = {}

    def skip(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in _WHITESPACE:
            i += 1
        return i

    def value(self, i: int, path: Path) -> int:
        i = self.skip(i)
        first = self.text[i]
        if first == "{":
            return self.members(i, path)
        if first == "[":
            return self.items(i, path)
        if first == '"':
            end = json.decoder.scanstring(self.text, i + 1)[1]  # type: ignore[attr-defined]
        else:
            match = _SCALAR.match(self.text, i)
            if match is None:
                raise ValueError(f"no JSON value at {i}")
            end = match.end()
        self.spans[path] = (i, end)
        return end

    def members(self, i: int, path: Path) -> int:
        i = self.skip(i + 1)
        if self.text[i] == "}":
            return i + 1
        while True:
            if self.text[i] != '"':
                raise ValueError(f"no key at {i}")
            key, i = json.decoder.scanstring(self.text, i + 1)  # type: ignore[attr-defined]
            i = self.skip(i)
            if self.text[i] != ":":
                raise ValueError(f"no colon at {i}")
            i = self.skip(self.value(i + 1, (*path, key)))
            if self.text[i] == "}":
                return i + 1
            if self.text[i] != ",":
                raise ValueError(f"no comma at {i}")
            i = self.skip(i + 1)

    def items(self, i: int, path: Path) -> int:
        i = self.skip(i + 1)
        if self.text[i] == "]":
            return i + 1
        index = 0
        while True:
            i = self.skip(self.value(i, (*path, index)))
            if self.text[i] == "]":
                return i + 1
            if self.text[i] != ",":
                raise ValueError(f"no comma at {i}")
            i, index = i + 1, index + 1
