"""Issue 50: `judge grade` through the loopback test server writes a confidence on every
model verdict: from logprobs (deterministic per case, the same from the cache), from
votes with `--samples K`, none from the rules judge, and a run against a server that
refuses logprobs goes on without them and says so once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.testing import FakeOpenAIServer
from judge.testing.server import ChatRequest, default_verdict
from tests.helpers import case, read_jsonl, write_jsonl

MODEL = "judge-test-2024-01-01"
ANSWERS = [
    "The free trial lasts 14 days from sign-up.",
    "The free trial lasts 40 days.",
    "You can cancel any time. The trial lasts 14 days.",
    "The moon is made of cheese.",
    "The trial lasts 14 days. It costs 9 dollars a month.",
    "Cancel any time.",
]


def cases(tmp_path: Path) -> Path:
    rows = [case(f"c{i}", answer=answer) for i, answer in enumerate(ANSWERS)]
    return write_jsonl(tmp_path / "in.jsonl", rows)


def grade(server: FakeOpenAIServer, source: Path, out: Path, *extra: str) -> int:
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-x", "JUDGE_MODEL": MODEL}
    args = ["grade", str(source), "--rubric", "faithfulness", "-o", str(out), *extra]
    return main(args, env=env)


def test_records_carry_a_logprobs_confidence_the_cache_keeps(tmp_path: Path) -> None:
    source, cache = cases(tmp_path), tmp_path / "cache"
    with FakeOpenAIServer() as server:
        assert grade(server, source, tmp_path / "a.jsonl", "--cache-dir", str(cache)) == 0
        sent = server.stats.bodies[0]
        assert sent["logprobs"] is True and sent["top_logprobs"] == 10
        assert grade(server, source, tmp_path / "b.jsonl", "--cache-dir", str(cache)) == 0
        assert server.stats.requests == len(ANSWERS)  # the second run came from the cache
    first, again = read_jsonl(tmp_path / "a.jsonl"), read_jsonl(tmp_path / "b.jsonl")
    confidences = [r["confidence"] for r in first]
    assert all(r["confidence_source"] == "logprobs" for r in first)
    assert all(0.0 < c <= 1.0 for c in confidences)
    assert len(set(confidences)) == len(ANSWERS)  # different cases, different confidences
    assert [(r["cached"], r["confidence"]) for r in again] == [(True, c) for c in confidences]


def test_the_rules_judge_writes_no_confidence(tmp_path: Path) -> None:
    out = tmp_path / "rules.jsonl"
    assert main(["grade", str(cases(tmp_path)), "--rubric", "faithfulness", "-o", str(out)]) == 0
    assert all("confidence" not in r and "confidence_source" not in r for r in read_jsonl(out))


@pytest.mark.parametrize("refusal", ["refuse", "omit"])
def test_a_server_without_logprobs_is_said_once_and_the_run_goes_on(
    tmp_path: Path, refusal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    with FakeOpenAIServer(logprobs=refusal) as server:
        assert grade(server, cases(tmp_path), out, "--no-cache", "--concurrency", "1") == 0
        asked = [bool(body.get("logprobs")) for body in server.stats.bodies]
    records = read_jsonl(out)
    assert [r["status"] for r in records] == ["ok"] * len(ANSWERS)
    assert all("confidence" not in r for r in records)
    # a refused request is not answered (nor counted); the other kind answers the first one
    # without logprobs: either way they are never asked again
    assert len(asked) == len(ANSWERS)
    assert asked.count(True) == (1 if refusal == "omit" else 0)
    said = [line for line in capsys.readouterr().err.splitlines() if "logprobs" in line]
    assert len(said) == 1, said


def seeded_winner(chat: ChatRequest) -> dict[str, Any]:
    """The default verdict, but seeds 1 and 2 (of 0..4) say the other answer wins."""
    verdict = default_verdict(chat)
    if chat.body.get("seed") in (1, 2):
        verdict["winner"] = "B" if verdict["winner"] == "A" else "A"
    return verdict


def test_samples_vote_and_the_share_agreeing_is_the_confidence(tmp_path: Path) -> None:
    rows = [
        {"id": "p1", "question": "How long is the trial?", "answer_a": "14 days.", "answer_b": "?"}
    ]
    source, out = write_jsonl(tmp_path / "pairs.jsonl", rows), tmp_path / "out.jsonl"
    env = {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": "sk-x", "JUDGE_MODEL": MODEL}
    with FakeOpenAIServer(responder=seeded_winner) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        args = ["grade", str(source), "--rubric", "pairwise", "-o", str(out), "--no-cache"]
        assert main([*args, "--samples", "5", "--seed", "0"], env=env) == 0
        seeds = sorted(body["seed"] for body in server.stats.bodies)
        billed = server.stats.prompt_tokens
    (record,) = read_jsonl(out)
    assert seeds == [0, 1, 2, 3, 4]
    assert (record["confidence"], record["confidence_source"]) == (0.6, "votes")
    assert record["usage"]["prompt_tokens"] == billed  # all five replies counted


def test_samples_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "JUDGE_MODEL": MODEL}
    args = ["grade", str(cases(tmp_path)), "--rubric", "faithfulness", "--samples", "0"]
    assert main(args, env=env) == 2


def test_a_jury_record_carries_the_share_of_jurors_agreeing(tmp_path: Path) -> None:
    rows = [case("c1", answer=ANSWERS[0])]  # faithful, but for the third juror
    source, out = write_jsonl(tmp_path / "in.jsonl", rows), tmp_path / "panel"
    with (
        FakeOpenAIServer(model="a-2024-01-01") as one,
        FakeOpenAIServer(model="b-2024-01-01") as two,
        FakeOpenAIServer(model="c-2024-01-01", responder=_all_contradicted) as three,
    ):
        jurors = [
            {"name": name, "model": server.model, "base_url": server.base_url}
            for name, server in (("one", one), ("two", two), ("three", three))
        ]
        jury = tmp_path / "jury.yaml"
        jury.write_text(json.dumps({"jurors": jurors}), "utf-8")
        args = ["grade", str(source), "--rubric", "faithfulness", "--jury", str(jury)]
        env = {"OPENAI_API_KEY": "sk-x"}
        assert main([*args, "-o", str(out), "--no-cache"], env=env) == 0
    (record,) = read_jsonl(out / "faithfulness.jsonl")
    assert record["label"] == "faithful"
    (juror,) = read_jsonl(out / "jurors" / "one.jsonl")
    assert juror["confidence_source"] == "logprobs"
    assert (record["confidence"], record["confidence_source"]) == (
        pytest.approx(2 / 3, abs=1e-6),
        "votes",
    )


def _all_contradicted(chat: ChatRequest) -> dict[str, Any]:
    verdict = default_verdict(chat)
    for claim in verdict["claims"]:
        claim["verdict"] = "contradicted"
    return verdict


def tone_rubric(folder: Path, scale: int) -> Path:
    """A user `labels` rubric that asks the judge for its confidence (0..scale)."""
    path = folder / "rubrics" / "tone" / "v1.yaml"
    path.parent.mkdir(parents=True)
    rubric = {
        "id": "tone",
        "version": 1,
        "kind": "labels",
        "title": "Tone",
        "inputs": ["question", "answer"],
        "labels": [
            {"name": "polite", "description": "Courteous", "score": 1.0},
            {"name": "rude", "description": "Dismissive", "score": 0.0},
        ],
        "confidence_scale": scale,
        "system": "Judge the answer's tone.",
    }
    path.write_text(json.dumps(rubric), "utf-8")
    return path.parent.parent


@pytest.mark.parametrize(("scale", "stated"), [(1, 0.5), (100, 0.005)])
def test_a_rubric_that_asks_for_a_confidence_gives_a_verbal_one(
    tmp_path: Path, scale: int, stated: float
) -> None:
    """The test server fills a number field with 0.5 (`schema_instance`): read on the
    rubric's scale. Where logprobs are given, they are the confidence instead."""
    rubrics = tone_rubric(tmp_path, scale)
    source = cases(tmp_path)
    for logprobs, expected in (("omit", (stated, "verbal")), ("serve", None)):
        out = tmp_path / f"{logprobs}.jsonl"
        with FakeOpenAIServer(logprobs=logprobs) as server:
            assert grade_tone(server, source, out, rubrics) == 0
            sent_schema = server.stats.bodies[0]["response_format"]["json_schema"]["schema"]
        records = read_jsonl(out)
        assert sent_schema["properties"]["confidence"]["anyOf"][0]["maximum"] == scale
        if expected is not None:
            assert {(r["confidence"], r["confidence_source"]) for r in records} == {expected}
        else:
            assert {r["confidence_source"] for r in records} == {"logprobs"}


def grade_tone(server: FakeOpenAIServer, source: Path, out: Path, rubrics: Path) -> int:
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-x", "JUDGE_MODEL": MODEL}
    args = ["grade", str(source), "--rubric", "tone", "--rubrics-dir", str(rubrics)]
    return main([*args, "-o", str(out), "--no-cache", "--concurrency", "1"], env=env)


def test_samples_with_a_batch_file_is_a_usage_error(tmp_path: Path) -> None:
    """A batch file holds one request a case: votes need online grading (exit 2)."""
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "JUDGE_MODEL": MODEL}
    requests = tmp_path / "requests.jsonl"
    args = ["grade", str(cases(tmp_path)), "--rubric", "faithfulness", "--samples", "3"]
    assert main([*args, "--export-batch", str(requests)], env=env) == 2
    assert not requests.exists()
