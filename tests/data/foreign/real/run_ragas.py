"""Writes ragas/ here: a real Ragas result CSV (ragas 0.4.3, see SOURCE.md).

Run from the repository root, in a scratch environment that has Ragas and nothing of this
project (`python -m venv /tmp/rg && /tmp/rg/bin/pip install ragas==0.4.3`):

    RAGAS_DO_NOT_TRACK=true /tmp/rg/bin/python tests/data/foreign/real/run_ragas.py

`evaluate()` grades the cases of mock_judge.cases() with Ragas' `Faithfulness` metric; its
LLM is a custom `BaseRagasLLM` that answers the metric's two prompts (statements of the
answer; a 0/1 verdict a statement against the context) from mock_judge (nothing leaves the
machine). The result is written as the Ragas docs show,
`result.to_pandas().to_csv("result.csv", index=False)`; `equivalent.csv` is written from
`result.scores` (Ragas' own per-row scores, not the CSV) with the case ids.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

from langchain_core.outputs import Generation, LLMResult
from ragas import EvaluationDataset, evaluate
from ragas.llms.base import BaseRagasLLM
from ragas.metrics import Faithfulness

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mock_judge  # noqa: E402

CASES = mock_judge.cases()


class MockJudge(BaseRagasLLM):
    """Answers Faithfulness' statement and verdict prompts from mock_judge: the JSON after
    the prompt's last `input: ` (the examples' are `Input: `) is this case's input."""

    def _answer(self, prompt) -> LLMResult:  # type: ignore[no-untyped-def]
        text = prompt.to_string()
        block = text[text.rindex("\ninput: ") + len("\ninput: ") :]
        data, _ = json.JSONDecoder().raw_decode(block)
        if "answer" in data:
            out = {"statements": mock_judge.sentences(data["answer"])}
        else:
            out = {
                "statements": [
                    {"statement": s, "reason": "Checked against the context.",
                     "verdict": int(mock_judge.supported(s, [data["context"]]))}
                    for s in data["statements"]
                ]
            }  # fmt: skip
        return LLMResult(generations=[[Generation(text=json.dumps(out))]])

    def generate_text(self, prompt, n=1, temperature=0.01, stop=None, callbacks=None):  # type: ignore[no-untyped-def]
        return self._answer(prompt)

    async def agenerate_text(self, prompt, n=1, temperature=0.01, stop=None, callbacks=None):  # type: ignore[no-untyped-def]
        return self._answer(prompt)

    def is_finished(self, response: LLMResult) -> bool:
        return True


def main() -> None:
    out = HERE / "ragas"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    dataset = EvaluationDataset.from_list(
        [
            {"user_input": c["question"], "retrieved_contexts": c["contexts"],
             "response": c["answer"]}
            for c in CASES
        ]
    )  # fmt: skip
    result = evaluate(dataset, metrics=[Faithfulness()], llm=MockJudge(), show_progress=False)
    result.to_pandas().to_csv(out / "result.csv", index=False)
    with (out / "equivalent.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "row", "faithfulness"])
        for number, (case, scores) in enumerate(zip(CASES, result.scores, strict=True), 1):
            writer.writerow([case["id"], number, scores["faithfulness"]])


if __name__ == "__main__":
    main()
