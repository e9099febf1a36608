"""The in-cluster executor: `ray.data.llm`'s vLLM processor, with the grader's own prompt
and parser on either side of it.

`preprocess` renders a case exactly as the endpoint path does (`PreparedRubric.render` in
the `json_schema` output mode: the same system and user messages) and asks vLLM for
guided decoding from the rubric's verdict JSON schema (`structured_outputs={"json":
schema}`, vLLM's `StructuredOutputsParams`), sampling from the judge config
(temperature, top_p, seed, max_tokens). `postprocess` turns vLLM's text into a
`Completion` and reads it with `read_reply`, the parser the online and batch paths share,
then `build_record`: the same record, parse errors kept with the raw text. There is no
repair round-trip (as in a batch), a reply of `max_tokens` tokens counts as truncated
(vLLM's row carries no finish reason) and `latency_ms` is 0. The judge's identity names
the engine (`endpoint` `ray.data.llm:vllm`), so a records file graded through an endpoint
is not resumed by this executor or the other way round.

The processor config needs only Ray Data; building the processor needs `transformers` (Ray
reads the model's tokenizer config) and running it vLLM and GPUs on the cluster.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from judge.client import Completion
from judge.config import JudgeConfig
from judge.engine.grader import build_record
from judge.engine.identity import judge_id as hash_identity
from judge.engine.model import PreparedRubric, model_identity, read_reply
from judge.engines._batches import CASE_COLUMN, RowForm, row_case
from judge.rubric import Rubric
from judge.schemas import Case, GradedRecord, Usage

OUTPUT_MODE = "json_schema"  # guided decoding: the schema is enforced, as in json_schema mode
ENDPOINT = "ray.data.llm:vllm"


def vllm_identity(config: JudgeConfig) -> dict[str, Any]:
    """The judge identity of a vLLM run (judge.engine.identity): the model, its sampling
    and the engine in place of an endpoint."""
    return {**model_identity(config), "endpoint": ENDPOINT, "output_mode": OUTPUT_MODE}


def sampling_params(config: JudgeConfig, rubric: Rubric) -> dict[str, Any]:
    """vLLM's `SamplingParams` for one request: the judge config's sampling and the guided
    decoding of the rubric's verdict schema."""
    params: dict[str, Any] = {
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "structured_outputs": {"json": rubric.json_schema()},
    }
    if config.top_p is not None:
        params["top_p"] = config.top_p
    if config.seed is not None:
        params["seed"] = config.seed
    return params


def preprocess(
    row: dict[str, Any], *, rubric: Rubric, config: JudgeConfig, form: RowForm = "fields"
) -> dict[str, Any]:
    """A dataset row -> vLLM's request columns, the case kept (as JSON) for `postprocess`."""
    case = row_case(row, rubric, form)
    return {
        CASE_COLUMN: case.model_dump_json(),
        "messages": PreparedRubric(rubric).render(case, OUTPUT_MODE),
        "sampling_params": sampling_params(config, rubric),
    }


def completion_of(row: dict[str, Any], config: JudgeConfig) -> Completion:
    """vLLM's output row as the client's `Completion` (what `read_reply` reads)."""
    generated = int(row.get("num_generated_tokens") or 0)
    return Completion(
        text=str(row.get("generated_text") or ""),
        finish_reason="length" if generated >= config.max_tokens else "stop",
        refusal=None,
        model=config.model or "",
        system_fingerprint=None,
        usage=Usage(
            prompt_tokens=int(row.get("num_input_tokens") or 0), completion_tokens=generated
        ),
        output_mode=OUTPUT_MODE,
        latency_ms=0.0,
    )


def record_of(row: dict[str, Any], *, rubric: Rubric, config: JudgeConfig) -> GradedRecord:
    """The graded record of one vLLM output row."""
    case = Case.model_validate_json(row[CASE_COLUMN])
    outcome, _ = read_reply(rubric, completion_of(row, config), config, case=case)
    assert outcome is not None  # no repair is offered: a bad verdict is a parse_error
    return build_record(rubric, case, outcome, judge_id=hash_identity(vllm_identity(config)))


def postprocess(row: dict[str, Any], *, rubric: Rubric, config: JudgeConfig) -> dict[str, Any]:
    """vLLM's output row -> the record columns `grade_dataset` gives."""
    record = record_of(row, rubric=rubric, config=config)
    return {
        "id": record.id,
        "rubric": record.rubric,
        "status": record.status,
        "score": record.score,
        "label": record.label,
        "judge_id": record.judge_id,
        "record": record.model_dump_json(),
    }


def processor_config(
    config: JudgeConfig,
    *,
    model_source: str | None = None,
    concurrency: int = 1,
    batch_size: int = 64,
    engine_kwargs: dict[str, Any] | None = None,
) -> Any:
    """`ray.data.llm.vLLMEngineProcessorConfig` for the judge: its model (`model_source`, a
    Hugging Face id or a local folder, defaults to the config's `model`), `concurrency`
    vLLM engine replicas, `batch_size` rows a batch; `engine_kwargs` go to vLLM."""
    from ray.data.llm import vLLMEngineProcessorConfig

    source = model_source or config.model
    if not source:
        raise ValueError("the vLLM executor needs a model: --model or model_source")
    return vLLMEngineProcessorConfig(
        model_source=source,
        engine_kwargs=dict(engine_kwargs or {}),
        concurrency=concurrency,
        batch_size=batch_size,
    )


def build_vllm_processor(
    config: JudgeConfig, rubric: Rubric, *, form: RowForm = "fields", **options: Any
) -> Any:
    """A `ray.data.llm` processor: `processor(ds)` is a dataset of record columns (see
    `postprocess`). `options` go to `processor_config`."""
    from ray.data.llm import build_processor

    return build_processor(
        processor_config(config, **options),
        preprocess=partial(preprocess, rubric=rubric, config=config, form=form),
        postprocess=partial(postprocess, rubric=rubric, config=config),
    )
