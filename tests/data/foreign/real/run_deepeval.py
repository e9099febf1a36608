"""Writes deepeval/ here: a real DeepEval test run (deepeval 4.3.1, see SOURCE.md).

Run from the repository root, in a scratch environment that has DeepEval and nothing of
this project (`python -m venv /tmp/de && /tmp/de/bin/pip install deepeval==4.3.1`):

    DEEPEVAL_TELEMETRY_OPT_OUT=YES DEEPEVAL_NO_INSPECT_PROMPT=1 \\
        /tmp/de/bin/python tests/data/foreign/real/run_deepeval.py

`evaluate()` grades the cases of mock_judge.cases() with FaithfulnessMetric and
AnswerRelevancyMetric; the judge model is a custom `DeepEvalBaseLLM` that answers each of
the metrics' structured prompts from mock_judge (nothing leaves the machine). DeepEval
writes the test run into `results_folder` (test_run_<timestamp>.json, renamed here to
test_run.json), and leaves `.deepeval/.latest_test_run.json` in the working folder (a
temporary one here), copied as latest_test_run.json; `equivalent.csv` is written from the `EvaluationResult` that `evaluate()`
returns (DeepEval's Python objects, not the file), the reference a reader must match.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from deepeval import evaluate
from deepeval.evaluate.configs import AsyncConfig, DisplayConfig
from deepeval.metrics import AnswerRelevancyMetric, FaithfulnessMetric
from deepeval.models import DeepEvalBaseLLM
from deepeval.test_case import LLMTestCase

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mock_judge  # noqa: E402

CASES = mock_judge.cases()


class MockJudge(DeepEvalBaseLLM):
    """Answers DeepEval's faithfulness and answer-relevancy prompts from mock_judge."""

    def __init__(self) -> None:
        super().__init__("mock-judge-1")

    def load_model(self):  # type: ignore[no-untyped-def]
        return self

    def get_model_name(self) -> str:
        return "mock-judge-1"

    def generate(self, prompt: str, schema=None):  # type: ignore[no-untyped-def]
        name = f"{schema.__module__.rsplit('.', 2)[-2]}.{schema.__name__}" if schema else ""
        if name.endswith("ScoreReason"):
            return schema(reason="The score follows from the verdicts.")
        case = mock_judge.case_in(prompt, CASES)
        claims = mock_judge.sentences(case["answer"])
        if name == "faithfulness.Truths":
            return schema(truths=[s for c in case["contexts"] for s in mock_judge.sentences(c)])
        if name == "faithfulness.Claims":
            return schema(claims=claims)
        if name == "faithfulness.Verdicts":
            verdicts = [
                {"verdict": "yes"} if ok else
                {"verdict": "no", "reason": "The retrieval context does not say this."}
                for ok in mock_judge.verdicts(case)
            ]  # fmt: skip
            return schema(verdicts=verdicts)
        if name == "answer_relevancy.Statements":
            return schema(statements=claims)
        if name == "answer_relevancy.Verdicts":
            question = set(re.findall(r"[a-z]{4,}", case["question"].lower()))
            verdicts = [
                {"verdict": "yes"} if question & set(re.findall(r"[a-z]{4,}", s.lower())) else
                {"verdict": "no", "reason": "This statement does not address the input."}
                for s in claims
            ]  # fmt: skip
            return schema(verdicts=verdicts)
        raise ValueError(f"no answer for schema {name!r}")

    async def a_generate(self, prompt: str, schema=None):  # type: ignore[no-untyped-def]
        return self.generate(prompt, schema)


def main() -> None:
    os.chdir(tempfile.mkdtemp(prefix="deepeval-"))  # DeepEval's .deepeval/ goes there
    out = HERE / "deepeval"
    shutil.rmtree(out, ignore_errors=True)
    judge = MockJudge()
    test_cases = [
        LLMTestCase(
            name=case["id"],
            input=case["question"],
            actual_output=case["answer"],
            retrieval_context=case["contexts"],
        )
        for case in CASES
    ]
    metrics = [FaithfulnessMetric(model=judge), AnswerRelevancyMetric(model=judge)]
    result = evaluate(
        test_cases,
        metrics,
        async_config=AsyncConfig(run_async=False),
        display_config=DisplayConfig(
            print_results=False, show_indicator=False, results_folder=str(out),
            inspect_after_run=False,
        ),
    )  # fmt: skip
    (written,) = out.glob("test_run_*.json")
    written.rename(out / "test_run.json")
    (out / ".test_run.lock").unlink(missing_ok=True)
    # the test run `deepeval test run` and evaluate() also leave in the working folder
    shutil.copy(Path(".deepeval/.latest_test_run.json"), out / "latest_test_run.json")
    with (out / "equivalent.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "metric", "label", "score"])
        for test in result.test_results:
            for data in test.metrics_data or []:
                label = "pass" if data.success else "fail"
                writer.writerow([test.name, data.name, label, data.score])


if __name__ == "__main__":
    main()
