"""`calibration.io.jsontext`: untrusted JSON is refused for depth or size before the parser
sees it (issue 33, defect 1), counted on the text as the parser would read it; every reader
of outside JSON goes through it (the judge's reply, the reply body, cache entries, batch
results, records, row files)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calibration.io.jsontext import (
    MAX_DEPTH,
    JsonLimitError,
    loads_bounded,
    nested_too_deep,
    text_too_deep,
)
from judge.engine.cache import decode_entry
from judge.engine.parse import MAX_RAW_CHARS, ParseError, kept_raw, parse_verdict
from judge.kinds.faithfulness import FaithfulnessVerdict


def nest(depth: int, opening: str = "[", closing: str = "]", inner: str = "") -> str:
    return opening * depth + inner + closing * depth


@pytest.mark.parametrize(
    "text",
    [
        nest(MAX_DEPTH + 1),
        nest(MAX_DEPTH + 1, '{"a":', "}", "1"),
        nest(100_000),
        '{"x": "]]]]", "y": ' + nest(MAX_DEPTH + 1) + "}",  # brackets in strings do not count
        '["\\"' + '", ' + nest(MAX_DEPTH) + "]",  # an escaped quote does not end the string
    ],
)
def test_too_deep_is_refused_before_parsing(text: str) -> None:
    assert text_too_deep(text) and text_too_deep(text.encode())
    with pytest.raises(JsonLimitError, match="nested more than"):
        loads_bounded(text)
    with pytest.raises(ValueError):  # a caller's "not JSON" branch handles it
        loads_bounded(text.encode())


@pytest.mark.parametrize(
    "text",
    [
        nest(MAX_DEPTH),
        json.dumps({"s": "[" * 10_000}),  # deep only inside a string
        json.dumps([[i] for i in range(1000)]),  # many brackets, shallow
        '{"a": "\\\\", "b": ' + nest(MAX_DEPTH - 1) + "}",  # an escaped backslash ends nothing
    ],
)
def test_shallow_json_is_parsed(text: str) -> None:
    assert not text_too_deep(text)
    assert loads_bounded(text) == json.loads(text)


@given(
    st.recursive(
        st.none() | st.text(max_size=5),
        lambda c: st.lists(c) | st.dictionaries(st.text(max_size=3), c),
        max_leaves=30,
    )
)
def test_the_text_count_agrees_with_the_parsed_depth(data: object) -> None:
    text = json.dumps(data)
    for limit in (1, 2, 3, 5):
        assert text_too_deep(text, limit) == nested_too_deep(data, limit)


# strings full of what the depth count deletes, keeps or unescapes (issue 54): brackets,
# quotes, backslashes, the escape letters, JSON text inside a string, non-ASCII text
_TRICKY = st.text(alphabet='[]{}"\\/bfnrtu x\n\té€😀', max_size=12)


@given(
    st.recursive(
        st.none() | _TRICKY | st.integers(),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(_TRICKY, c, max_size=4),
        max_leaves=40,
    ),
    st.booleans(),
)
def test_the_count_skips_every_kind_of_string_content(data: object, ascii_only: bool) -> None:
    """The linear count (issue 54) agrees with the parsed depth whatever the strings hold,
    escaped or not, as text and as bytes; a string that is JSON text counts for nothing."""
    text = json.dumps(data, ensure_ascii=ascii_only)
    inside = json.dumps({"content": text})  # a tool result: the whole document as a string
    for limit in (1, 2, 3, 5):
        assert text_too_deep(text, limit) == nested_too_deep(data, limit)
        assert text_too_deep(text.encode(), limit) == nested_too_deep(data, limit)
        assert not text_too_deep(inside, limit)


@pytest.mark.parametrize("escape", ["\\n", "\\/", "\\u005b", "\\\\", '\\"', "\\t"])
def test_an_escape_before_the_closing_quote_ends_nothing(escape: str) -> None:
    text = '["a' + escape + '", ' + nest(MAX_DEPTH) + "]"
    assert json.loads(text)  # valid JSON, one level over the limit
    assert text_too_deep(text) and text_too_deep(text.encode())


def test_size_limit() -> None:
    with pytest.raises(JsonLimitError, match="over the 10-byte limit"):
        loads_bounded(b'{"a": "0123456789"}', max_bytes=10)


@pytest.mark.parametrize("reply", [nest(5_000), "Verdict: {" + nest(3_000) + "}"])
def test_a_nested_reply_is_a_parse_error(reply: str) -> None:
    with pytest.raises(ParseError, match="nested more than"):
        parse_verdict(reply, FaithfulnessVerdict)


def test_the_raw_text_kept_is_capped() -> None:
    assert kept_raw("short") == "short"
    kept = kept_raw("[" * (MAX_RAW_CHARS * 3))
    assert kept is not None and kept.startswith("[" * MAX_RAW_CHARS)
    assert kept.endswith(f"[cut: {MAX_RAW_CHARS * 3} characters in all]")


def test_a_nested_cache_entry_is_a_miss() -> None:
    entry = '{"format": "llm-judge-verdict/2", "record": ' + nest(10_000) + "}"
    assert decode_entry(entry.encode(), "k", b"a-secret-of-16-chars") is None
