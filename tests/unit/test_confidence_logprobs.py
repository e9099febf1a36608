"""Issue 50: a verdict's confidence from the judge's token log-probabilities
(judge.engine.confidence), on hand-made `logprobs.content` payloads: normalisation over
the allowed labels, a label written in several tokens, a label missing from the
alternatives, a value that starts another (1 and 10), the JSON-mode and prompt-mode
layouts beside the strict schema's, and the kinds' choices for several verdicts a case."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.client import TokenLogprob, read_logprobs
from judge.engine.confidence import logprob_confidence, value_spans
from judge.rubric import Rubric, load_rubric, read_rubric_file

Alternatives = dict[str, float]


def tokens(*pieces: str | tuple[str, Alternatives]) -> list[TokenLogprob]:
    """Tokens from pieces: a bare text is a sure token (probability 1, no alternative); a
    (text, {alternative: probability}) pair takes the text's own probability from the
    alternatives (it is one of them, as a server's top_logprobs include it)."""
    out = []
    for piece in pieces:
        text, alternatives = (piece, {piece: 1.0}) if isinstance(piece, str) else piece
        top = tuple((t.encode(), math.log(p)) for t, p in alternatives.items())
        out.append(TokenLogprob(text.encode(), math.log(alternatives[text]), top))
    return out


def confidence(rubric: Rubric, reply: str, toks: list[TokenLogprob]) -> float | None:
    verdict = rubric.verdict_model().model_validate(json.loads(_json_of(reply)))
    label = rubric.behaviour.score(rubric, verdict).label
    return logprob_confidence(rubric, verdict, label, reply, toks)


def _json_of(reply: str) -> str:
    return reply[reply.index("{") : reply.rindex("}") + 1]


PAIRWISE = load_rubric("pairwise")
RELEVANCE = load_rubric("relevance")
FAITHFULNESS = load_rubric("faithfulness")


def pairwise_tokens(top: Alternatives, written: str = "A") -> list[TokenLogprob]:
    return tokens('{"', "rationale", '":"', "ok", '","', "winner", '":"', (written, top), '"}')


def test_one_token_label_is_the_softmax_over_the_allowed_labels() -> None:
    reply = '{"rationale":"ok","winner":"A"}'
    got = confidence(PAIRWISE, reply, pairwise_tokens({"A": 0.6, "B": 0.2, "tie": 0.1}))
    assert got == pytest.approx(0.6 / 0.9, abs=1e-6)


def test_alternatives_that_are_no_label_are_left_out_of_the_normalisation() -> None:
    reply = '{"rationale":"ok","winner":"A"}'
    alternatives = {"A": 0.5, "B": 0.25, "Answer": 0.2, " ": 0.05}
    # "Answer" could start no allowed label ("A" must be followed by the closing quote)
    assert confidence(PAIRWISE, reply, pairwise_tokens(alternatives)) == pytest.approx(0.5 / 0.75)


def test_a_label_missing_from_the_alternatives_has_no_share() -> None:
    reply = '{"rationale":"ok","winner":"A"}'
    assert confidence(PAIRWISE, reply, pairwise_tokens({"A": 0.7, "tie": 0.1})) == pytest.approx(
        0.7 / 0.8
    )


def test_the_written_token_counts_even_when_the_alternatives_leave_it_out() -> None:
    reply = '{"rationale":"ok","winner":"A"}'
    toks = pairwise_tokens({"A": 0.4})
    toks[7] = TokenLogprob(b"A", math.log(0.4), ((b"B", math.log(0.3)),))
    assert confidence(PAIRWISE, reply, toks) == pytest.approx(0.4 / 0.7)


def test_a_label_over_several_tokens_is_decided_where_the_labels_part() -> None:
    """`not_enough_information` as `not`, `_enough`, `_information`: its first token
    parts it from `supported` and `contradicted`; the later ones decide nothing more."""
    reply = '{"claims":[{"claim":"x","verdict":"not_enough_information","evidence":""}]}'
    toks = tokens(
        '{"claims":[{"claim":"x","verdict":"',
        ("not", {"not": 0.5, "supported": 0.3, "contr": 0.1, "no": 0.1}),
        ("_enough", {"_enough": 0.9, "_en": 0.1}),
        "_information",
        '","evidence":""}]}',
    )
    # "no" could start not_enough_information too: it counts for it (the text fits)
    got = confidence(FAITHFULNESS, reply, toks)
    p_supported = 0.3 / 1.0
    assert got == pytest.approx(1 - p_supported)  # unfaithful: 1 - P(every claim supported)


def test_a_token_that_opens_the_value_with_its_quote() -> None:
    """A tokenizer that writes `"B` as one token (the quote belongs to the value)."""
    reply = '{"rationale": "ok", "winner": "B"}'
    toks = tokens(
        '{"', "rationale", '":', ' "', "ok", '",', ' "', "winner", '":',
        (' "B', {' "B': 0.45, ' "A': 0.45, ' "t': 0.05, ' "': 0.05}),
        '"}',
    )  # fmt: skip
    # ' "' alone fits every label, the one written among them: like any candidate that
    # fits what was written, its mass stays on the written path (decided later, if at all)
    got = confidence(PAIRWISE, reply, toks)
    assert got == pytest.approx(0.45 + 0.05, abs=1e-6)


def test_a_number_that_starts_another_is_decided_by_what_follows_it(tmp_path: Path) -> None:
    """On a 0-10 scale `1` is the start of `10`: the token after `1` decides."""
    rubric = _scale_rubric(tmp_path, 0, 10)
    reply = '{"rationale":"ok","score":1}'
    toks = tokens(
        '{"rationale":"ok","score":',
        ("1", {"1": 0.6, "2": 0.4}),
        ("}", {"}": 0.5, "0": 0.5}),
    )
    # P(1) = 0.6 * 0.5 (the "1" then an end), P(10) = 0.6 * 0.5, P(2) = 0.4
    assert confidence(rubric, reply, toks) == pytest.approx(0.3)
    reply10 = '{"rationale":"ok","score":10}'
    toks10 = tokens(
        '{"rationale":"ok","score":',
        ("1", {"1": 0.6, "2": 0.4}),
        ("0", {"}": 0.5, "0": 0.5}),
        "}",
    )
    assert confidence(rubric, reply10, toks10) == pytest.approx(0.3)


def rubric_file(folder: Path, data: dict[str, Any]) -> Rubric:
    """A user rubric written to `folder/<id>/v1.yaml` and read back."""
    path = folder / data["id"] / "v1.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump({"title": data["id"], **data}), "utf-8")
    return read_rubric_file(path)


def _scale_rubric(folder: Path, low: int, high: int) -> Rubric:
    return rubric_file(
        folder,
        {
            "id": "tone",
            "version": 1,
            "kind": "scale",
            "inputs": ["question", "answer"],
            "scale": {"min": low, "max": high},
            "system": "Rate the tone.",
        },
    )


STRICT = '{"rationale":"Answers it.","abstained":false,"score":4}'
JSON_MODE = '{\n  "rationale": "Answers it.",\n  "abstained": false,\n  "score": 4\n}'
PROMPT_MODE = 'Here is my verdict.\n```json\n{"rationale": "Answers it.", "abstained": false, "score": 4}\n```'


@pytest.mark.parametrize(
    "reply", [STRICT, JSON_MODE, PROMPT_MODE], ids=["strict", "json", "prompt"]
)
def test_the_layout_of_the_json_does_not_change_the_confidence(reply: str) -> None:
    head, tail = reply.split("4", 1)
    toks = tokens(head, ("4", {"4": 0.5, "5": 0.3, "3": 0.1, " ": 0.1}), tail)
    assert confidence(RELEVANCE, reply, toks) == pytest.approx(0.5 / 0.9)


def test_tokens_that_do_not_spell_the_reply_give_no_confidence() -> None:
    reply = '{"rationale":"ok","winner":"A"}'
    toks = pairwise_tokens({"A": 0.9, "B": 0.1})[:-1]  # the closing '"}' missing
    assert confidence(PAIRWISE, reply, toks) is None


def test_no_tokens_or_a_kind_without_a_label_site_give_none() -> None:
    reply = '{"rationale":"ok","winner":"A"}'
    assert confidence(PAIRWISE, reply, []) is None
    correctness = load_rubric("correctness")
    assert correctness.behaviour.label_sites(correctness, _any_verdict(correctness)) == []


def _any_verdict(rubric: Rubric) -> Any:
    from judge.kinds._simulate import schema_instance

    data = schema_instance(rubric.json_schema(), b"\0" * 32)
    return rubric.verdict_model().model_validate(data)


def claims_reply(*verdicts: str) -> tuple[str, list[str | tuple[str, Alternatives]]]:
    parts: list[str | tuple[str, Alternatives]] = ['{"claims":[']
    texts = []
    for i, verdict in enumerate(verdicts):
        parts.append('{"claim":"c' + str(i) + '","verdict":"')
        probabilities = {"supported": 0.8, "contradicted": 0.1, "not": 0.1}
        if verdict != "supported":
            probabilities = {"supported": 0.3, verdict: 0.7}
        parts.append((verdict, probabilities))
        parts.append('","evidence":""}' + ("," if i < len(verdicts) - 1 else ""))
        texts.append('{"claim":"c' + str(i) + '","verdict":"' + verdict + '","evidence":""}')
    parts.append("]}")
    return '{"claims":[' + ",".join(texts) + "]}", parts


def test_faithfulness_multiplies_the_claims_into_the_probability_of_its_label() -> None:
    """faithful: P(every claim supported) = prod p_i; unfaithful: 1 - that product."""
    reply, parts = claims_reply("supported", "supported")
    assert confidence(FAITHFULNESS, reply, tokens(*parts)) == pytest.approx(0.8 * 0.8)
    reply, parts = claims_reply("supported", "contradicted")
    assert confidence(FAITHFULNESS, reply, tokens(*parts)) == pytest.approx(1 - 0.8 * 0.3)


def test_criteria_multiply_each_criterion_s_probability(tmp_path: Path) -> None:
    rubric = rubric_file(
        tmp_path,
        {
            "id": "rag-triad",
            "version": 1,
            "kind": "criteria",
            "inputs": ["question", "answer"],
            "criteria": [
                {"name": "clarity", "scale": {"min": 1, "max": 3}},
                {"name": "harm", "type": "boolean", "penalty": True},
            ],
            "system": "Judge it.",
        },
    )
    reply = '{"clarity":{"rationale":"r","score":3},"harm":{"rationale":"r","value":false}}'
    toks = tokens(
        '{"clarity":{"rationale":"r","score":',
        ("3", {"3": 0.6, "2": 0.4}),
        '},"harm":{"rationale":"r","value":',
        ("false", {"false": 0.9, "true": 0.1}),
        "}}",
    )
    assert confidence(rubric, reply, toks) == pytest.approx(0.6 * 0.9)


def test_value_spans_find_nested_values_and_skip_prose() -> None:
    text = 'Sure {not json} then {"a": [1, {"b": "x\\"y"}], "c": true}'
    spans = value_spans(text, [("a", 1, "b"), ("c",)])
    assert spans is not None
    start, end = spans[("a", 1, "b")]
    assert text[start:end] == '"x\\"y"'
    assert text[slice(*spans[("c",)])] == "true"
    assert value_spans(text, [("missing",)]) is None


def test_read_logprobs_takes_the_openai_shape_and_bytes() -> None:
    choice = {
        "logprobs": {
            "content": [
                {"token": "é", "logprob": -0.1, "bytes": [195], "top_logprobs": []},
                {"token": "?", "logprob": -0.2, "bytes": [169],
                 "top_logprobs": [{"token": "x", "logprob": -3.0, "bytes": None}]},
            ]
        }
    }  # fmt: skip
    read = read_logprobs(choice)
    assert read is not None
    assert b"".join(t.text for t in read) == "é".encode()
    assert read[1].top == ((b"x", -3.0),)
    assert read_logprobs({"logprobs": None}) is None
    assert read_logprobs({"logprobs": {"content": [{"token": 3}]}}) is None
