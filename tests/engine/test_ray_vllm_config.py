"""The in-cluster vLLM executor (judge.engines._vllm), without a GPU: the `ray.data.llm`
processor config (model, batch, engines), the sampling (the judge config's, with guided
decoding from the verdict's JSON schema), a preprocess that renders the exact messages the
endpoint path sends, and a postprocess that parses with the same parser into the same
record. Running it needs vLLM and a GPU: not here."""

from __future__ import annotations

import json
from typing import Any

import pytest

# ray[data] is in the dev extra: without it this module fails to import, it is never skipped
import ray.data.llm  # noqa: E402, F401

from judge.config import JudgeConfig
from judge.engine.grader import build_record
from judge.engine.identity import judge_id
from judge.engine.model import LLMJudge
from judge.engines._vllm import (  # noqa: E402 (after Ray: it needs Ray for the config)
    ENDPOINT,
    postprocess,
    preprocess,
    processor_config,
    record_of,
    sampling_params,
    vllm_identity,
)
from judge.rubric import load_rubric
from judge.schemas import Case
from tests.helpers import FAITHFUL_VERDICT, MockEndpoint, case, chat_reply

MODEL = "Qwen/Qwen2.5-0.5B-Instruct"


def judge_config(**overrides: Any) -> JudgeConfig:
    options: dict[str, Any] = {
        "model": MODEL,
        "base_url": "http://judge.test/v1",
        "api_key": "sk-test",
        "temperature": 0.2,
        "top_p": 0.9,
        "seed": 7,
        "max_tokens": 600,
        "output_mode": "json_schema",
    }
    return JudgeConfig(**{**options, **overrides})


def test_the_processor_config_names_the_judge_s_model_and_the_engines() -> None:
    from ray.data.llm import vLLMEngineProcessorConfig

    made = processor_config(
        judge_config(), concurrency=2, batch_size=32, engine_kwargs={"max_model_len": 4096}
    )
    assert isinstance(made, vLLMEngineProcessorConfig)
    assert (made.model_source, made.batch_size, made.concurrency) == (MODEL, 32, 2)
    assert made.engine_kwargs["max_model_len"] == 4096
    assert processor_config(judge_config(), model_source="/models/judge").model_source == (
        "/models/judge"
    )
    with pytest.raises(ValueError, match="needs a model"):
        processor_config(JudgeConfig())


def test_sampling_is_the_judge_config_s_with_guided_decoding_from_the_verdict_schema() -> None:
    rubric = load_rubric("faithfulness")
    params = sampling_params(judge_config(), rubric)
    assert params == {
        "temperature": 0.2,
        "top_p": 0.9,
        "seed": 7,
        "max_tokens": 600,
        "structured_outputs": {"json": rubric.json_schema()},
    }
    bare = sampling_params(judge_config(top_p=None, seed=None), rubric)
    assert "top_p" not in bare and "seed" not in bare


async def test_preprocess_renders_the_messages_and_schema_the_endpoint_path_sends() -> None:
    rubric, config = load_rubric("faithfulness"), judge_config()
    route = MockEndpoint(chat_reply(FAITHFUL_VERDICT))
    judge = LLMJudge(config, http_client=route.client())
    try:
        await judge.evaluate(rubric, Case.model_validate(case("c1")))
    finally:
        await judge.aclose()
    sent = route.sent(0)
    row = preprocess(case("c1"), rubric=rubric, config=config)
    assert row["messages"] == sent["messages"]
    schema = sent["response_format"]["json_schema"]["schema"]
    assert row["sampling_params"]["structured_outputs"] == {"json": schema}
    assert Case.model_validate_json(row["case"]) == Case.model_validate(case("c1"))


def test_a_row_by_another_tool_s_names_is_a_case_and_a_bad_row_names_its_id() -> None:
    rubric, config = load_rubric("faithfulness"), judge_config()
    ragas = {"id": "r1", "user_input": "q?", "retrieved_contexts": ["c"], "response": "a"}
    row = preprocess({**ragas, "reference": None}, rubric=rubric, config=config)
    assert Case.model_validate_json(row["case"]).answer == "a"
    from judge.errors import InputError

    with pytest.raises(InputError, match="bad1"):
        preprocess({"id": "bad1", "question": "q?"}, rubric=rubric, config=config)


def vllm_row(text: str, *, generated: int = 40) -> dict[str, Any]:
    return {
        "case": Case.model_validate(case("c1")).model_dump_json(),
        "generated_text": text,
        "num_input_tokens": 321,
        "num_generated_tokens": generated,
    }


def test_postprocess_parses_with_the_same_parser_into_the_same_record() -> None:
    rubric, config = load_rubric("faithfulness"), judge_config()
    columns = postprocess(vllm_row(json.dumps(FAITHFUL_VERDICT)), rubric=rubric, config=config)
    record = json.loads(columns["record"])
    assert (columns["id"], columns["status"], columns["judge_id"]) == (
        "c1",
        "ok",
        judge_id(vllm_identity(config)),
    )
    assert record["verdict"] == FAITHFUL_VERDICT and record["score"] == columns["score"] == 1.0
    assert record["usage"] == {"prompt_tokens": 321, "completion_tokens": 40}
    assert record["judge"]["model"] == MODEL and record["judge"]["output_mode"] == "json_schema"
    assert vllm_identity(config)["endpoint"] == ENDPOINT
    # the same verdict through the endpoint path's read_reply + build_record: the same fields
    from judge.client import Completion
    from judge.engine.model import read_reply
    from judge.schemas import Usage

    reply = Completion(
        json.dumps(FAITHFUL_VERDICT),
        "stop",
        None,
        MODEL,
        None,
        Usage(prompt_tokens=321, completion_tokens=40),
        "json_schema",
        0.0,
    )
    outcome, _ = read_reply(rubric, reply, config, case=Case.model_validate(case("c1")))
    assert outcome is not None
    expected = build_record(
        rubric, Case.model_validate(case("c1")), outcome, judge_id=record["judge_id"]
    )
    assert record.pop("graded_at") and expected.graded_at  # each stamped when it was made
    assert record == json.loads(expected.model_dump_json(exclude={"graded_at"}))


def test_a_bad_reply_stays_a_row_a_parse_error_with_the_raw_text() -> None:
    rubric, config = load_rubric("faithfulness"), judge_config()
    broken = record_of(vllm_row("the answer is fine"), rubric=rubric, config=config)
    assert broken.status == "parse_error" and broken.raw == "the answer is fine"
    assert broken.score is None and "not valid JSON" in (broken.error or "")
    cut = record_of(vllm_row('{"claims": [', generated=600), rubric=rubric, config=config)
    assert cut.status == "parse_error" and "truncated" in (cut.error or "")
